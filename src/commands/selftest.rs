//! `coherence selftest`: flags to the two control plans ([`crate::compare::selftest`]), then
//! the summary or selftest.json on stdout and the exit code (1 when the endpoint reads
//! `different` from itself).

use anyhow::anyhow;

use super::compare::{plan_compare, Mode};
use super::stdout;
use crate::cli::SelftestArgs;
use crate::compare::selftest::{self, CONTROLS};
use crate::error::{CliError, Exit, UsageContext};
use crate::run::RunPlan;

pub fn selftest(args: &SelftestArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    if !(args.hot_temperature.is_finite() && args.hot_temperature > 0.0) {
        return Err(CliError::usage(anyhow!(
            "--hot-temperature {}: give a temperature above 0",
            args.hot_temperature
        )));
    }
    let (dir, controls) = match &args.run.resume {
        Some(dir) => (dir.clone(), resumed_controls(args)?),
        None => {
            let base = plan_compare(&args.run, Mode::Selftest).usage_err()?;
            let controls = selftest::control_plans(&base, args.hot_temperature)?;
            (base.dir, controls)
        }
    };
    let report = selftest::run(&dir, controls, argv)?;
    stdout::print(&if args.run.json {
        report.json()
    } else {
        report.summary(&dir)
    })?;
    Ok(if report.failed() {
        Exit::GateFailed
    } else {
        Exit::Success
    })
}

/// The plans of a selftest being resumed: each control continues its own run folder.
fn resumed_controls(args: &SelftestArgs) -> Result<[RunPlan; 2], CliError> {
    let plan = |label: &str| {
        let mut control = args.run.clone();
        control.resume = control.resume.map(|d| d.join(label));
        plan_compare(&control, Mode::Compare).usage_err()
    };
    Ok([plan(CONTROLS[0])?, plan(CONTROLS[1])?])
}
