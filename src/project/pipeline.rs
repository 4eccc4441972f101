//! A project run from its plan: resolve the endpoints, keep the settings for `--resume`, send
//! every (task, endpoint) without a journalled answer on the request engine, evaluate every
//! answer in the JS sandbox and write results.json and report.md; and the names of the run
//! folder's files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::results::{Answer, Counts, ProjectResults, TaskResult};
use super::Task;
use crate::catalogue::{Message, Prompt, PromptRequest, Role, SourceLocation, Suite};
use crate::endpoint::{ClientOptions, EndpointSpec};
use crate::engine::Progress;
use crate::run::journal::Journal;
use crate::run::plan::DEFAULT_MAX_TOKENS;
use crate::run::{
    resolve_targets, send_jobs, Answered, Job, Line, PlannedEndpoint, RunError, Sampling, Sending,
    Target,
};
use crate::run_folder::{tool_version, RunFolder, RunHeader, RunKind};
use crate::score::{ScorerSpec, TextChecks};

/// Requests in flight per endpoint: every task at once, as before the engine.
const PER_ENDPOINT: usize = usize::MAX;

/// What a project run was started with; `--resume` reads it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectSettings {
    /// The tool, times, status and invocations every manifest opens with.
    #[serde(flatten)]
    pub header: RunHeader,
    pub projects: PathBuf,
    pub tasks: Vec<String>,
    pub endpoints: Vec<EndpointSpec>,
    pub max_tokens: Option<u32>,
    pub params: Map<String, Value>,
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
    /// The run's header with this invocation (keys redacted) last, begun by the face.
    pub header: RunHeader,
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
    let mut settings = ProjectSettings {
        header: plan.header.clone(),
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
    };
    folder.write_manifest(&settings).map_err(RunError::Folder)?;
    let targets: Vec<Target> = resolved.into_iter().map(|(t, _)| t).collect();
    let (records, interrupted) = send_missing(plan, &targets).await.map_err(RunError::Send)?;
    settings.header.end(interrupted);
    folder.write_manifest(&settings).map_err(RunError::Send)?;
    let results = evaluate(plan, &records, !interrupted)?;
    folder
        .write_json(RESULTS, &results)
        .and_then(|()| folder.write(REPORT, super::report::render(&results).as_bytes()))
        .map_err(ProjectError::Report)?;
    Ok(results)
}

/// One task as a chat prompt: its system message, if any, then the specification as one user
/// message. The sandbox judges the answer afterwards, so the prompt scores nothing itself.
fn task_prompt(task: &Task) -> Prompt {
    let mut messages = Vec::new();
    if let Some(system) = &task.system {
        messages.push(Message {
            role: Role::System,
            content: system.clone(),
        });
    }
    messages.push(Message {
        role: Role::User,
        content: task.spec.clone(),
    });
    Prompt {
        id: task.id.clone(),
        suite: Suite::Core,
        category: "project".into(),
        request: PromptRequest::Chat { messages },
        max_tokens: Some(task.max_tokens),
        tags: Vec::new(),
        reference: String::new(),
        wrong: String::new(),
        score: ScorerSpec::Open(TextChecks::default()),
        source: SourceLocation {
            file: task.dir.display().to_string(),
            line: 1,
        },
        tool_use: None,
    }
}

type Key = (String, String);

/// Sends every (task, endpoint) without a journalled answer, all at once, on the one send loop
/// (`run::send_jobs`): temperature 0, no streaming, the run's `--param`s. Returns the newest
/// record per (task, endpoint) and whether the run was interrupted.
async fn send_missing(
    plan: &ProjectPlan,
    targets: &[Target],
) -> anyhow::Result<(BTreeMap<Key, Answered>, bool)> {
    let mut journal = Journal::open_kept(&plan.dir)?;
    let answered: BTreeMap<Key, &Answered> = (journal.kept().iter())
        .map(|r| ((r.prompt.to_string(), r.endpoint.to_string()), r))
        .collect();
    let mut jobs = Vec::new();
    let mut notes: Vec<String> = (journal.skipped().iter())
        .map(|s| format!("warning: {s}"))
        .collect();
    for (endpoint, target) in targets.iter().enumerate() {
        for task in &plan.tasks {
            let key = (task.id.clone(), target.name.clone());
            if answered.get(&key).is_some_and(|r| !r.is_request_failure()) {
                continue;
            }
            let max_tokens = plan.max_tokens.unwrap_or(task.max_tokens);
            notes.push(format!(
                "sending {} to {} ({max_tokens} tokens max)",
                task.id, target.name
            ));
            jobs.push(Job {
                prompt: Arc::new(task_prompt(task)),
                endpoint,
                max_tokens,
                repeat: 0,
                note: None,
            });
        }
    }
    let mut sampling = Sampling::deterministic(DEFAULT_MAX_TOKENS);
    sampling.params = plan.params.clone();
    let how = Sending {
        concurrency: PER_ENDPOINT,
        sampling: &sampling,
        reasoning_retry_budget: 0,
        quiet: plan.quiet,
    };
    let execution = send_jobs(jobs, targets, &mut journal, &how, &notes).await?;
    let latest: BTreeMap<Key, Answered> = (journal.kept().iter())
        .map(|r| ((r.prompt.to_string(), r.endpoint.to_string()), r.clone()))
        .collect();
    Ok((latest, execution.interrupted))
}

/// Evaluate every journalled answer; `complete` stays true only if every answer is there.
fn evaluate(
    plan: &ProjectPlan,
    records: &BTreeMap<Key, Answered>,
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
fn answer_of(task: &Task, record: &Answered, worker: &Path) -> Result<Answer, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_folder::header::{without_header, UNKNOWN_TIME};
    use crate::run_folder::RunStatus;

    /// The committed example, written before project settings had a header.
    fn example() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("runs/example-project-smollm2")
    }

    #[test]
    fn settings_written_before_the_header_read_with_unknown_times_and_their_invocation() {
        let s = ProjectSettings::read(&example()).unwrap();
        let h = &s.header;
        assert_eq!(h.tool, "coherence 0.1.0");
        assert_eq!((h.created_at, h.updated_at), (UNKNOWN_TIME, UNKNOWN_TIME));
        assert_eq!(h.status, RunStatus::Running);
        assert_eq!(h.invocations.len(), 1);
        assert_eq!(h.invocations[0].at, UNKNOWN_TIME);
        assert_eq!(
            h.invocations[0].args[..2],
            ["./target/debug/coherence", "project"]
        );
        assert_eq!(h.invocations[0].args.last().unwrap(), "-q");
        assert_eq!(s.tasks, ["breakout"]);
        let old: Value =
            serde_json::from_slice(&std::fs::read(example().join(SETTINGS)).unwrap()).unwrap();
        assert_eq!(
            without_header(serde_json::to_value(&s).unwrap()),
            without_header(old)
        );
    }

    #[test]
    fn new_settings_round_trip_opening_with_their_header() {
        let old = ProjectSettings::read(&example()).unwrap();
        let mut s = ProjectSettings {
            header: RunHeader::begin(Some(old.header.clone()), vec!["coherence".into()]),
            ..old
        };
        s.header.end(false);
        let dir = tempfile::tempdir().unwrap();
        folder(dir.path()).write_manifest(&s).unwrap();
        let back = ProjectSettings::read(dir.path()).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.header.status, RunStatus::Finished);
        assert_eq!(back.header.invocations.len(), 2);
        assert!(back.header.updated_at > UNKNOWN_TIME);
        assert_eq!(
            back.header.created_at, UNKNOWN_TIME,
            "an old run's start stays unknown"
        );
    }
}
