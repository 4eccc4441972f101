//! `load.jsonl`: every probe of the load, cache-state and samples phases, one flushed line each,
//! with the condition it was sent under. Fillers and primers are never journalled.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::run::Line;
use crate::run::Record;
use crate::run_folder::{compare, JsonLines, Lines};

/// The state of the server's prompt cache a cache-state probe was sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheState {
    /// Right after unrelated prompts.
    Cold,
    /// The same request again, immediately after `Cold`.
    Warm,
    /// Behind the shared preamble, right after an unrelated prompt without it.
    PrefixCold,
    /// Behind the shared preamble, right after another question behind the same preamble.
    PrefixCached,
}

impl CacheState {
    pub const ALL: [CacheState; 4] = [
        CacheState::Cold,
        CacheState::Warm,
        CacheState::PrefixCold,
        CacheState::PrefixCached,
    ];

    pub fn label(self) -> &'static str {
        match self {
            CacheState::Cold => "cold",
            CacheState::Warm => "warm",
            CacheState::PrefixCold => "prefix, cold",
            CacheState::PrefixCached => "prefix, cached",
        }
    }
}

/// What else was going on when a probe was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProbeCondition {
    /// Amid `load` concurrent filler requests (0: alone).
    Load { load: u32 },
    /// In one prompt-cache state.
    Cache { state: CacheState },
    /// One of `--samples N` completions of one prompt.
    Sample,
}

/// One probe: the condition, what the client saw in flight, and the usual record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadRecord {
    pub condition: ProbeCondition,
    /// Filler requests in flight (sent, not yet answered) when the probe was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fillers_at_send: Option<u32>,
    /// Filler requests in flight when the probe's response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fillers_at_return: Option<u32>,
    #[serde(flatten)]
    pub record: Record,
}

/// Probes are merged on this key: the newest record per key wins.
pub type ProbeKey = (ProbeCondition, String, String, u32);

impl LoadRecord {
    pub fn key(&self) -> ProbeKey {
        (
            self.condition,
            self.record.prompt.clone(),
            self.record.endpoint.clone(),
            self.record.repeat,
        )
    }
}

/// The load journal, appended a flushed line at a time.
pub struct LoadJournal(JsonLines);

impl LoadJournal {
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        compare::folder(dir)
            .append_to(compare::LOAD)
            .map(LoadJournal)
    }

    pub fn append(&mut self, record: &LoadRecord) -> anyhow::Result<()> {
        self.0.append(record)
    }
}

/// Every readable probe (none when the file does not exist); unreadable lines are reported.
pub fn load(dir: &Path) -> anyhow::Result<Lines<LoadRecord>> {
    compare::folder(dir).read_lines(compare::LOAD)
}

/// Newest probe per key, in key order.
pub fn merge(records: &[LoadRecord]) -> BTreeMap<ProbeKey, &LoadRecord> {
    records.iter().map(|r| (r.key(), r)).collect()
}

/// Keys that hold an answer (a request failure is sent again on resume).
pub fn answered(records: &[LoadRecord]) -> std::collections::BTreeSet<ProbeKey> {
    merge(records)
        .into_iter()
        .filter(|(_, r)| !r.record.is_request_failure())
        .map(|(k, _)| k)
        .collect()
}
