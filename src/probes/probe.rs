//! Sending probes and journalling them: what every phase shares. Probes go through the request
//! engine (`engine::drive`), one lane for the endpoint, each probe journalled as it returns.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;

use super::journal::{LoadJournal, LoadRecord, ProbeCondition, ProbeKey};
use super::pool::FillerPool;
use super::Target;
use crate::catalogue::Prompt;
use crate::engine::{drive, Keep, Lane, Progress};
use crate::run::{send, tally, Job, Sampling};

/// One endpoint's share of a load run: where probes go and where they are written.
pub struct Probes<'a> {
    pub target: &'a Target,
    pub endpoint: usize,
    pub sampling: &'a Sampling,
    pub journal: &'a mut LoadJournal,
    pub progress: &'a mut Progress,
    /// Probes already answered in an earlier invocation.
    pub done: &'a BTreeSet<ProbeKey>,
}

/// Where a probe goes: the endpoint with its index and the sampling of the run.
#[derive(Clone, Copy)]
pub struct Destination<'a> {
    pub target: &'a Target,
    pub endpoint: usize,
    pub sampling: &'a Sampling,
}

impl Destination<'_> {
    /// Send `prompt` once (alone, or while `fillers` keep the server busy).
    pub async fn probe(
        self,
        prompt: &Arc<Prompt>,
        max_tokens: u32,
        repeat: u32,
        condition: ProbeCondition,
        fillers: Option<&FillerPool>,
    ) -> LoadRecord {
        let job = Job {
            prompt: prompt.clone(),
            endpoint: self.endpoint,
            max_tokens,
            repeat,
            note: None,
        };
        let fillers_at_send = fillers.map(|f| f.in_flight() as u32);
        let record = send(self.target, &job, self.sampling).await;
        let fillers_at_return = fillers.map(|f| f.in_flight() as u32);
        LoadRecord {
            condition,
            fillers_at_send,
            fillers_at_return,
            record,
        }
    }
}

impl<'a> Probes<'a> {
    pub fn is_done(&self, condition: ProbeCondition, prompt: &str, repeat: u32) -> bool {
        self.done.contains(&(
            condition,
            prompt.to_string(),
            self.target.name.clone(),
            repeat,
        ))
    }

    pub fn destination(&self) -> Destination<'a> {
        Destination {
            target: self.target,
            endpoint: self.endpoint,
            sampling: self.sampling,
        }
    }

    /// Send `jobs` on the engine, at most `limit` at once, journalling the probes each returns
    /// as they arrive. Returns whether Ctrl-C or SIGTERM stopped it.
    pub async fn drive<J, F, Fut>(
        &mut self,
        jobs: Vec<J>,
        limit: usize,
        send: F,
    ) -> anyhow::Result<bool>
    where
        J: Send,
        F: Fn(J) -> Fut,
        Fut: Future<Output = Vec<LoadRecord>>,
    {
        let (journal, progress) = (&mut *self.journal, &mut *self.progress);
        let driven = drive(
            vec![Lane::new(jobs, limit)],
            |job, _| send(job),
            &mut Keep(|records: Vec<LoadRecord>| {
                for r in records {
                    journal.append(&r)?;
                    progress.record(&r.record.endpoint, tally(&r.record));
                }
                Ok(())
            }),
        )
        .await?;
        Ok(driven.interrupted)
    }
}
