//! `coherence soak`: run the soak (or re-render one with `--report DIR`), print the summary or
//! JSON, pick the exit code.

use super::bench_plan::{check_report_only, plan_soak};
use super::stdout;
use crate::bench::soak_report::{soak_folder, SoakStatus, SOAK_MD};
use crate::bench::{render, rerender, run_soak, SoakReport};
use crate::cli::SoakArgs;
use crate::error::{CliError, Exit, UsageContext};

pub fn soak(args: &SoakArgs) -> Result<Exit, CliError> {
    let (report, dir) = match &args.report {
        Some(dir) => {
            check_report_only(args).usage_err()?;
            (rerender(dir).map_err(CliError::unreadable)?, dir.clone())
        }
        None => {
            let plan = plan_soak(args).usage_err()?;
            let rt = super::runtime()?;
            (rt.block_on(run_soak(&plan))?, plan.dir)
        }
    };
    if args.json {
        stdout::print(&render::soak_json(&report))?;
    } else {
        stdout::print(&format!(
            "{}\nreport: {}\n",
            render::soak_markdown(&report),
            soak_folder(&dir).file(SOAK_MD).display()
        ))?;
    }
    Ok(exit_for(&report))
}

/// 3 when the soak did not finish (or sent nothing), else 1 when any request failed, came back
/// empty or degenerate, or (with --sanity) a graded prompt was answered wrong, else 0.
pub fn exit_for(r: &SoakReport) -> Exit {
    let sanity_failed = r.sanity.as_ref().is_some_and(|s| !s.passed);
    if r.status != SoakStatus::Finished || r.requests == 0 {
        Exit::Incomplete
    } else if r.errors + r.soft_empty + r.degenerate > 0 || sanity_failed {
        Exit::GateFailed
    } else {
        Exit::Success
    }
}
