//! `coherence compare`: send, journal, score, analyse, report, exit code.

use std::path::Path;

use crate::analysis::{analyze, Results};
use crate::cli::CompareArgs;
use crate::error::{CliError, Exit, UsageContext};
use crate::report;
use crate::run::{journal, plan_compare, run_plan};

pub fn compare(args: &CompareArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    let plan = plan_compare(args).usage_err()?;
    let argv = redact_args(argv, &plan);
    let rt = super::runtime().usage_err()?;
    let outcome = rt.block_on(run_plan(&plan, argv))?;
    let loaded = journal::load(&plan.dir).map_err(CliError::incomplete)?;
    let results = analyze(
        &plan.catalogue,
        &outcome.manifest,
        &loaded.records,
        loaded.skipped,
    );
    report::write_all(&plan.dir, &results).map_err(CliError::incomplete)?;
    print_summary(&plan.dir, &results, outcome.execution.interrupted);
    Ok(exit_for(&results, outcome.execution.interrupted))
}

/// 3 when anything is missing or failed, else 1 on any diff or fail verdict, else 0.
pub fn exit_for(results: &Results, interrupted: bool) -> Exit {
    if interrupted || !results.complete {
        Exit::Incomplete
    } else if results.summary.diff > 0 || results.summary.fail > 0 {
        Exit::Diverged
    } else {
        Exit::Coherent
    }
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

fn print_summary(dir: &Path, results: &Results, interrupted: bool) {
    println!("{}", results.summary.headline());
    for c in &results.categories {
        if c.summary.diff + c.summary.fail + c.summary.review > 0 {
            println!(
                "  {}: {} same, {} diff, {} review, {} fail",
                c.category, c.summary.same, c.summary.diff, c.summary.review, c.summary.fail
            );
        }
    }
    if interrupted {
        println!(
            "interrupted: every finished request is saved; continue with --resume {}",
            dir.display()
        );
    } else if !results.complete {
        println!(
            "incomplete: {} request failure(s), {} missing; continue with --resume {}",
            results.request_failures,
            results.missing,
            dir.display()
        );
    }
    println!("report: {}", dir.join(report::REPORT_FILE).display());
}
