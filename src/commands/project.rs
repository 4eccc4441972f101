//! `coherence project`: send each project task's specification to every endpoint (temperature
//! 0, no streaming), journal each answer as it arrives, then evaluate every answer in the JS
//! sandbox and write results.json and report.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::cli::ProjectArgs;
use crate::endpoint::EndpointSpec;
use crate::error::{CliError, Exit, UsageContext};
use crate::project::results::{Answer, ProjectResults, TaskResult};
use crate::project::{self, Task};
use crate::run::request::request_hash;
use crate::run::{interrupted, resolve_targets, Record, RecordKey, RunError, Target};
use crate::run_folder::{
    create_run_dir, new_run_dir, read_json_lines, read_run_file, tool_version, write_atomic,
    JsonLines,
};

use super::flags::{client_options, endpoint_specs, parse_params, with_keys};
use super::stdout::print;

const SETTINGS: &str = "project.json";
const JOURNAL: &str = "records.jsonl";

/// What a project run was started with; `--resume` reads it back.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Settings {
    tool: String,
    projects: PathBuf,
    tasks: Vec<String>,
    endpoints: Vec<EndpointSpec>,
    max_tokens: Option<u32>,
    params: Map<String, Value>,
    invocations: Vec<Vec<String>>,
}

pub fn project(args: &ProjectArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    let previous: Option<Settings> = match &args.resume {
        Some(dir) => Some(
            read_run_file(dir, SETTINGS, "project run", "project settings")
                .map_err(CliError::unreadable)?,
        ),
        None => None,
    };
    let base = previous
        .as_ref()
        .map(|p| p.endpoints.clone())
        .unwrap_or_default();
    let specs = endpoint_specs(&args.endpoints, base).usage_err()?;
    if specs.is_empty() {
        return Err(CliError::usage(anyhow!(
            "name at least one endpoint with --endpoint NAME=URL"
        )));
    }
    let projects_dir = args
        .projects
        .clone()
        .or_else(|| previous.as_ref().map(|p| p.projects.clone()))
        .unwrap_or_else(|| project::task::projects_dir(None));
    let ids = if !args.tasks.is_empty() {
        args.tasks.clone()
    } else if let Some(p) = &previous {
        p.tasks.clone()
    } else {
        project::task_ids(&projects_dir).map_err(|e| CliError::usage(anyhow!(e)))?
    };
    let tasks: Vec<Task> = ids
        .iter()
        .map(|id| project::load_task(&projects_dir, id))
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::usage(anyhow!(e)))?;
    let base_params = previous
        .as_ref()
        .map(|p| p.params.clone())
        .unwrap_or_default();
    let params = parse_params(&args.params, base_params).usage_err()?;
    let max_tokens = args
        .max_tokens
        .or(previous.as_ref().and_then(|p| p.max_tokens));
    let client = client_options(&args.client).usage_err()?;
    let endpoints = with_keys(specs).usage_err()?;
    let names: Vec<&str> = endpoints.iter().map(|e| e.spec.name.as_str()).collect();
    let dir = args
        .resume
        .clone()
        .or_else(|| args.out.clone())
        .unwrap_or_else(|| new_run_dir(Some("project"), &names));
    let argv: Vec<String> = argv
        .into_iter()
        .map(|a| {
            endpoints
                .iter()
                .filter_map(|e| e.key.as_ref())
                .fold(a, |a, k| k.redact(&a))
        })
        .collect();

    let rt = super::runtime()?;
    let (records, interrupted_run) = rt.block_on(async {
        let targets = resolve_targets(&endpoints, &client).await?;
        create_run_dir(&dir).map_err(RunError::Folder)?;
        let mut invocations = previous
            .as_ref()
            .map(|p| p.invocations.clone())
            .unwrap_or_default();
        invocations.push(argv);
        let settings = Settings {
            tool: tool_version(),
            projects: projects_dir.clone(),
            tasks: ids.clone(),
            endpoints: endpoints
                .iter()
                .zip(&targets)
                .map(|(e, (t, _))| EndpointSpec {
                    model: Some(t.model.clone()),
                    ..e.spec.clone()
                })
                .collect(),
            max_tokens,
            params: params.clone(),
            invocations,
        };
        let body = serde_json::to_vec_pretty(&settings).map_err(|e| RunError::Folder(e.into()))?;
        write_atomic(&dir.join(SETTINGS), &body).map_err(RunError::Folder)?;
        let targets: Vec<Target> = targets.into_iter().map(|(t, _)| t).collect();
        send_missing(&dir, &tasks, &targets, max_tokens, &params, args.quiet)
            .await
            .map_err(RunError::Send)
    })?;

    let worker = crate::score::js::default_worker();
    let mut complete = !interrupted_run;
    let mut results = Vec::new();
    for task in &tasks {
        let mut answers = BTreeMap::new();
        for e in &endpoints {
            let name = &e.spec.name;
            let Some(record) = records.get(&(task.id.clone(), name.clone())) else {
                complete = false;
                continue;
            };
            if !args.quiet {
                eprintln!("evaluating {} from {name} in the sandbox", task.id);
            }
            let answer =
                answer_of(task, record, &worker).map_err(|e| CliError::usage(anyhow!(e)))?;
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
    let results = ProjectResults {
        tool: tool_version(),
        endpoints: endpoints.iter().map(|e| e.spec.name.clone()).collect(),
        complete,
        tasks: results,
    };
    write_reports(&dir, &results).map_err(CliError::output)?;
    print(&summary(&dir, &results))?;
    Ok(if !complete {
        Exit::Incomplete
    } else if results
        .tasks
        .iter()
        .any(|t| t.answers.values().any(|a| !a.playable))
    {
        Exit::GateFailed
    } else {
        Exit::Success
    })
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
async fn send_missing(
    dir: &Path,
    tasks: &[Task],
    targets: &[Target],
    max_tokens: Option<u32>,
    params: &Map<String, Value>,
    quiet: bool,
) -> anyhow::Result<(BTreeMap<Key, Record>, bool)> {
    let path = dir.join(JOURNAL);
    let loaded = read_json_lines::<Record>(&path)?;
    for s in &loaded.skipped {
        eprintln!("warning: {s}");
    }
    let mut latest: BTreeMap<Key, Record> = BTreeMap::new();
    for r in loaded.values {
        latest.insert((r.prompt.clone(), r.endpoint.clone()), r);
    }
    let mut journal = JsonLines::append_to(&path)?;
    let mut pending = futures::stream::FuturesUnordered::new();
    for task in tasks {
        for target in targets {
            let key = (task.id.clone(), target.name.clone());
            if latest.get(&key).is_some_and(|r| !r.is_request_failure()) {
                continue;
            }
            let budget = max_tokens.unwrap_or(task.max_tokens);
            let body = request_body(task, &target.model, budget, params);
            if !quiet {
                eprintln!(
                    "sending {} to {} ({} tokens max)",
                    task.id, target.name, budget
                );
            }
            let (task_id, target) = (task.id.clone(), target.clone());
            pending.push(async move {
                let started_at = chrono::Utc::now();
                let ex = target.client.complete("chat/completions", &body).await;
                let key = RecordKey {
                    prompt: task_id,
                    endpoint: target.name.clone(),
                    max_tokens: budget,
                    repeat: 0,
                };
                // The answer is kept as the record's content; the body would only repeat it.
                Record {
                    raw_body: None,
                    ..Record::of_exchange(key, request_hash(&body), started_at, ex)
                }
            });
        }
    }
    use futures::StreamExt;
    let stop = interrupted();
    tokio::pin!(stop);
    let mut was_interrupted = false;
    loop {
        tokio::select! {
            next = pending.next() => match next {
                Some(record) => {
                    journal.append(&record)?;
                    if !quiet {
                        let outcome = record.error.as_ref().map_or_else(
                            || format!("{} completion tokens", record.completion.usage.and_then(|u| u.completion_tokens).unwrap_or(0)),
                            |e| format!("failed: {e}"),
                        );
                        eprintln!("{} from {}: {outcome} in {:.1} s", record.prompt, record.endpoint, record.elapsed_ms / 1000.0);
                    }
                    latest.insert((record.prompt.clone(), record.endpoint.clone()), record);
                }
                None => break,
            },
            _ = &mut stop => {
                was_interrupted = true;
                break;
            }
        }
    }
    Ok((latest, was_interrupted))
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
        Some(project::evaluate(task, &text, worker)?)
    } else {
        None
    };
    Ok(Answer {
        requirements: evaluation.as_ref().map(|e| e.requirements).unwrap_or(
            crate::project::results::Counts {
                missing: task.requirements.len(),
                total: task.requirements.len(),
                ..Default::default()
            },
        ),
        playable: evaluation.as_ref().is_some_and(|e| e.playable),
        runtime_error: evaluation.as_ref().and_then(|e| e.runtime_error.clone()),
        elapsed_s: Some(record.elapsed_ms / 1000.0),
        completion_tokens: c.usage.and_then(|u| u.completion_tokens),
        prompt_tokens: c.usage.and_then(|u| u.prompt_tokens),
        finish_reason: c.finish_reason.clone(),
        output_bytes: text.len(),
        output_lines: text.lines().count(),
        reasoning_bytes: c.reasoning.as_ref().map_or(0, String::len),
        request_error: record
            .error
            .as_ref()
            .filter(|_| !usable)
            .map(|e| e.to_string()),
        evaluation,
    })
}

fn write_reports(dir: &Path, results: &ProjectResults) -> anyhow::Result<()> {
    let json = serde_json::to_vec_pretty(results).context("cannot serialise results.json")?;
    write_atomic(&dir.join("results.json"), &json)?;
    write_atomic(
        &dir.join("report.md"),
        project::report::render(results).as_bytes(),
    )?;
    if !dir.join("results.json").is_file() {
        bail!("results.json was not written");
    }
    Ok(())
}

fn summary(dir: &Path, results: &ProjectResults) -> String {
    let mut out = String::new();
    for task in &results.tasks {
        for name in &results.endpoints {
            let line = match task.answers.get(name) {
                Some(a) => {
                    let r = a.requirements;
                    let playable = if a.playable {
                        "playable"
                    } else {
                        "not playable"
                    };
                    let error = a
                        .runtime_error
                        .as_deref()
                        .map(|e| format!("; first error: {e}"))
                        .unwrap_or_default();
                    let failed = a
                        .request_error
                        .as_deref()
                        .map(|e| format!("; request failed: {e}"))
                        .unwrap_or_default();
                    format!(
                        "{}: {} met, {} partial, {} missing of {}; {playable}{error}{failed}",
                        task.id, r.met, r.partial, r.missing, r.total
                    )
                }
                None => format!("{}: no answer (run interrupted)", task.id),
            };
            out.push_str(&format!("{name} {line}\n"));
        }
    }
    out.push_str(&format!("report: {}\n", dir.join("report.md").display()));
    out
}
