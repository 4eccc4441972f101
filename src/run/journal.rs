//! `records.jsonl`: appended and flushed one record at a time; loaded and merged newest-wins.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::record::{Answered, Line, Record, RecordKey};
use crate::endpoint::{Completion, Text};
use crate::run_folder::{compare, read_json_lines_as, JsonLines};
use crate::text::Strings;

/// An append-only journal: each record is one line, flushed before the next. Opened with
/// [`Journal::open_kept`], it also keeps every record it holds as scoring keeps it: those read
/// when it opened and each one appended since.
pub struct Journal {
    lines: JsonLines,
    kept: Option<ForScoring>,
}

impl Journal {
    /// Open for appending, first cutting off a torn last line left by a killed run.
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        let lines = compare::folder(dir).append_to(compare::RECORDS)?;
        Ok(Journal { lines, kept: None })
    }

    /// [`Journal::open`], then read what the journal holds and keep it, with every record
    /// appended from now on ([`Journal::kept`]).
    pub fn open_kept(dir: &Path) -> anyhow::Result<Self> {
        Self::open_kept_in(dir, compare::RECORDS)
    }

    /// [`Journal::open_kept`] on another journal of the run folder (`calibration.jsonl`).
    pub fn open_kept_in(dir: &Path, name: &str) -> anyhow::Result<Self> {
        let lines = compare::folder(dir).append_to(name)?;
        let kept = Some(load_for_scoring_in(dir, name)?);
        Ok(Journal { lines, kept })
    }

    pub fn append(&mut self, record: Record) -> anyhow::Result<()> {
        self.lines.append(&record)?;
        if let Some(kept) = &mut self.kept {
            kept.add(record);
        }
        Ok(())
    }

    /// The records kept (none unless opened with [`Journal::open_kept`]).
    pub fn kept(&self) -> &[Answered] {
        self.kept.as_ref().map_or(&[], |k| &k.records)
    }

    /// The journal's unreadable lines met when it was read (none unless kept).
    pub fn skipped(&self) -> &[String] {
        self.kept.as_ref().map_or(&[], |k| &k.skipped)
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
    let lines = compare::folder(dir).read_lines(compare::RECORDS)?;
    Ok(Loaded {
        records: lines.values,
        skipped: lines.skipped,
    })
}

/// What scoring reads back from a journal; records sent later are added as they arrive
/// ([`ForScoring::add`]), sharing texts with those read.
#[derive(Debug, Default)]
pub struct ForScoring {
    /// Records in file order (oldest first), as scoring keeps them.
    pub records: Vec<Answered>,
    /// Lines that could not be read, as `file:line: reason` (a torn last line is one of them).
    pub skipped: Vec<String>,
    shared: Shared,
}

impl ForScoring {
    /// Keep `record` (sent after the journal was read) as scoring keeps it.
    pub fn add(&mut self, record: Record) {
        let answered = self.shared.answered(record);
        self.records.push(answered);
    }
}

/// Read every record for scoring: as `load`, with each line turned into an [`Answered`] as it is
/// read (its raw response body dropped once its logprobs and tool calls are parsed, its names,
/// texts and completion shared with every earlier line that said the same). Scoring never reads
/// the body, and repeats at temperature 0 mostly say the same thing, so memory grows with the
/// distinct answers of a run and a small handle per line rather than with whole records.
pub fn load_for_scoring(dir: &Path) -> anyhow::Result<ForScoring> {
    load_for_scoring_in(dir, compare::RECORDS)
}

/// [`load_for_scoring`] of the run folder's journal `name`.
fn load_for_scoring_in(dir: &Path, name: &str) -> anyhow::Result<ForScoring> {
    let mut shared = Shared::default();
    let path = compare::folder(dir).file(name);
    let lines = read_json_lines_as(&path, |record: Record| shared.answered(record))?;
    Ok(ForScoring {
        records: lines.values,
        skipped: lines.skipped,
        shared,
    })
}

/// One copy of each distinct name and text, and of each endpoint's distinct completions.
#[derive(Debug, Default)]
struct Shared {
    strings: Strings,
    /// The last completion each endpoint gave with a given content: a repeat that matches it in
    /// every field (usage, logprobs, tool calls…) shares it.
    completions: HashMap<(Arc<str>, Option<Text>), Arc<Completion>>,
}

impl Shared {
    fn answered(&mut self, record: Record) -> Answered {
        let endpoint = self.strings.get(&record.endpoint);
        Answered {
            prompt: self.strings.get(&record.prompt),
            completion: self.completion(&endpoint, record.completion),
            endpoint,
            max_tokens: record.max_tokens,
            repeat: record.repeat,
            started_at: record.started_at,
            latency_ms: record.latency_ms,
            elapsed_ms: record.elapsed_ms,
            server: record.server.as_deref().map(|s| self.strings.get(s)),
            error: record.error,
            note: record.note,
        }
    }

    fn completion(&mut self, endpoint: &Arc<str>, mut completion: Completion) -> Arc<Completion> {
        for text in [
            &mut completion.content,
            &mut completion.answer,
            &mut completion.reasoning,
        ]
        .into_iter()
        .flatten()
        {
            self.strings.share(text);
        }
        let key = (endpoint.clone(), completion.content.clone());
        match self.completions.get(&key) {
            Some(kept) if **kept == completion => kept.clone(),
            _ => {
                let kept = Arc::new(completion);
                self.completions.insert(key, kept.clone());
                kept
            }
        }
    }
}

/// Newest record per key (later lines win), with its position in the journal.
pub fn merge<R: Line>(records: &[R]) -> BTreeMap<RecordKey, (usize, &R)> {
    merged(records)
        .into_iter()
        .map(|((prompt, endpoint, max_tokens, repeat), line)| {
            let key = RecordKey {
                prompt: prompt.to_string(),
                endpoint: endpoint.to_string(),
                max_tokens,
                repeat,
            };
            (key, line)
        })
        .collect()
}

/// As `merge`, keyed by the lines' own names (prompt, endpoint, max_tokens, repeat), in the same
/// order, without copying them.
fn merged<R: Line>(records: &[R]) -> BTreeMap<(&str, &str, u32, u32), (usize, &R)> {
    let mut merged = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        merged.insert(
            (r.prompt(), r.endpoint(), r.max_tokens(), r.repeat()),
            (i, r),
        );
    }
    merged
}

/// Where one answer belongs: a repeat of a prompt on an endpoint, at whatever budget. Its names
/// are owned (`String`) or borrowed from the journal's lines (`&str`, see [`effective_in`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot<S = String> {
    pub prompt: S,
    pub endpoint: S,
    pub repeat: u32,
}

impl<'a> Slot<&'a str> {
    /// The slot `r` answers.
    pub fn of(r: &'a impl Line) -> Self {
        Slot {
            prompt: r.prompt(),
            endpoint: r.endpoint(),
            repeat: r.repeat(),
        }
    }
}

/// The record that answers each (prompt, endpoint, repeat): among the merged records at any
/// budget, the newest usable one, else the newest one. A re-run at a larger budget therefore
/// replaces the earlier answer.
pub fn effective<R: Line>(records: &[R]) -> BTreeMap<Slot, &R> {
    effective_in(records)
        .into_iter()
        .map(|(slot, r)| {
            let slot = Slot {
                prompt: slot.prompt.to_string(),
                endpoint: slot.endpoint.to_string(),
                repeat: slot.repeat,
            };
            (slot, r)
        })
        .collect()
}

/// As `effective`, keyed by slots that borrow the records' names: no copy of them per record.
pub fn effective_in<R: Line>(records: &[R]) -> BTreeMap<Slot<&str>, &R> {
    let mut best: BTreeMap<Slot<&str>, (usize, &R)> = BTreeMap::new();
    for ((prompt, endpoint, _, repeat), (i, r)) in merged(records) {
        let slot = Slot {
            prompt,
            endpoint,
            repeat,
        };
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

    fn record(repeat: u32, text: &str, logprob: f64) -> Record {
        let body = serde_json::json!({
            "choices": [{"message": {"content": text}, "finish_reason": "stop",
                         "logprobs": {"content": [{"token": text, "logprob": logprob}]}}]
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
    fn scoring_reads_share_names_texts_and_equal_completions_and_keep_their_logprobs() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Journal::open(dir.path()).unwrap();
        for (repeat, text, logprob) in [
            (0, "42", -0.5),
            (1, "42", -0.5),
            (2, "41", -0.5),
            (3, "42", -0.7),
        ] {
            journal.append(record(repeat, text, logprob)).unwrap();
        }
        let full = load(dir.path()).unwrap().records;
        assert!(
            full.iter().all(|r| r.raw_body.is_some()),
            "load keeps bodies"
        );
        let read = load_for_scoring(dir.path()).unwrap().records;
        assert_eq!(read.len(), 4);
        assert_eq!(read[0].completion.token_texts().unwrap(), ["42"]);
        assert!(
            Arc::ptr_eq(&read[0].completion, &read[1].completion),
            "one copy of a repeated completion"
        );
        assert!(
            !Arc::ptr_eq(&read[0].completion, &read[3].completion),
            "the same text with other logprobs is another completion"
        );
        let text = |i: usize| read[i].completion.answer.clone().unwrap();
        assert!(
            Arc::ptr_eq(&text(0), &text(3)),
            "one copy of a repeated answer"
        );
        assert!(Arc::ptr_eq(
            &text(0),
            read[0].completion.content.as_ref().unwrap()
        ));
        assert!(Arc::ptr_eq(&read[0].prompt, &read[2].prompt));
        assert!(Arc::ptr_eq(&read[0].endpoint, &read[3].endpoint));
        assert_eq!(&*text(2), "41");
        for (kept, whole) in read.iter().zip(&full) {
            assert_eq!(*kept.completion, whole.completion);
            assert_eq!(kept.key(), whole.key());
            assert_eq!(
                (kept.started_at, kept.latency_ms, &kept.error, &kept.note),
                (
                    whole.started_at,
                    whole.latency_ms,
                    &whole.error,
                    &whole.note
                )
            );
            assert_eq!(kept.server.as_deref(), whole.server.as_deref());
        }
    }

    #[test]
    fn the_effective_answer_is_the_newest_usable_one_at_any_budget_whichever_keys_name_it() {
        let mut failed = record(0, "x", -0.5);
        failed.max_tokens = 16;
        failed.error = Some(crate::endpoint::Failure::new(
            crate::endpoint::FailureKind::Timeout,
            "timed out",
        ));
        let records = [
            record(0, "first", -0.5),
            failed,
            record(0, "second", -0.5),
            record(1, "other", -0.5),
        ];
        let owned = effective(&records);
        let borrowed = effective_in(&records);
        assert_eq!(owned.len(), 2);
        let answer = |r: &Record| r.completion.answer.as_deref().unwrap().to_string();
        let slot = Slot {
            prompt: "p".to_string(),
            endpoint: "e".to_string(),
            repeat: 0,
        };
        assert_eq!(answer(owned[&slot]), "second");
        assert_eq!(answer(borrowed[&Slot::of(&records[0])]), "second");
        for ((o, a), (b, c)) in owned.iter().zip(&borrowed) {
            assert_eq!(
                (o.prompt.as_str(), o.endpoint.as_str(), o.repeat),
                (b.prompt, b.endpoint, b.repeat)
            );
            assert!(std::ptr::eq(*a, *c));
        }
        assert_eq!(merge(&records).len(), 3, "one per budget and repeat");
    }
}
