//! Sends the planned requests with bounded concurrency per endpoint; every outcome becomes a
//! record appended to the journal as soon as it arrives (on `engine::drive`). Ctrl-C stops
//! sending and keeps what has arrived.

use std::sync::Arc;

use super::journal::Journal;
use super::manifest::Sampling;
use super::record::{Line, Record, RecordKey};
use super::request::{endpoint_request, request_hash};
use crate::catalogue::Prompt;
use crate::endpoint::{Client, FailureKind};
use crate::engine::{drive, Lane, Progress, Sink, Tally};

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

/// Run `jobs`, at most `concurrency` in flight per endpoint (in plan order: with concurrency 1,
/// strictly one after another), appending each record to `journal` as it arrives. A request
/// whose reasoning used the whole budget is re-run at `reasoning_retry_budget` on its endpoint.
pub async fn execute(
    jobs: Vec<Job>,
    targets: &[Target],
    concurrency: usize,
    sampling: &Sampling,
    reasoning_retry_budget: u32,
    journal: &mut Journal,
    progress: &mut Progress,
) -> anyhow::Result<Execution> {
    let mut queues: Vec<Vec<Job>> = targets.iter().map(|_| Vec::new()).collect();
    for job in jobs {
        if let Some(queue) = queues.get_mut(job.endpoint) {
            queue.push(job);
        }
    }
    let lanes = queues
        .into_iter()
        .map(|queue| Lane::new(queue, concurrency))
        .collect();
    let mut sink = Journalled {
        journal,
        progress,
        reasoning_retry_budget,
    };
    let driven = drive(
        lanes,
        |job: Job, _| async move {
            let record = send(&targets[job.endpoint], &job, sampling).await;
            (job, record)
        },
        &mut sink,
    )
    .await;
    sink.progress.finish();
    let driven = driven?;
    Ok(Execution {
        sent: driven.delivered,
        interrupted: driven.interrupted,
    })
}

/// Every record journalled and counted as it arrives; a reasoning budget overrun asks for its
/// retry.
struct Journalled<'a> {
    journal: &'a mut Journal,
    progress: &'a mut Progress,
    reasoning_retry_budget: u32,
}

impl Sink<Job, (Job, Record)> for Journalled<'_> {
    fn take(&mut self, (job, record): (Job, Record)) -> anyhow::Result<Option<Job>> {
        self.progress.record(&record.endpoint, tally(&record));
        let consumed = record
            .error
            .as_ref()
            .is_some_and(|e| e.kind == FailureKind::ReasoningConsumedBudget);
        self.journal.append(record)?;
        Ok(consumed
            .then(|| job.reasoning_retry(self.reasoning_retry_budget))
            .flatten())
    }

    fn tick(&mut self) {
        self.progress.heartbeat();
    }
}

/// How progress counts a record: a retry is not part of the plan; its error is printed.
pub fn tally(r: &Record) -> Tally {
    Tally {
        planned: r.note.is_none(),
        failed: r.is_request_failure(),
        line: r
            .error
            .as_ref()
            .map(|e| format!("{}: {} failed: {e}", r.endpoint, r.prompt)),
    }
}

/// Send one request (with the client's retries) and turn the exchange into a record.
pub async fn send(target: &Target, job: &Job, sampling: &Sampling) -> Record {
    let (path, body) = endpoint_request(
        &job.prompt,
        &target.model,
        job.max_tokens,
        sampling,
        &target.sampling_override,
    );
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
