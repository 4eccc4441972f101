//! `records.jsonl`: appended and flushed one record at a time; loaded and merged newest-wins.

use std::collections::BTreeMap;
use std::path::Path;

use super::record::{Record, RecordKey};
use crate::run_folder::{CompareFolder, JsonLines};

/// An append-only journal: each record is one line, flushed before the next.
pub struct Journal(JsonLines);

impl Journal {
    /// Open for appending, first cutting off a torn last line left by a killed run.
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        CompareFolder::new(dir)
            .append_to(CompareFolder::RECORDS)
            .map(Journal)
    }

    pub fn append(&mut self, record: &Record) -> anyhow::Result<()> {
        self.0.append(record)
    }
}

/// Everything read back from a journal.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Records in file order (oldest first).
    pub records: Vec<Record>,
    /// Lines that could not be read, as `file:line: reason` (a torn last line is one of them).
    pub skipped: Vec<String>,
}

/// Read every record; unreadable lines are skipped and reported, never fatal.
pub fn load(dir: &Path) -> anyhow::Result<Loaded> {
    let lines = CompareFolder::new(dir).read_lines(CompareFolder::RECORDS)?;
    Ok(Loaded {
        records: lines.values,
        skipped: lines.skipped,
    })
}

/// Newest record per key (later lines win), with its position in the journal.
pub fn merge(records: &[Record]) -> BTreeMap<RecordKey, (usize, &Record)> {
    let mut merged = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        merged.insert(r.key(), (i, r));
    }
    merged
}

/// Where one answer belongs: a repeat of a prompt on an endpoint, at whatever budget.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    pub prompt: String,
    pub endpoint: String,
    pub repeat: u32,
}

impl Slot {
    pub fn of(r: &Record) -> Slot {
        Slot {
            prompt: r.prompt.clone(),
            endpoint: r.endpoint.clone(),
            repeat: r.repeat,
        }
    }
}

/// The record that answers each (prompt, endpoint, repeat): among the merged records at any
/// budget, the newest usable one, else the newest one. A re-run at a larger budget therefore
/// replaces the earlier answer.
pub fn effective(records: &[Record]) -> BTreeMap<Slot, &Record> {
    let mut best: BTreeMap<Slot, (usize, &Record)> = BTreeMap::new();
    for (i, r) in merge(records).into_values() {
        let slot = Slot::of(r);
        let better = match best.get(&slot) {
            None => true,
            Some((j, cur)) => match (r.is_usable(), cur.is_usable()) {
                (true, false) => true,
                (false, true) => false,
                _ => i > *j,
            },
        };
        if better {
            best.insert(slot, (i, r));
        }
    }
    best.into_iter().map(|(k, (_, r))| (k, r)).collect()
}
