//! Sending one probe and journalling it: what every phase shares.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::journal::{Condition, LoadJournal, LoadRecord, ProbeKey};
use super::pool::FillerPool;
use super::Target;
use crate::catalogue::Prompt;
use crate::run::{send, Job, Progress, Sampling};

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

impl Probes<'_> {
    pub fn is_done(&self, condition: Condition, prompt: &str, repeat: u32) -> bool {
        self.done.contains(&(
            condition,
            prompt.to_string(),
            self.target.name.clone(),
            repeat,
        ))
    }

    /// Send `prompt` once (alone, or while `fillers` keep the server busy) and journal it.
    pub async fn send(
        &mut self,
        prompt: &Arc<Prompt>,
        max_tokens: u32,
        repeat: u32,
        condition: Condition,
        fillers: Option<&FillerPool>,
    ) -> anyhow::Result<()> {
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
        self.write(LoadRecord {
            condition,
            fillers_at_send,
            fillers_at_return,
            record,
        })
    }

    /// Journal a probe that was sent elsewhere (the samples phase sends several at once).
    pub fn write(&mut self, record: LoadRecord) -> anyhow::Result<()> {
        self.journal.append(&record)?;
        self.progress.record(&record.record);
        Ok(())
    }
}
