//! `coherence distribution`: build the plan from flags (and the manifest of a resumed run), run
//! it (`distribution::run`), print the answer and pick the exit code.

use std::path::Path;

use anyhow::anyhow;

use super::flags::{
    client_options, endpoint_specs, parse_params, refuse_keys_in_params, with_keys, Sampled,
};
use super::stdout::print;
use crate::analysis::same_model_headline;
use crate::cli::DistributionArgs;
use crate::distribution::analyse::TestSettings;
use crate::distribution::answer::{default_gate, unmeasured};
use crate::distribution::limits::{
    permutations_within, statistics_work, MAX_STATISTICS_WORK, MIN_PERMUTATIONS, OWN_FLAGS,
};
use crate::distribution::mmd::{DEFAULT_ALPHA, DEFAULT_PERMUTATIONS};
use crate::distribution::prompts::built_in;
use crate::distribution::results::{DistributionResults, SamplingParams};
use crate::distribution::{self, DistributionError, DistributionManifest, DistributionPlan};
use crate::error::{CliError, Exit, UsageContext};
use crate::gate::{Gate, GateOrigin};
use crate::run_folder::{new_run_dir, RunHeader};

/// Samples per prompt and endpoint when `--samples` is not given.
pub const DEFAULT_SAMPLES: u32 = 10;

pub fn distribution(args: &DistributionArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    let plan = plan(args, argv)?;
    let rt = super::runtime()?;
    let results = rt.block_on(distribution::run(&plan)).map_err(|e| match e {
        DistributionError::Run(e) => CliError::from(e),
        DistributionError::Report(e) => CliError::output(e),
    })?;
    print(&summary(&plan.dir, &results))?;
    Ok(exit_for(&results))
}

/// The manifest of `--resume DIR`, if given.
fn previous(args: &DistributionArgs) -> Result<Option<DistributionManifest>, CliError> {
    args.resume
        .as_deref()
        .map(|dir| {
            distribution::folder(dir)
                .read_checked_manifest()
                .map_err(CliError::unreadable)
        })
        .transpose()
}

/// A sampling parameter: the flag, else the run's; a flag that contradicts the run's is refused
/// (its samples were drawn with the other value).
fn kept<T: PartialEq + std::fmt::Debug + Copy>(
    flag: &str,
    given: Option<T>,
    saved: Option<Option<T>>,
) -> Result<Option<T>, CliError> {
    match (given, saved) {
        (Some(g), Some(s)) if Some(g) != s => Err(CliError::usage(anyhow!(
            "{flag} {g:?}: the run being resumed was sampled with {s:?}; start a new run for other sampling parameters"
        ))),
        (Some(g), _) => Ok(Some(g)),
        (None, Some(s)) => Ok(s),
        (None, None) => Ok(None),
    }
}

fn sampling(
    args: &DistributionArgs,
    previous: Option<&DistributionManifest>,
) -> Result<SamplingParams, CliError> {
    let saved = previous.map(|m| &m.sampling);
    let temperature = kept(
        "--temperature",
        args.temperature,
        saved.map(|s| Some(s.temperature)),
    )?
    .ok_or_else(|| {
        CliError::usage(anyhow!(
            "give --temperature T, the sampling temperature the endpoints serve at (e.g. 0.7)"
        ))
    })?;
    let base = saved.map(|s| s.params.clone()).unwrap_or_default();
    let params = parse_params(&args.params, base, Sampled::AtTemperature).usage_err()?;
    if let Some(k) = OWN_FLAGS.iter().find(|k| params.contains_key(**k)) {
        return Err(CliError::usage(anyhow!(
            "--param {k}: give it as --{} instead, so the manifest and report state it",
            k.replace('_', "-")
        )));
    }
    Ok(SamplingParams {
        temperature,
        top_p: kept("--top-p", args.top_p, saved.map(|s| s.top_p))?,
        top_k: kept("--top-k", args.top_k, saved.map(|s| s.top_k))?,
        samples: args
            .samples
            .or(saved.map(|s| s.samples))
            .unwrap_or(DEFAULT_SAMPLES),
        max_tokens: args.max_tokens.or(saved.and_then(|s| s.max_tokens)),
        params,
    })
}

/// The gate: the flag, else the run's, else the default; a condition on a metric this command
/// does not measure is refused (it could never hold).
fn gate(
    args: &DistributionArgs,
    previous: Option<&DistributionManifest>,
) -> Result<Gate, CliError> {
    let gate = match (&args.fail_on, previous) {
        (Some(g), _) => g.clone(),
        (None, Some(m)) if m.gate == default_gate() => default_gate(),
        (None, Some(m)) => m.gate.clone().with_origin(GateOrigin::Manifest),
        (None, None) => default_gate(),
    };
    let refused = unmeasured(&gate);
    if !refused.is_empty() {
        return Err(CliError::usage(anyhow!(
            "--fail-on {}: not measured by distribution (its metrics: distribution_p, \
             distribution_different, not_same_model, same_model_undecided)",
            refused.join(",")
        )));
    }
    Ok(gate)
}

/// The permutations of the test within [`MAX_STATISTICS_WORK`]: `--permutations` above what fits
/// is refused (exit 2, saying the most that fits); the run's own or the default is reduced to
/// fit, and the reduction (the second value: what was asked) is stated in the results.
fn permutations(
    flag: Option<u32>,
    saved: Option<u32>,
    prompts: usize,
    samples: u32,
) -> Result<(u32, Option<u32>), CliError> {
    let fit = permutations_within(prompts, samples);
    match flag {
        Some(b) if b > fit => Err(CliError::usage(anyhow!(
            "--permutations {b} with --samples {samples}: the permutation test would take about \
             {:.1e} kernel look-ups over {prompts} prompts, above the {MAX_STATISTICS_WORK:.0e} \
             it is allowed (about ten seconds); give --permutations at most {fit}, or fewer \
             --samples",
            statistics_work(prompts, samples, b) as f64
        ))),
        Some(b) => Ok((b, None)),
        None => {
            let asked = saved.unwrap_or(DEFAULT_PERMUTATIONS);
            Ok(if asked > fit {
                (fit.max(MIN_PERMUTATIONS), Some(asked))
            } else {
                (asked, None)
            })
        }
    }
}

/// The plan from flags, starting from the manifest of `--resume DIR` when given.
fn plan(args: &DistributionArgs, argv: Vec<String>) -> Result<DistributionPlan, CliError> {
    let previous = previous(args)?;
    let base = previous
        .as_ref()
        .map(|m| m.endpoints.clone())
        .unwrap_or_default();
    let specs = endpoint_specs(&args.endpoints, base).usage_err()?;
    if specs.len() != 2 {
        return Err(CliError::usage(anyhow!(
            "give exactly two endpoints (--endpoint A=URL --endpoint B=URL); {} given",
            specs.len()
        )));
    }
    let prompts = built_in().usage_err()?;
    if let Some(m) = &previous {
        let ids: Vec<&str> = prompts.iter().map(|p| p.id.as_str()).collect();
        if m.prompts.iter().map(String::as_str).ne(ids.iter().copied()) {
            return Err(CliError::unreadable(anyhow!(
                "the run was made with another prompt set ({}); start a new run",
                m.prompts.join(", ")
            )));
        }
    }
    let sampling = sampling(args, previous.as_ref())?;
    let gate = gate(args, previous.as_ref())?;
    let (permutations, reduced_from) = permutations(
        args.permutations,
        previous.as_ref().map(|m| m.permutations),
        prompts.len(),
        sampling.samples,
    )?;
    let test = TestSettings {
        alpha: previous.as_ref().map_or(DEFAULT_ALPHA, |m| m.alpha),
        permutations,
        seed: args.seed.or(previous.as_ref().map(|m| m.seed)).unwrap_or(0),
        reduced_from,
    };
    let client = client_options(&args.client).usage_err()?;
    let endpoints = with_keys(specs).usage_err()?;
    refuse_keys_in_params(&sampling.params, &endpoints).usage_err()?;
    let names: Vec<&str> = endpoints.iter().map(|e| e.spec.name.as_str()).collect();
    let dir = args
        .resume
        .clone()
        .or_else(|| args.out.clone())
        .unwrap_or_else(|| new_run_dir(Some("distribution"), &names));
    let header = RunHeader::begin(
        previous.map(|m| m.header),
        crate::run::redacted_argv(argv, &endpoints),
    );
    Ok(DistributionPlan {
        dir,
        endpoints,
        prompts,
        sampling,
        test,
        gate,
        client,
        concurrency: args.concurrency,
        header,
        quiet: args.quiet,
    })
}

/// 3 when a sample is missing, else 1 when the gate failed, else 0.
fn exit_for(results: &DistributionResults) -> Exit {
    if !results.complete {
        Exit::Incomplete
    } else if !results.gate.failed.is_empty() {
        Exit::GateFailed
    } else {
        Exit::Success
    }
}

fn summary(dir: &Path, r: &DistributionResults) -> String {
    let mut out = same_model_headline(r.summary.same_model, &r.summary.same_model_because);
    out.push('\n');
    for c in &r.distribution.control {
        let p = c.p.map_or("–".to_string(), |p| format!("{p:.3}"));
        out.push_str(&format!(
            "control {}: its halves read {} (p = {p})\n",
            c.endpoint,
            if c.different { "different" } else { "same" }
        ));
    }
    if !r.gate.failed.is_empty() {
        out.push_str(&format!("gate failed: {}\n", r.gate.failed.join(", ")));
    }
    let report = distribution::folder(dir).file(distribution::REPORT_MD);
    out.push_str(&format!("report: {}\n", report.display()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_permutations_shrink_to_the_work_bound_and_a_flag_above_it_is_refused() {
        assert_eq!(permutations(None, None, 16, 10).unwrap(), (1000, None));
        assert_eq!(
            permutations(None, None, 16, 1000).unwrap(),
            (417, Some(1000))
        );
        assert_eq!(
            permutations(None, Some(5000), 16, 1000).unwrap(),
            (417, Some(5000))
        );
        assert_eq!(
            permutations(Some(400), None, 16, 1000).unwrap(),
            (400, None)
        );
        let e = permutations(Some(100_000), None, 16, 1000).unwrap_err();
        assert!(format!("{:#}", e.error).contains("at most 417"));
    }
}
