//! A project run from its plan: resolve the endpoints, keep the settings for `--resume`, send
//! every (task, endpoint) without a journalled answer on the request engine, evaluate every
//! answer in the JS sandbox and write results.json and report.md; and the names of the run
//! folder's files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::results::{Answer, Counts, ProjectResults, TaskResult};
use super::Task;
use crate::endpoint::{ClientOptions, EndpointSpec};
use crate::engine::{drive, Keep, Lane, Progress, Slot, Tally};
use crate::run::request::request_hash;
use crate::run::Line;
use crate::run::{resolve_targets, PlannedEndpoint, Record, RecordKey, RunError, Target};
use crate::run_folder::{tool_version, RunFolder, RunKind};

/// Requests in flight per endpoint: every task at once, as before the engine.
const PER_ENDPOINT: usize = usize::MAX;

/// What a project run was started with; `--resume` reads it back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProjectSettings {
    pub tool: String,
    pub projects: PathBuf,
    pub tasks: Vec<String>,
    pub endpoints: Vec<EndpointSpec>,
    pub max_tokens: Option<u32>,
    pub params: Map<String, Value>,
    pub invocations: Vec<Vec<String>>,
}

impl ProjectSettings {
    /// The settings of the project run in `dir`.
    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        folder(dir).read_manifest()
    }
}

/// A project run folder: its settings, its journal, and results and report with the project's
/// own schemas, not compare's.
const KIND: RunKind = RunKind {
    name: "project run",
    manifest: SETTINGS,
    manifest_what: "project settings",
    manifest_ends_in_newline: false,
};
/// What the run was started with ([`ProjectSettings`]), read back by `--resume`.
pub const SETTINGS: &str = "project.json";
/// One line per answer (a `run::Record`), appended as each arrives.
pub const JOURNAL: &str = "records.jsonl";
/// The project results (`project::ProjectResults`).
pub const RESULTS: &str = "results.json";
/// The Markdown report.
pub const REPORT: &str = "report.md";

/// The project run folder `dir`.
pub fn folder(dir: &Path) -> RunFolder {
    RunFolder::new(dir, &KIND)
}

/// A project run, built by the face from flags (and the settings of a resumed run).
#[derive(Debug)]
pub struct ProjectPlan {
    pub dir: PathBuf,
    pub projects: PathBuf,
    pub tasks: Vec<Task>,
    pub endpoints: Vec<PlannedEndpoint>,
    /// Overrides every task's own budget.
    pub max_tokens: Option<u32>,
    pub params: Map<String, Value>,
    pub client: ClientOptions,
    /// The invocations before this one (a resumed run) and this one, keys redacted.
    pub invocations: Vec<Vec<String>>,
    pub quiet: bool,
}

/// Why a project run stopped short of its report.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Run(#[from] RunError),
    /// The JS sandbox cannot start.
    #[error("{0}")]
    Sandbox(String),
    /// results.json or report.md cannot be written.
    #[error("{0:#}")]
    Report(anyhow::Error),
}

/// Run the plan to its reports. The results say whether every answer is there.
pub async fn run(plan: &ProjectPlan) -> Result<ProjectResults, ProjectError> {
    let resolved = resolve_targets(&plan.endpoints, &plan.client).await?;
    let folder = folder(&plan.dir);
    folder.create().map_err(RunError::Folder)?;
    let settings = ProjectSettings {
        tool: tool_version(),
        projects: plan.projects.clone(),
        tasks: plan.tasks.iter().map(|t| t.id.clone()).collect(),
        endpoints: plan
            .endpoints
            .iter()
            .zip(&resolved)
            .map(|(e, (t, _))| EndpointSpec {
                model: Some(t.model.clone()),
                ..e.spec.clone()
            })
            .collect(),
        max_tokens: plan.max_tokens,
        params: plan.params.clone(),
        invocations: plan.invocations.clone(),
    };
    folder.write_manifest(&settings).map_err(RunError::Folder)?;
    let targets: Vec<Target> = resolved.into_iter().map(|(t, _)| t).collect();
    let (records, interrupted) = send_missing(plan, &targets).await.map_err(RunError::Send)?;
    let results = evaluate(plan, &records, !interrupted)?;
    folder
        .write_json(RESULTS, &results)
        .and_then(|()| folder.write(REPORT, super::report::render(&results).as_bytes()))
        .map_err(ProjectError::Report)?;
    Ok(results)
}

/// The request of one task: the specification as one user message, temperature 0, no streaming.
fn request_body(task: &Task, model: &str, max_tokens: u32, params: &Map<String, Value>) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &task.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.push(json!({"role": "user", "content": task.spec}));
    let mut body = json!({
        "model": model,
        "messages": messages,
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "stream": false,
    });
    if let Some(obj) = body.as_object_mut() {
        for (k, v) in params {
            obj.insert(k.clone(), v.clone());
        }
    }
    body
}

type Key = (String, String);

/// Sends every (task, endpoint) without a journalled answer, all at once, appending each
/// record as it arrives; Ctrl-C stops waiting and keeps what arrived. Returns the newest record
/// per (task, endpoint) and whether the run was interrupted.
async fn send_missing<'a>(
    plan: &'a ProjectPlan,
    targets: &[Target],
) -> anyhow::Result<(BTreeMap<Key, Record>, bool)> {
    let folder = folder(&plan.dir);
    let loaded = folder.read_lines::<Record>(JOURNAL)?;
    let mut latest: BTreeMap<Key, Record> = BTreeMap::new();
    for r in loaded.values {
        latest.insert((r.prompt.clone(), r.endpoint.clone()), r);
    }
    let queues: Vec<Vec<&Task>> = targets
        .iter()
        .map(|target| {
            plan.tasks
                .iter()
                .filter(|task| {
                    latest
                        .get(&(task.id.clone(), target.name.clone()))
                        .is_none_or(|r| r.is_request_failure())
                })
                .collect()
        })
        .collect();
    let work: Vec<(String, u64)> = targets
        .iter()
        .zip(&queues)
        .map(|(t, q)| (t.name.clone(), q.len() as u64))
        .collect();
    let mut progress = Progress::counting(plan.quiet, &work);
    for s in &loaded.skipped {
        progress.note(&format!("warning: {s}"));
    }
    for (target, queue) in targets.iter().zip(&queues) {
        for task in queue {
            let budget = plan.max_tokens.unwrap_or(task.max_tokens);
            progress.note(&format!(
                "sending {} to {} ({budget} tokens max)",
                task.id, target.name
            ));
        }
    }
    let mut journal = folder.append_to(JOURNAL)?;
    let lanes = queues
        .into_iter()
        .map(|queue| Lane::new(queue, PER_ENDPOINT))
        .collect();
    let send = |task: &'a Task, slot: Slot| {
        let target = &targets[slot.endpoint];
        let budget = plan.max_tokens.unwrap_or(task.max_tokens);
        let body = request_body(task, &target.model, budget, &plan.params);
        async move {
            let started_at = chrono::Utc::now();
            let ex = target.client.complete("chat/completions", &body).await;
            let key = RecordKey {
                prompt: task.id.clone(),
                endpoint: target.name.clone(),
                max_tokens: budget,
                repeat: 0,
            };
            // The answer is kept as the record's content; the body would only repeat it.
            Record {
                raw_body: None,
                ..Record::of_exchange(key, request_hash(&body), started_at, ex)
            }
        }
    };
    let driven = drive(
        lanes,
        send,
        &mut Keep(|record: Record| {
            journal.append(&record)?;
            progress.record(&record.endpoint, tally(&record));
            latest.insert((record.prompt.clone(), record.endpoint.clone()), record);
            Ok(())
        }),
    )
    .await;
    progress.finish();
    Ok((latest, driven?.interrupted))
}

/// How progress counts a project answer, with its line.
fn tally(record: &Record) -> Tally {
    let outcome = record.error.as_ref().map_or_else(
        || {
            let tokens = record.completion.usage.and_then(|u| u.completion_tokens);
            format!("{} completion tokens", tokens.unwrap_or(0))
        },
        |e| format!("failed: {e}"),
    );
    Tally {
        planned: true,
        failed: record.is_request_failure(),
        line: Some(format!(
            "{} from {}: {outcome} in {:.1} s",
            record.prompt,
            record.endpoint,
            record.elapsed_ms / 1000.0
        )),
    }
}

/// Evaluate every journalled answer; `complete` stays true only if every answer is there.
fn evaluate(
    plan: &ProjectPlan,
    records: &BTreeMap<Key, Record>,
    mut complete: bool,
) -> Result<ProjectResults, ProjectError> {
    let worker = crate::score::js::default_worker();
    let progress = Progress::counting(plan.quiet, &[]);
    let mut results = Vec::new();
    for task in &plan.tasks {
        let mut answers = BTreeMap::new();
        for e in &plan.endpoints {
            let name = &e.spec.name;
            let Some(record) = records.get(&(task.id.clone(), name.clone())) else {
                complete = false;
                continue;
            };
            progress.note(&format!(
                "evaluating {} from {name} in the sandbox",
                task.id
            ));
            let answer = answer_of(task, record, &worker).map_err(ProjectError::Sandbox)?;
            if answer.request_error.is_some() {
                complete = false;
            }
            answers.insert(name.clone(), answer);
        }
        results.push(TaskResult {
            id: task.id.clone(),
            title: task.title.clone(),
            spec_words: task.spec_words(),
            requirement_count: task.requirements.len(),
            answers,
        });
    }
    Ok(ProjectResults {
        tool: tool_version(),
        endpoints: plan.endpoints.iter().map(|e| e.spec.name.clone()).collect(),
        complete,
        tasks: results,
    })
}

/// Measures and evaluates one journalled answer. Err only when the sandbox cannot start.
fn answer_of(task: &Task, record: &Record, worker: &Path) -> Result<Answer, String> {
    let c = &record.completion;
    let text = c
        .answer
        .clone()
        .or_else(|| c.content.clone())
        .unwrap_or_default();
    let usable = !record.is_request_failure();
    let evaluation = if usable {
        Some(super::evaluate(task, &text, worker)?)
    } else {
        None
    };
    Ok(Answer {
        requirements: evaluation
            .as_ref()
            .map(|e| e.requirements)
            .unwrap_or(Counts {
                missing: task.requirements.len(),
                total: task.requirements.len(),
                ..Default::default()
            }),
        playable: evaluation.as_ref().is_some_and(|e| e.playable),
        runtime_error: evaluation.as_ref().and_then(|e| e.runtime_error.clone()),
        elapsed_s: Some(record.elapsed_ms / 1000.0),
        completion_tokens: c.usage.and_then(|u| u.completion_tokens),
        prompt_tokens: c.usage.and_then(|u| u.prompt_tokens),
        finish_reason: c.finish_reason.clone(),
        output_bytes: text.len(),
        output_lines: text.lines().count(),
        reasoning_bytes: c.reasoning.as_ref().map_or(0, |r| r.len()),
        request_error: record
            .error
            .as_ref()
            .filter(|_| !usable)
            .map(|e| e.to_string()),
        evaluation,
    })
}
