//! A compare run end to end, below the face: send what the plan is missing (`run/`), the phases
//! after sending (teacher forcing, load probes), then score the run folder (`analysis/`) and write
//! its reports (`report/`). `compare`, `determinism`, `selftest` and `score` all end here.

pub mod calibrate;
pub mod control;
pub mod dry_run;
pub mod score;
pub mod selftest;
pub mod until_decided;

use crate::analysis::Results;
use crate::logprobs::forced;
use crate::logprobs::template::ChatTemplate;
use crate::probes::LoadPlan;
use crate::run::{run_plan, Execution, RunError, RunOutcome, RunPlan, Session};

pub use score::score_run;

/// Why a run could not be sent, scored or reported. The face maps each to an exit code
/// (`error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// What the run folder holds cannot be used as it is (a manifest out of bounds, a folder
    /// that already holds a run): nothing was sent.
    #[error("{0:#}")]
    Input(anyhow::Error),
    /// The run could not be finished, read back or reported.
    #[error("{0:#}")]
    Incomplete(anyhow::Error),
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A multi-threaded runtime for the phases that talk to endpoints.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Send what the plan is missing (then, with `--logprobs`, teacher forcing with `template`, the
/// one given now or the one the run kept; and the load phases, when asked), then score the run
/// and write its reports. Returns the results and whether sending was interrupted.
pub fn run_and_score(
    plan: &RunPlan,
    load: &LoadPlan,
    template: Option<ChatTemplate>,
    argv: Vec<String>,
) -> Result<(Results, bool), PipelineError> {
    let rt = runtime().map_err(PipelineError::Input)?;
    if plan.calibrate.is_none() {
        let outcome = rt.block_on(run_plan(plan, argv))?;
        return after_sending(&rt, plan, outcome, load, template);
    }
    let mut plan = plan.clone();
    let mut session = rt.block_on(Session::open(&plan, argv))?;
    let execution = if rt.block_on(calibrate::calibrate(&mut plan, &mut session))? {
        Execution {
            sent: 0,
            interrupted: true,
        }
    } else {
        rt.block_on(session.send_missing(&plan))?
    };
    let outcome = session.finish(execution)?;
    after_sending(&rt, &plan, outcome, load, template)
}

/// The phases after sending (teacher forcing, the load phases), then the run scored and its
/// reports written, once. Returns the results and whether the run was interrupted.
fn after_sending(
    rt: &tokio::runtime::Runtime,
    plan: &RunPlan,
    mut outcome: RunOutcome,
    load: &LoadPlan,
    template: Option<ChatTemplate>,
) -> Result<(Results, bool), PipelineError> {
    let sent = outcome.execution.interrupted;
    if !outcome.execution.interrupted && plan.sampling.teacher_forces() && !plan.replays() {
        let template =
            forced::template_for(&plan.dir, template).map_err(PipelineError::Incomplete)?;
        outcome.execution.interrupted =
            rt.block_on(forced::run(plan, &outcome.targets, template.as_ref()))?;
    }
    if !outcome.execution.interrupted && !load.is_empty() {
        outcome.execution.interrupted =
            rt.block_on(crate::probes::run(plan, &outcome.targets, load))?;
    }
    if outcome.execution.interrupted && !sent {
        // Stopped in a phase after sending: the manifest said finished.
        outcome.manifest.header.end(true);
        outcome
            .manifest
            .write(&plan.dir)
            .map_err(PipelineError::Incomplete)?;
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
