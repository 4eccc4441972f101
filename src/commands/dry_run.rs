//! `compare … --dry-run` and `determinism … --dry-run`: print the plan's counts
//! ([`crate::compare::dry_run`]) as text or JSON, and send nothing.

use super::stdout;
use crate::compare::dry_run::DryRun;
use crate::error::{CliError, Exit, UsageContext};
use crate::run::RunPlan;

/// Print the plan (as text, or as JSON with `json`) and send nothing.
pub fn dry_run(
    plan: &RunPlan,
    assume_tps: f64,
    assume_prefill_tps: f64,
    json: bool,
) -> Result<Exit, CliError> {
    let counted = DryRun::of(plan, assume_tps, assume_prefill_tps).usage_err()?;
    let out = if json {
        serde_json::to_string_pretty(&counted.json(plan)).map_err(CliError::usage)? + "\n"
    } else {
        counted.text(plan)
    };
    stdout::print(&out)?;
    Ok(Exit::Success)
}
