//! `records.jsonl`: appended and flushed one record at a time; loaded and merged newest-wins.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use super::record::{Record, RecordKey};
use crate::endpoint::{Completion, Text};
use crate::run_folder::{read_json_lines_as, CompareFolder, JsonLines};

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

/// Read every record for scoring: as `load`, with each record's raw response body dropped as it
/// is read (its logprobs and tool calls are parsed into the completion first) and its texts
/// shared with every earlier record that said the same. Scoring never reads the body, and repeats
/// at temperature 0 mostly say the same thing, so memory grows with the distinct answers of a run
/// rather than with its length.
pub fn load_for_scoring(dir: &Path) -> anyhow::Result<Loaded> {
    let mut texts = SharedTexts::default();
    let path = CompareFolder::new(dir).file(CompareFolder::RECORDS);
    let lines = read_json_lines_as(&path, |mut record: Record| {
        record.raw_body = None;
        texts.share(&mut record.completion);
        record
    })?;
    Ok(Loaded {
        records: lines.values,
        skipped: lines.skipped,
    })
}

/// One copy of each distinct completion text.
#[derive(Default)]
struct SharedTexts(HashSet<Text>);

impl SharedTexts {
    fn share(&mut self, completion: &mut Completion) {
        for text in [
            &mut completion.content,
            &mut completion.answer,
            &mut completion.reasoning,
        ]
        .into_iter()
        .flatten()
        {
            match self.0.get(text) {
                Some(kept) => *text = kept.clone(),
                None => {
                    self.0.insert(text.clone());
                }
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::Utc;

    use super::*;
    use crate::endpoint::{parse_completion, Exchange};

    fn record(repeat: u32, text: &str) -> Record {
        let body = serde_json::json!({
            "choices": [{"message": {"content": text}, "finish_reason": "stop",
                         "logprobs": {"content": [{"token": text, "logprob": -0.5}]}}]
        })
        .to_string();
        let ex = Exchange {
            status: Some(200),
            completion: parse_completion(&body).ok(),
            body: Some(body),
            ..Exchange::default()
        };
        let key = RecordKey {
            prompt: "p".into(),
            endpoint: "e".into(),
            max_tokens: 8,
            repeat,
        };
        Record::of_exchange(key, "h".into(), Utc::now(), ex)
    }

    #[test]
    fn scoring_reads_share_equal_texts_and_drop_the_bodies_but_keep_their_logprobs() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Journal::open(dir.path()).unwrap();
        for (repeat, text) in [(0, "42"), (1, "42"), (2, "41")] {
            journal.append(&record(repeat, text)).unwrap();
        }
        let full = load(dir.path()).unwrap().records;
        assert!(
            full.iter().all(|r| r.raw_body.is_some()),
            "load keeps bodies"
        );
        let read = load_for_scoring(dir.path()).unwrap().records;
        assert_eq!(read.len(), 3);
        assert!(read.iter().all(|r| r.raw_body.is_none()));
        assert_eq!(read[0].completion.token_texts().unwrap(), ["42"]);
        let text = |i: usize| read[i].completion.answer.clone().unwrap();
        assert!(
            Arc::ptr_eq(&text(0), &text(1)),
            "one copy of a repeated answer"
        );
        assert!(Arc::ptr_eq(
            &text(0),
            read[0].completion.content.as_ref().unwrap()
        ));
        assert_eq!(&*text(2), "41");
        for (shared, whole) in read.iter().zip(&full) {
            assert_eq!(shared.completion, whole.completion);
        }
    }
}
