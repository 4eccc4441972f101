//! Project tasks (`coherence project`): one long specification per task, the artifact a model
//! writes for it extracted, checked statically and run headless in the sandboxed JS worker
//! through scripted playthroughs, and every requirement counted met, partial or missing.
//!
//! The artifact is model-written and hostile: it only ever runs inside `coherence __js-worker`
//! (a script job, `score::js::ScriptJob`) with the sandbox's memory and time limits, no files
//! and no network.

pub mod artifact;
pub mod checks;
mod pipeline;
pub mod report;
pub mod results;
pub mod task;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use crate::score::js::{run_script, EngineLimits, ProcessLimits, ScriptJob, ScriptOutcome};
pub use artifact::{extract, Artifact};
pub use pipeline::{run, ProjectError, ProjectPlan, Settings};
pub use results::{Evaluation, RequirementResult, RequirementStatus, RuntimeError, ScenarioRun};
pub use task::{load_task, task_ids, Task};

/// The headless browser evaluated before the artifact (see its header).
pub const HARNESS: &str = include_str!("harness.js");

/// Frames a scenario may step before the worker stops it.
const MAX_STEPS: u64 = 80_000;

#[derive(Debug, Deserialize)]
struct Probe {
    verdict: String,
    #[serde(default)]
    detail: String,
}

#[derive(Debug, Deserialize)]
struct RawError {
    phase: String,
    message: String,
    #[serde(default)]
    frame: u64,
}

#[derive(Debug, Deserialize)]
struct Report {
    #[serde(default)]
    probes: BTreeMap<String, Probe>,
    #[serde(default)]
    errors: Vec<RawError>,
    #[serde(default)]
    frames: u64,
    #[serde(default)]
    virtual_ms: u64,
}

/// Probe verdicts with their details, by probe name.
type Probes = BTreeMap<String, (RequirementStatus, String)>;

/// The script job of one scenario.
fn scenario_job(task: &Task, scenario: &task::Scenario, artifact: &Artifact) -> ScriptJob {
    let options = json!({
        "html": artifact.html,
        "storage": scenario.storage,
        "storage_preset": scenario.storage_preset,
        "frame_ms": scenario.frame_ms,
    });
    ScriptJob {
        prelude: format!(
            "{HARNESS}\n__h.configure({options});\n{}\n",
            task.playthrough
        ),
        scripts: artifact.scripts.clone(),
        error_hook: "__h.loadError".into(),
        after_load: "__h.fireLoad();".into(),
        driver: format!(
            "(function () {{ var s = __scenarios[{name}]; if (typeof s !== 'function') throw new Error('no scenario ' + {name}); return s(__h); }})()",
            name = serde_json::to_string(&scenario.name).unwrap_or_default()
        ),
        max_steps: MAX_STEPS,
        report: "JSON.stringify(__h.report())".into(),
        limits: EngineLimits {
            loop_iterations: 10_000_000,
            ..EngineLimits::default()
        },
    }
}

/// Runs every scenario of `task` on `artifact` in the sandbox and returns the probes recorded
/// (first scenario to record a probe wins) and how each scenario ended.
fn run_scenarios(
    task: &Task,
    artifact: &Artifact,
    worker: &Path,
) -> Result<(Probes, Vec<ScenarioRun>), String> {
    let mut probes = BTreeMap::new();
    let mut runs = Vec::new();
    let limits = ProcessLimits {
        timeout: Duration::from_secs(task.scenario_timeout_s),
        ..ProcessLimits::default()
    };
    for scenario in &task.scenarios {
        let job = scenario_job(task, scenario, artifact);
        let started = Instant::now();
        let outcome = run_script(worker, &job, limits)?;
        let wall_ms = started.elapsed().as_millis() as u64;
        let mut run = ScenarioRun {
            name: scenario.name.clone(),
            status: "finished".into(),
            frames: 0,
            virtual_ms: 0,
            wall_ms,
            errors: Vec::new(),
        };
        match outcome {
            ScriptOutcome::Report(text) => match serde_json::from_str::<Report>(&text) {
                Ok(report) => {
                    run.frames = report.frames;
                    run.virtual_ms = report.virtual_ms;
                    run.errors = report
                        .errors
                        .into_iter()
                        .map(|e| RuntimeError {
                            scenario: scenario.name.clone(),
                            phase: e.phase,
                            message: e.message,
                            frame: e.frame,
                        })
                        .collect();
                    for (name, p) in report.probes {
                        probes
                            .entry(name)
                            .or_insert((RequirementStatus::parse(&p.verdict), p.detail));
                    }
                }
                Err(e) => run.status = format!("unreadable report: {e}"),
            },
            ScriptOutcome::LoadFailed(reason) => run.status = format!("did not load: {reason}"),
            ScriptOutcome::Died(reason) => run.status = reason,
        }
        runs.push(run);
    }
    Ok((probes, runs))
}

/// Extracts, checks and runs one answer. Err only when the sandbox cannot be started at all.
pub fn evaluate(task: &Task, answer: &str, worker: &Path) -> Result<Evaluation, String> {
    let artifact = extract(answer);
    let dead = checks::dead_functions(&artifact);
    let (probes, scenarios) = if artifact.scripts.is_empty() {
        (BTreeMap::new(), Vec::new())
    } else {
        run_scenarios(task, &artifact, worker)?
    };
    let errors: Vec<&RuntimeError> = scenarios.iter().flat_map(|s| &s.errors).collect();
    let counted = |s: &ScenarioRun| {
        task.scenarios
            .iter()
            .find(|t| t.name == s.name)
            .is_none_or(|t| t.counts_for_playable)
    };
    let playable_errors: Vec<&RuntimeError> = scenarios
        .iter()
        .filter(|s| counted(s))
        .flat_map(|s| &s.errors)
        .collect();
    let stopped: Vec<String> = scenarios
        .iter()
        .filter(|s| s.status != "finished")
        .map(|s| format!("scenario {}: {}", s.name, s.status))
        .collect();
    let why_absent = |name: &str| -> String {
        if artifact.scripts.is_empty() {
            "no script found in the answer".into()
        } else if !stopped.is_empty() {
            format!("probe `{name}` not recorded; {}", stopped.join("; "))
        } else {
            format!("probe `{name}` not recorded by any scenario")
        }
    };
    let mut checks_out = Vec::new();
    for r in &task.requirements {
        let stat = r
            .static_check
            .as_ref()
            .map(|c| checks::run(c, r.source, &artifact));
        let dynamic = r.probe.as_deref().map(|name| {
            if name == "no_errors" {
                if artifact.scripts.is_empty() {
                    (
                        RequirementStatus::Missing,
                        "no script found in the answer".to_string(),
                    )
                } else if errors.is_empty() && stopped.is_empty() {
                    (
                        RequirementStatus::Met,
                        "no uncaught error in any scenario".to_string(),
                    )
                } else if playable_errors.is_empty() && stopped.is_empty() {
                    (
                        RequirementStatus::Partial,
                        format!("only outside normal play: {}", errors[0].describe()),
                    )
                } else {
                    let first = errors
                        .first()
                        .map(|e| e.describe())
                        .unwrap_or_else(|| stopped.join("; "));
                    (
                        RequirementStatus::Missing,
                        format!("{} uncaught errors; first: {first}", errors.len()),
                    )
                }
            } else {
                probes
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| (RequirementStatus::Missing, why_absent(name)))
            }
        });
        let (verdict, detail) = match (stat, dynamic) {
            (Some((a, da)), Some((b, db))) => (a.combine(b), format!("static: {da}; run: {db}")),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => (RequirementStatus::Missing, "no check".into()),
        };
        checks_out.push(RequirementResult {
            id: r.id.clone(),
            title: r.title.clone(),
            verdict,
            detail,
        });
    }
    let mut counts = results::Counts {
        total: checks_out.len(),
        ..Default::default()
    };
    for c in &checks_out {
        match c.verdict {
            RequirementStatus::Met => counts.met += 1,
            RequirementStatus::Partial => counts.partial += 1,
            RequirementStatus::Missing => counts.missing += 1,
        }
    }
    let runtime_error = playable_errors
        .first()
        .or(errors.first())
        .map(|e| e.describe());
    let unplayable_because = if artifact.scripts.is_empty() {
        Some("no script found in the answer".to_string())
    } else if let Some(e) = playable_errors.first() {
        Some(format!("uncaught error: {}", e.describe()))
    } else if let Some(s) = scenarios
        .iter()
        .find(|s| counted(s) && s.status != "finished")
    {
        Some(format!("scenario {}: {}", s.name, s.status))
    } else {
        task.playable
            .iter()
            .find(|p| {
                probes
                    .get(*p)
                    .is_none_or(|(v, _)| *v != RequirementStatus::Met)
            })
            .map(|p| {
                let detail = probes
                    .get(p)
                    .map(|(_, d)| d.clone())
                    .unwrap_or_else(|| why_absent(p));
                format!("{p}: {detail}")
            })
    };
    Ok(Evaluation {
        requirements: counts,
        playable: unplayable_because.is_none(),
        unplayable_because,
        runtime_error,
        html_found: !artifact.html.trim().is_empty(),
        scripts: artifact.scripts.len(),
        dead_functions: dead,
        checks: checks_out,
        scenarios,
    })
}
