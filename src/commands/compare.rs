//! `coherence compare` and `coherence determinism`: send, journal, then score and report (or,
//! with `--dry-run`, only show the plan).

use crate::cli::CompareArgs;
use crate::error::{CliError, Exit, UsageContext};
use crate::run::run_plan;

use super::compare_plan::plan_compare;
pub use super::compare_plan::Mode;

use super::score::{exit_for, print_outcome, score_run};

pub fn compare(args: &CompareArgs, argv: Vec<String>, mode: Mode) -> Result<Exit, CliError> {
    let plan = plan_compare(args, mode).usage_err()?;
    if args.dry_run {
        return super::dry_run::dry_run(&plan, args.assume_tps, args.json);
    }
    let argv = redact_args(argv, &plan);
    let rt = super::runtime().usage_err()?;
    let outcome = rt.block_on(run_plan(&plan, argv))?;
    let results = score_run(
        &plan.dir,
        &plan.catalogue,
        &outcome.manifest,
        &plan.fail_on,
        plan.margin,
        outcome.skipped,
    )?;
    print_outcome(
        &plan.dir,
        &results,
        outcome.execution.interrupted,
        args.json,
    )?;
    Ok(exit_for(&results, outcome.execution.interrupted))
}

/// Keys never come from flags, but scrub any key value that was pasted into one anyway.
fn redact_args(argv: Vec<String>, plan: &crate::run::RunPlan) -> Vec<String> {
    argv.into_iter()
        .map(|a| {
            plan.endpoints
                .iter()
                .filter_map(|e| e.key.as_ref())
                .fold(a, |a, k| k.redact(&a))
        })
        .collect()
}
