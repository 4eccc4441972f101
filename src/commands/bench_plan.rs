//! Typed `bench`, `soak` and `smoke` flags to the plans `crate::bench` runs. clap has already
//! checked each value; what is left is the checks across flags, the endpoint and client flags
//! (through the same helpers as `compare`) and the run folder. Every error names its flag.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::Map;

use super::flags::{
    client_options, endpoint_specs, load_catalogue_for, parse_params, refuse_keys_in_params,
    with_keys, Sampled,
};
use crate::bench::baseline::Baseline;
use crate::bench::plan::{BenchSettings, Graded, Load, Slo};
use crate::bench::schema::{bench_folder, BENCH_JSON, BENCH_MD};
use crate::bench::soak_report::{soak_folder, SOAK_RECORDS};
use crate::bench::{BenchPlan, BenchSet, SmokePlan, SoakPlan};
use crate::catalogue::{Prompt, PromptRequest};
use crate::cli::{BenchArgs, EndpointArgs, SmokeArgs, SoakArgs};
use crate::run::PlannedEndpoint;
use crate::run_folder::new_run_dir;
use crate::score::{ScoreContext, ScorerSpec};

/// One plan per `--endpoint`. With one endpoint the run folder is as always; with more, each
/// endpoint gets `DIR/<name>/` and `DIR/bench.md` sets them side by side.
pub fn plan_bench(args: &BenchArgs) -> anyhow::Result<BenchSet> {
    let specs = endpoint_specs(&args.endpoints, Vec::new())?;
    if specs.is_empty() {
        bail!("--endpoint: give at least one NAME=URL");
    }
    let endpoints = with_keys(specs)?;
    let concurrency = list_or_none("--concurrency", &args.concurrency)?;
    let prefill = list_or_none("--prefill", &args.prefill)?;
    if args.runs == 0 && concurrency.is_empty() && prefill.is_empty() {
        bail!("--runs 0, --concurrency none and --prefill none: nothing left to measure");
    }
    let baseline = args
        .baseline
        .as_deref()
        .map(|p| Baseline::load(p).with_context(|| format!("--baseline {}", p.display())))
        .transpose()?;
    let names: Vec<&str> = endpoints.iter().map(|e| e.spec.name.as_str()).collect();
    if endpoints.len() > 1 {
        if let Some(bad) = names.iter().find(|n| n.chars().all(|c| c == '.')) {
            bail!("--endpoint `{bad}=…`: with several endpoints each name is a folder; choose another name");
        }
    }
    let dir = match args.out.as_deref() {
        Some(dir) => {
            let folder = bench_folder(dir);
            let taken = folder.holds(BENCH_JSON)
                || (endpoints.len() > 1 && folder.holds(BENCH_MD))
                || (endpoints.len() > 1
                    && names
                        .iter()
                        .any(|n| bench_folder(&dir.join(n)).holds(BENCH_JSON)));
            if taken {
                bail!(
                    "--out {}: this folder already holds a bench run; choose another",
                    dir.display()
                );
            }
            dir.to_path_buf()
        }
        None => new_run_dir(Some("bench"), &names),
    };
    let settings = BenchSettings {
        warmup: args.warmup,
        runs: args.runs,
        max_tokens: args.max_tokens,
        concurrency: concurrency.into_iter().map(|n| n as usize).collect(),
        rounds: args.rounds,
        prefill,
        prefill_runs: args.prefill_runs,
        stream: false,
        params: parse_params(&args.params, Map::new(), Sampled::Greedy)?,
    };
    refuse_keys_in_params(&settings.params, &endpoints)?;
    let client = client_options(&args.client)?;
    let several = endpoints.len() > 1;
    let plans = endpoints
        .into_iter()
        .map(|endpoint| BenchPlan {
            client: client.clone(),
            settings: settings.clone(),
            metrics_url: args.metrics_url.clone(),
            baseline: baseline.clone(),
            dir: if several {
                dir.join(&endpoint.spec.name)
            } else {
                dir.clone()
            },
            json: args.json,
            quiet: args.quiet,
            endpoint,
        })
        .collect();
    Ok(BenchSet { plans, dir })
}

pub fn plan_soak(args: &SoakArgs) -> anyhow::Result<SoakPlan> {
    let endpoint = single_endpoint(&args.endpoints, "soak")?;
    let params = parse_params(&args.params, Map::new(), Sampled::Greedy)?;
    refuse_keys_in_params(&params, std::slice::from_ref(&endpoint))?;
    let dir = out_dir(args.out.as_deref(), "soak", &endpoint.spec.name, |dir| {
        soak_folder(dir).holds(SOAK_RECORDS)
    })?;
    Ok(SoakPlan {
        client: client_options(&args.client)?,
        duration: args.duration,
        load: if args.sanity {
            Load::Closed {
                levels: distinct(&args.sanity_levels)
                    .into_iter()
                    .map(|n| n as usize)
                    .collect(),
            }
        } else if args.rate.is_empty() {
            Load::Closed {
                levels: vec![args.concurrency as usize],
            }
        } else {
            Load::Open {
                rates: distinct(&args.rate),
                burstiness: args.burstiness,
                max_in_flight: args.max_in_flight,
            }
        },
        slo: Slo {
            e2e_ms: args.slo_e2e_ms,
            tpot_ms: args.slo_tpot_ms,
        },
        graded: graded_prompts(args)?,
        sanity: args.sanity,
        kinds: distinct(&args.kinds),
        long_context: args.long_context,
        params,
        dir,
        json: args.json,
        quiet: args.quiet,
        endpoint,
    })
}

/// The graded prompts of `--graded` / `--sanity`: the catalogue's chat prompts with ground truth
/// whose scorer runs no code.
fn graded_prompts(args: &SoakArgs) -> anyhow::Result<Option<Graded>> {
    let graded = args.graded || args.sanity;
    if !graded {
        if args.graded_share.is_some() || args.catalogue.is_some() {
            bail!("--graded-share and --catalogue go with --graded or --sanity");
        }
        return Ok(None);
    }
    let catalogue = load_catalogue_for(args.catalogue.as_deref()).context("--graded")?;
    let prompts: Vec<Prompt> = catalogue
        .prompts
        .iter()
        .filter(|p| matches!(p.request, PromptRequest::Chat { .. }))
        .filter(|p| !p.score.open_ended() && !matches!(p.score, ScorerSpec::Js { .. }))
        .cloned()
        .collect();
    if prompts.is_empty() {
        bail!(
            "--graded: the catalogue in {} has no chat prompt with ground truth and no code to run",
            catalogue.dir.display()
        );
    }
    Ok(Some(Graded {
        prompts,
        share: args.graded_share.unwrap_or(0.25),
        context: ScoreContext::for_catalogue(&catalogue.dir),
        catalogue_hash: catalogue.hash.clone(),
    }))
}

pub fn plan_smoke(args: &SmokeArgs) -> anyhow::Result<SmokePlan> {
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

/// The items of a comma list whose `None` items stand for `none`: `none` alone is the empty
/// list, and cannot be mixed with values. Duplicates are dropped, order is kept.
fn list_or_none<T: PartialEq + Copy>(flag: &str, items: &[Option<T>]) -> anyhow::Result<Vec<T>> {
    let values: Vec<T> = items.iter().flatten().copied().collect();
    if !values.is_empty() && values.len() != items.len() {
        bail!("{flag}: `none` stands alone; give values or `none`, not both");
    }
    Ok(distinct(&values))
}

fn distinct<T: PartialEq + Copy>(items: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for &item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// `--out`, else `runs/<command>-<UTC timestamp>-<name>/`. A folder that `holds_run` says already
/// holds a run is refused, so no earlier result is overwritten.
fn out_dir(
    flag: Option<&Path>,
    command: &str,
    name: &str,
    holds_run: impl Fn(&Path) -> bool,
) -> anyhow::Result<PathBuf> {
    if let Some(dir) = flag {
        if holds_run(dir) {
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
    fn lists_drop_duplicates_and_none_stands_alone() {
        assert_eq!(
            list_or_none("--concurrency", &[Some(1), Some(2), Some(2)]).unwrap(),
            vec![1, 2]
        );
        assert_eq!(
            list_or_none::<u32>("--concurrency", &[None]).unwrap(),
            Vec::<u32>::new()
        );
        let err = list_or_none("--prefill", &[None, Some(8192u64)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--prefill"), "{err}");
    }
}
