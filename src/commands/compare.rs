//! `coherence compare` and `coherence determinism`: send, journal, then score and report (or,
//! with `--dry-run`, only show the plan).

use std::path::Path;

use crate::analysis::Results;
use crate::cli::CompareArgs;
use crate::error::{CliError, Exit, UsageContext};
use crate::load::LoadPlan;
use crate::logprobs::forced;
use crate::logprobs::template::ChatTemplate;
use crate::run::{run_plan, RunPlan, RunStatus};

pub(super) use super::compare_plan::plan_compare;
pub use super::compare_plan::Mode;
use super::load_plan::plan_load;

use super::score::{exit_for, print_outcome, score_run};

pub fn compare(args: &CompareArgs, argv: Vec<String>, mode: Mode) -> Result<Exit, CliError> {
    let plan = plan_compare(args, mode).usage_err()?;
    if args.dry_run {
        return super::dry_run::dry_run(&plan, args.assume_tps, args.json);
    }
    let load = plan_load(&args.load, mode, &plan).usage_err()?;
    let (results, interrupted) = run_and_score(&plan, &load, args.chat_template.as_deref(), argv)?;
    print_outcome(&plan.dir, &results, interrupted, args.json)?;
    Ok(exit_for(&results, interrupted))
}

/// Send what the plan is missing (then, with `--logprobs`, teacher forcing; and the load phases,
/// when asked), then score the run and write its reports. Returns the results and whether
/// sending was interrupted.
pub(super) fn run_and_score(
    plan: &RunPlan,
    load: &LoadPlan,
    chat_template: Option<&Path>,
    argv: Vec<String>,
) -> Result<(Results, bool), CliError> {
    if chat_template.is_some() && !plan.sampling.logprobs {
        return Err(CliError::usage(anyhow::anyhow!(
            "--chat-template renders prompts for teacher forcing: it needs --logprobs"
        )));
    }
    let flagged = chat_template
        .map(ChatTemplate::load)
        .transpose()
        .usage_err()?;
    let argv = redact_args(argv, plan);
    let rt = super::runtime()?;
    let mut outcome = rt.block_on(run_plan(plan, argv))?;
    let sent = outcome.execution.interrupted;
    if !outcome.execution.interrupted && plan.sampling.logprobs {
        let template = forced::template_for(&plan.dir, flagged).map_err(CliError::output)?;
        outcome.execution.interrupted =
            rt.block_on(forced::run(plan, &outcome.targets, template.as_ref()))?;
    }
    if !outcome.execution.interrupted && !load.is_empty() {
        outcome.execution.interrupted =
            rt.block_on(crate::load::run(plan, &outcome.targets, load))?;
    }
    if outcome.execution.interrupted && !sent {
        // Stopped in a phase after sending: the manifest said finished.
        outcome.manifest.status = RunStatus::Interrupted;
        outcome
            .manifest
            .write(&plan.dir)
            .map_err(CliError::output)?;
    }
    let results = score_run(
        &plan.dir,
        &plan.catalogue,
        &outcome.manifest,
        &plan.fail_on,
        plan.margin,
        outcome.skipped,
    )?;
    Ok((results, outcome.execution.interrupted))
}

/// Keys never come from flags, but scrub any key value that was pasted into one anyway.
fn redact_args(argv: Vec<String>, plan: &RunPlan) -> Vec<String> {
    argv.into_iter()
        .map(|a| {
            plan.endpoints
                .iter()
                .filter_map(|e| e.key.as_ref())
                .fold(a, |a, k| k.redact(&a))
        })
        .collect()
}
