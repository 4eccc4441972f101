//! `records.jsonl`: appended and flushed one record at a time; loaded and merged newest-wins.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::record::{Record, RecordKey};

pub const RECORDS_FILE: &str = "records.jsonl";

/// An append-only journal. Each record is written as one line and flushed before the next.
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Open for appending, first cutting off a torn last line left by a killed run.
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join(RECORDS_FILE);
        if path.exists() {
            truncate_torn_tail(&path)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {} for appending", path.display()))?;
        Ok(Journal { path, file })
    }

    pub fn append(&mut self, record: &Record) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|_| self.file.flush())
            .with_context(|| format!("cannot write to {}", self.path.display()))
    }
}

fn truncate_torn_tail(path: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    let file = OpenOptions::new().write(true).open(path)?;
    file.set_len(keep as u64)?;
    Ok(())
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
    let path = dir.join(RECORDS_FILE);
    let mut loaded = Loaded::default();
    if !path.exists() {
        return Ok(loaded);
    }
    let file = File::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
    for (i, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(&line) {
            Ok(r) => loaded.records.push(r),
            Err(e) => loaded.skipped.push(format!(
                "{}:{}: unreadable record skipped: {e}",
                path.display(),
                i + 1
            )),
        }
    }
    Ok(loaded)
}

/// Newest record per key (later lines win), with its position in the journal.
pub fn merge(records: &[Record]) -> BTreeMap<RecordKey, (usize, &Record)> {
    let mut merged = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        merged.insert(r.key(), (i, r));
    }
    merged
}

/// Where one (prompt, endpoint, repeat) is answered.
pub type Slot = (String, String, u32);

/// The record that answers each (prompt, endpoint, repeat): among the merged records at any
/// budget, the newest usable one, else the newest one. A re-run at a larger budget therefore
/// replaces the earlier answer.
pub fn effective(records: &[Record]) -> BTreeMap<Slot, &Record> {
    let mut best: BTreeMap<Slot, (usize, &Record)> = BTreeMap::new();
    for (i, r) in merge(records).into_values() {
        let slot = (r.prompt.clone(), r.endpoint.clone(), r.repeat);
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
