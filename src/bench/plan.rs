//! Flags to validated plans for `bench`, `soak` and `smoke`. Endpoint, key and client flags go
//! through the same helpers as `compare`; every error names its flag.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::{Map, Value};

use super::baseline::Baseline;
use super::log::{BENCH_JSON, SOAK_RECORDS};
use super::sizes::token_count;
use super::traffic::Kind;
use crate::cli::{BenchArgs, EndpointArgs, SmokeArgs, SoakArgs};
use crate::endpoint::ClientOptions;
use crate::run::folder::new_run_dir;
use crate::run::plan::{client_options, endpoint_specs, parse_params, with_keys};
use crate::run::PlannedEndpoint;

#[derive(Debug)]
pub struct BenchPlan {
    pub endpoint: PlannedEndpoint,
    pub client: ClientOptions,
    pub warmup: u32,
    pub runs: u32,
    pub max_tokens: u32,
    pub concurrency: Vec<usize>,
    pub rounds: u32,
    pub prefill: Vec<u64>,
    pub prefill_runs: u32,
    pub metrics_url: Option<String>,
    pub baseline: Option<Baseline>,
    pub params: Map<String, Value>,
    pub dir: PathBuf,
    pub json: bool,
    pub quiet: bool,
}

#[derive(Debug)]
pub struct SoakPlan {
    pub endpoint: PlannedEndpoint,
    pub client: ClientOptions,
    pub duration: Duration,
    pub concurrency: usize,
    pub kinds: Vec<Kind>,
    pub long_context: u64,
    pub params: Map<String, Value>,
    pub dir: PathBuf,
    pub json: bool,
    pub quiet: bool,
}

#[derive(Debug)]
pub struct SmokePlan {
    pub endpoints: Vec<PlannedEndpoint>,
    pub client: ClientOptions,
    pub max_tokens: u32,
    pub json: bool,
}

pub fn plan_bench(args: &BenchArgs) -> anyhow::Result<BenchPlan> {
    let endpoint = single_endpoint(&args.endpoints, "bench")?;
    at_least_one("--max-tokens", args.max_tokens as u64)?;
    at_least_one("--rounds", args.rounds as u64)?;
    at_least_one("--prefill-runs", args.prefill_runs as u64)?;
    let concurrency = parse_list("--concurrency", &args.concurrency, |s| {
        s.parse::<usize>().ok().filter(|n| *n > 0)
    })?;
    let prefill = parse_list("--prefill", &args.prefill, token_count)?;
    if args.runs == 0 && concurrency.is_empty() && prefill.is_empty() {
        bail!("--runs 0, --concurrency none and --prefill none: nothing left to measure");
    }
    if let Some(url) = &args.metrics_url {
        check_url("--metrics-url", url)?;
    }
    let baseline = args
        .baseline
        .as_deref()
        .map(|p| Baseline::load(p).with_context(|| format!("--baseline {}", p.display())))
        .transpose()?;
    let dir = out_dir(
        args.out.as_deref(),
        "bench",
        &endpoint.spec.name,
        BENCH_JSON,
    )?;
    Ok(BenchPlan {
        client: client_options(&args.client)?,
        warmup: args.warmup,
        runs: args.runs,
        max_tokens: args.max_tokens,
        concurrency,
        rounds: args.rounds,
        prefill,
        prefill_runs: args.prefill_runs,
        metrics_url: args.metrics_url.clone(),
        baseline,
        params: parse_params(&args.params, Map::new())?,
        dir,
        json: args.json,
        quiet: args.quiet,
        endpoint,
    })
}

pub fn plan_soak(args: &SoakArgs) -> anyhow::Result<SoakPlan> {
    let endpoint = single_endpoint(&args.endpoints, "soak")?;
    at_least_one("--concurrency", args.concurrency as u64)?;
    let duration = parse_duration(&args.duration)
        .with_context(|| format!("--duration `{}`", args.duration))?;
    let kinds = parse_list("--kinds", &args.kinds, Kind::parse)?;
    if kinds.is_empty() {
        bail!("--kinds: name at least one of {}", Kind::names());
    }
    let long_context = token_count(&args.long_context).with_context(|| {
        format!(
            "--long-context `{}`: expected a size like 4k",
            args.long_context
        )
    })?;
    let dir = out_dir(
        args.out.as_deref(),
        "soak",
        &endpoint.spec.name,
        SOAK_RECORDS,
    )?;
    Ok(SoakPlan {
        client: client_options(&args.client)?,
        duration,
        concurrency: args.concurrency,
        kinds,
        long_context,
        params: parse_params(&args.params, Map::new())?,
        dir,
        json: args.json,
        quiet: args.quiet,
        endpoint,
    })
}

pub fn plan_smoke(args: &SmokeArgs) -> anyhow::Result<SmokePlan> {
    at_least_one("--max-tokens", args.max_tokens as u64)?;
    let specs = endpoint_specs(&args.endpoints, Vec::new())?;
    if specs.is_empty() {
        bail!("--endpoint: give at least one NAME=URL");
    }
    Ok(SmokePlan {
        endpoints: with_keys(specs)?,
        client: client_options(&args.client)?,
        max_tokens: args.max_tokens,
        json: args.json,
    })
}

/// `--report DIR` of `soak` re-renders; it must not be mixed with flags that send traffic.
pub fn check_report_only(args: &SoakArgs) -> anyhow::Result<()> {
    if !args.endpoints.endpoints.is_empty() {
        bail!("--report re-renders a finished soak and sends nothing; drop --endpoint");
    }
    Ok(())
}

fn single_endpoint(args: &EndpointArgs, command: &str) -> anyhow::Result<PlannedEndpoint> {
    let specs = endpoint_specs(args, Vec::new())?;
    if specs.len() != 1 {
        bail!("--endpoint: {command} measures one endpoint at a time; give exactly one NAME=URL");
    }
    Ok(with_keys(specs)?.remove(0))
}

fn at_least_one(flag: &str, value: u64) -> anyhow::Result<()> {
    if value == 0 {
        bail!("{flag} must be at least 1");
    }
    Ok(())
}

fn check_url(flag: &str, url: &str) -> anyhow::Result<()> {
    let parsed =
        reqwest::Url::parse(url).with_context(|| format!("{flag} `{url}`: invalid URL"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        bail!("{flag} `{url}`: the URL must start with http:// or https://");
    }
    Ok(())
}

/// A comma-separated list, or `none` for an empty one. Duplicates are dropped, order is kept.
fn parse_list<T: PartialEq>(
    flag: &str,
    raw: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> anyhow::Result<Vec<T>> {
    let raw = raw.trim();
    if raw.eq_ignore_ascii_case("none") || raw.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for item in raw.split(',').map(str::trim) {
        match parse(item) {
            Some(v) if !out.contains(&v) => out.push(v),
            Some(_) => {}
            None => bail!("{flag} `{raw}`: cannot read `{item}`"),
        }
    }
    Ok(out)
}

/// `40m`, `90s`, `1h30m`, `1500ms`, or plain seconds.
pub fn parse_duration(raw: &str) -> anyhow::Result<Duration> {
    let raw = raw.trim();
    if let Ok(secs) = raw.parse::<f64>() {
        if secs.is_finite() && secs > 0.0 {
            return Ok(Duration::from_secs_f64(secs));
        }
        bail!("must be positive");
    }
    let mut total = 0.0;
    let mut rest = raw;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(split);
        let n: f64 = num
            .parse()
            .map_err(|_| anyhow::anyhow!("expected a number followed by h, m, s or ms"))?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        total += n * match unit {
            "h" => 3600.0,
            "m" | "min" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => bail!("unknown unit `{unit}` (use h, m, s or ms)"),
        };
        rest = next;
    }
    if total <= 0.0 {
        bail!("must be positive");
    }
    Ok(Duration::from_secs_f64(total))
}

/// `--out`, else `runs/<command>-<UTC timestamp>-<name>/`. A folder that already holds `marker`
/// is refused, so no earlier result is overwritten.
fn out_dir(
    flag: Option<&Path>,
    command: &str,
    name: &str,
    marker: &str,
) -> anyhow::Result<PathBuf> {
    if let Some(dir) = flag {
        if dir.join(marker).exists() {
            bail!(
                "--out {}: this folder already holds a {command} run; choose another",
                dir.display()
            );
        }
        return Ok(dir.to_path_buf());
    }
    Ok(new_run_dir(Some(command), &[name]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_combine_units() {
        assert_eq!(parse_duration("40m").unwrap(), Duration::from_secs(2400));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(
            parse_duration("1500ms").unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("0s").is_err());
    }

    #[test]
    fn lists_accept_none_and_name_the_flag() {
        let levels = |s| {
            parse_list("--concurrency", s, |x| {
                x.parse::<usize>().ok().filter(|n| *n > 0)
            })
        };
        assert_eq!(levels("1,2,4,6").unwrap(), vec![1, 2, 4, 6]);
        assert_eq!(levels("none").unwrap(), Vec::<usize>::new());
        assert_eq!(levels("2,2").unwrap(), vec![2]);
        let err = levels("1,0").unwrap_err().to_string();
        assert!(
            err.contains("--concurrency") && err.contains("`0`"),
            "{err}"
        );
    }
}
