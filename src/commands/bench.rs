//! `coherence bench`: measure one endpoint, write the run folder, print the summary or JSON.

use super::bench_plan::plan_bench;
use crate::bench::log::BENCH_MD;
use crate::bench::schema::BenchStatus;
use crate::bench::{render, run_bench};
use crate::cli::BenchArgs;
use crate::error::{CliError, Exit, UsageContext};

/// Exit 0 when every request was measured, 3 when some failed or the bench was interrupted (the
/// report still shows the rest).
pub fn bench(args: &BenchArgs) -> Result<Exit, CliError> {
    let plan = plan_bench(args).usage_err()?;
    let rt = super::runtime().usage_err()?;
    let report = rt.block_on(run_bench(&plan))?;
    if plan.json {
        print!("{}", render::bench_json(&report));
    } else {
        print!("{}", render::bench_markdown(&report));
        println!("\nreport: {}", plan.dir.join(BENCH_MD).display());
    }
    Ok(
        if report.problems.is_empty() && report.status == BenchStatus::Finished {
            Exit::Success
        } else {
            Exit::Incomplete
        },
    )
}
