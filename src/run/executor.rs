//! Sends the planned requests with bounded concurrency per endpoint; every outcome becomes a
//! record appended to the journal as soon as it arrives. Ctrl-C stops sending and keeps what
//! has arrived.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::journal::Journal;
use super::manifest::Sampling;
use super::progress::Progress;
use super::record::{Record, RecordKey};
use super::request::{build_request, request_hash};
use crate::catalogue::Prompt;
use crate::endpoint::{Client, FailureKind};

/// One request to make.
#[derive(Debug, Clone)]
pub struct Job {
    pub prompt: Arc<Prompt>,
    pub endpoint: usize,
    pub max_tokens: u32,
    pub repeat: u32,
    /// Why this request is made, when it is not part of the plan (a reasoning retry).
    pub note: Option<String>,
}

impl Job {
    /// The re-run of this job at `budget` after its reasoning used the whole budget, if it is larger.
    pub fn reasoning_retry(&self, budget: u32) -> Option<Job> {
        (budget > self.max_tokens).then(|| Job {
            max_tokens: budget,
            note: Some(format!(
                "the reasoning used the whole budget of {} tokens; re-run automatically at {budget} (--reasoning-retry-budget)",
                self.max_tokens
            )),
            ..self.clone()
        })
    }
}

/// An endpoint with its resolved model and client.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub model: String,
    pub client: Client,
    /// Request fields for this endpoint only (see `EndpointSpec::sampling_override`).
    pub sampling_override: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Default)]
pub struct Execution {
    pub sent: usize,
    pub interrupted: bool,
}

/// Run `jobs`, at most `concurrency` in flight per endpoint, appending each record to `journal`.
pub async fn execute(
    jobs: Vec<Job>,
    targets: &[Target],
    concurrency: usize,
    sampling: &Sampling,
    reasoning_retry_budget: u32,
    journal: &mut Journal,
    progress: &mut Progress,
) -> anyhow::Result<Execution> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Record>();
    // One queue per endpoint, drained in plan order by `concurrency` workers: requests start in
    // the order they were planned (with concurrency 1, strictly one after another).
    let mut queues: Vec<VecDeque<Job>> = targets.iter().map(|_| VecDeque::new()).collect();
    for job in jobs {
        queues[job.endpoint].push_back(job);
    }
    let sampling = Arc::new(sampling.clone());
    let mut tasks = JoinSet::new();
    for (target, queue) in targets.iter().zip(queues) {
        let queue = Arc::new(Mutex::new(queue));
        for _ in 0..concurrency {
            let (target, queue, tx, sampling) =
                (target.clone(), queue.clone(), tx.clone(), sampling.clone());
            tasks.spawn(async move {
                loop {
                    let Some(job) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
                    else {
                        break;
                    };
                    let record = send(&target, &job, &sampling).await;
                    let retry = record
                        .error
                        .as_ref()
                        .filter(|e| e.kind == FailureKind::ReasoningConsumedBudget)
                        .and_then(|_| job.reasoning_retry(reasoning_retry_budget));
                    let _ = tx.send(record);
                    if let Some(retry) = retry {
                        let _ = tx.send(send(&target, &retry, &sampling).await);
                    }
                }
            });
        }
    }
    drop(tx);

    let mut execution = Execution::default();
    let interrupt = interrupted();
    tokio::pin!(interrupt);
    loop {
        tokio::select! {
            next = rx.recv() => match next {
                Some(record) => {
                    journal.append(&record)?;
                    progress.record(&record);
                    execution.sent += 1;
                }
                None => break,
            },
            _ = &mut interrupt => {
                execution.interrupted = true;
                tasks.abort_all();
                while let Ok(record) = rx.try_recv() {
                    journal.append(&record)?;
                    progress.record(&record);
                    execution.sent += 1;
                }
                break;
            }
        }
    }
    progress.finish();
    Ok(execution)
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Send one request (with the client's retries) and turn the exchange into a record.
pub async fn send(target: &Target, job: &Job, sampling: &Sampling) -> Record {
    let (path, mut body) = build_request(&job.prompt, &target.model, job.max_tokens, sampling);
    for (k, v) in &target.sampling_override {
        body[k.as_str()] = v.clone();
    }
    let started_at = chrono::Utc::now();
    let ex = target.client.complete(path, &body).await;
    let key = RecordKey {
        prompt: job.prompt.id.clone(),
        endpoint: target.name.clone(),
        max_tokens: job.max_tokens,
        repeat: job.repeat,
    };
    Record {
        note: job.note.clone(),
        ..Record::of_exchange(key, request_hash(&body), started_at, ex)
    }
}
