//! `coherence bench`: measure one endpoint, or several one after the other, write the run
//! folder(s), print the summary or JSON.

use super::bench_plan::plan_bench;
use super::stdout;
use crate::bench::schema::{bench_folder, BenchStatus, BENCH_MD};
use crate::bench::{render, run_benches};
use crate::cli::BenchArgs;
use crate::error::{CliError, Exit, UsageContext};

/// Exit 0 when every request of every endpoint was measured, 3 when some failed or the bench was
/// interrupted (the report still shows the rest).
pub fn bench(args: &BenchArgs) -> Result<Exit, CliError> {
    let set = plan_bench(args).usage_err()?;
    let rt = super::runtime()?;
    let reports = rt.block_on(run_benches(&set))?;
    let several = set.plans.len() > 1;
    let mut out = String::new();
    if args.json {
        out.push_str(&render::benches_json(&reports));
    } else {
        for r in &reports {
            out.push_str(&render::bench_markdown(r));
            if several {
                out.push('\n');
            }
        }
        if several {
            let names: Vec<&str> = set
                .plans
                .iter()
                .map(|p| p.endpoint.spec.name.as_str())
                .collect();
            out.push_str(&render::side_by_side_markdown(&reports, &names));
        }
        let summary = bench_folder(&set.dir).file(BENCH_MD);
        out.push_str(&format!("\nreport: {}\n", summary.display()));
    }
    stdout::print(&out)?;
    let clean = reports.len() == set.plans.len()
        && reports
            .iter()
            .all(|r| r.problems.is_empty() && r.status == BenchStatus::Finished);
    Ok(if clean {
        Exit::Success
    } else {
        Exit::Incomplete
    })
}
