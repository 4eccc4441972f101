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
pub use artifact::extract;
use artifact::Artifact;
pub use pipeline::{
    folder, run, ProjectError, ProjectPlan, ProjectSettings, JOURNAL, REPORT, RESULTS, SETTINGS,
};
pub use results::{Evaluation, RequirementStatus};
use results::{RequirementResult, RuntimeError, ScenarioRun};
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

/// What running one artifact showed: its scenarios, their uncaught errors and the probes they recorded.
struct Observed<'a> {
    task: &'a Task,
    artifact: &'a Artifact,
    probes: Probes,
    scenarios: Vec<ScenarioRun>,
}

impl Observed<'_> {
    /// Whether a scenario counts for "playable" (unknown scenarios do).
    fn counted(&self, run: &ScenarioRun) -> bool {
        self.task
            .scenarios
            .iter()
            .find(|t| t.name == run.name)
            .is_none_or(|t| t.counts_for_playable)
    }

    /// Every uncaught error, scenario by scenario.
    fn errors(&self) -> Vec<&RuntimeError> {
        self.scenarios.iter().flat_map(|s| &s.errors).collect()
    }

    /// The uncaught errors of the scenarios that count for "playable".
    fn playable_errors(&self) -> Vec<&RuntimeError> {
        self.scenarios
            .iter()
            .filter(|s| self.counted(s))
            .flat_map(|s| &s.errors)
            .collect()
    }

    /// One line per scenario that did not finish.
    fn stopped(&self) -> Vec<String> {
        self.scenarios
            .iter()
            .filter(|s| s.status != "finished")
            .map(|s| format!("scenario {}: {}", s.name, s.status))
            .collect()
    }

    /// Why probe `name` has no verdict.
    fn why_absent(&self, name: &str) -> String {
        let stopped = self.stopped();
        if self.artifact.scripts.is_empty() {
            "no script found in the answer".into()
        } else if !stopped.is_empty() {
            format!("probe `{name}` not recorded; {}", stopped.join("; "))
        } else {
            format!("probe `{name}` not recorded by any scenario")
        }
    }

    /// The built-in `no_errors` probe: met when no scenario threw or stopped, partial when only
    /// scenarios outside normal play did.
    fn no_errors(&self) -> (RequirementStatus, String) {
        let errors = self.errors();
        let stopped = self.stopped();
        if self.artifact.scripts.is_empty() {
            (
                RequirementStatus::Missing,
                "no script found in the answer".to_string(),
            )
        } else if errors.is_empty() && stopped.is_empty() {
            (
                RequirementStatus::Met,
                "no uncaught error in any scenario".to_string(),
            )
        } else if self.playable_errors().is_empty() && stopped.is_empty() {
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
    }

    /// The verdict of probe `name` (missing, with the reason, when no scenario recorded it).
    fn probe(&self, name: &str) -> (RequirementStatus, String) {
        if name == "no_errors" {
            return self.no_errors();
        }
        self.probes
            .get(name)
            .cloned()
            .unwrap_or_else(|| (RequirementStatus::Missing, self.why_absent(name)))
    }

    /// One requirement judged by its static check, its probe, or both combined.
    fn requirement(&self, r: &task::Requirement) -> RequirementResult {
        let stat = r
            .static_check
            .as_ref()
            .map(|c| checks::run(c, r.source, self.artifact));
        let dynamic = r.probe.as_deref().map(|name| self.probe(name));
        let (verdict, detail) = match (stat, dynamic) {
            (Some((a, da)), Some((b, db))) => (a.combine(b), format!("static: {da}; run: {db}")),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => (RequirementStatus::Missing, "no check".into()),
        };
        RequirementResult {
            id: r.id.clone(),
            title: r.title.clone(),
            verdict,
            detail,
        }
    }

    /// Why the artifact is not playable (no script, an uncaught error in normal play, a scenario
    /// that stopped, or the first `playable` probe not met); None when it is.
    fn unplayable_because(&self) -> Option<String> {
        if self.artifact.scripts.is_empty() {
            Some("no script found in the answer".to_string())
        } else if let Some(e) = self.playable_errors().first() {
            Some(format!("uncaught error: {}", e.describe()))
        } else if let Some(s) = self
            .scenarios
            .iter()
            .find(|s| self.counted(s) && s.status != "finished")
        {
            Some(format!("scenario {}: {}", s.name, s.status))
        } else {
            self.task
                .playable
                .iter()
                .find(|p| {
                    self.probes
                        .get(*p)
                        .is_none_or(|(v, _)| *v != RequirementStatus::Met)
                })
                .map(|p| {
                    let detail = self
                        .probes
                        .get(p)
                        .map(|(_, d)| d.clone())
                        .unwrap_or_else(|| self.why_absent(p));
                    format!("{p}: {detail}")
                })
        }
    }

    /// The first uncaught error, preferring one from normal play.
    fn runtime_error(&self) -> Option<String> {
        self.playable_errors()
            .first()
            .or(self.errors().first())
            .map(|e| e.describe())
    }
}

/// Requirements counted by verdict.
fn count(checks: &[RequirementResult]) -> results::Counts {
    let mut counts = results::Counts {
        total: checks.len(),
        ..Default::default()
    };
    for c in checks {
        match c.verdict {
            RequirementStatus::Met => counts.met += 1,
            RequirementStatus::Partial => counts.partial += 1,
            RequirementStatus::Missing => counts.missing += 1,
        }
    }
    counts
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
    let observed = Observed {
        task,
        artifact: &artifact,
        probes,
        scenarios,
    };
    let checks_out: Vec<RequirementResult> = task
        .requirements
        .iter()
        .map(|r| observed.requirement(r))
        .collect();
    let unplayable_because = observed.unplayable_because();
    let runtime_error = observed.runtime_error();
    Ok(Evaluation {
        requirements: count(&checks_out),
        playable: unplayable_because.is_none(),
        unplayable_because,
        runtime_error,
        html_found: !artifact.html.trim().is_empty(),
        scripts: artifact.scripts.len(),
        dead_functions: dead,
        checks: checks_out,
        scenarios: observed.scenarios,
    })
}
