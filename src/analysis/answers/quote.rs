//! What results.json (and so every report written from it: report.md, report.html, junit.xml,
//! comparison_table.md) quotes of a reply: at most [`QUOTE_BYTES`] of each text, cut on a
//! character boundary with a marker saying so and how long the text is in full. records.jsonl
//! keeps every text whole; scoring and verdicts read the whole texts before they are quoted.

use std::collections::BTreeMap;
use std::sync::Arc;

/// The most bytes of one reply text results.json quotes: 16 KiB, above any answer of the
/// committed example runs (9 KB at most), far below the 16 MiB one reply may hold.
pub const QUOTE_BYTES: usize = 16 * 1024;

/// The marker that ends a clipped quote.
fn marker(full: usize) -> String {
    format!(" … [clipped: {full} bytes in full, kept in records.jsonl]")
}

/// `text` cut with the marker to [`QUOTE_BYTES`] in all, or None when it fits (so a quote
/// quoted again stays as it is).
fn clipped(text: &str) -> Option<String> {
    if text.len() <= QUOTE_BYTES {
        return None;
    }
    let marker = marker(text.len());
    let head = crate::text::head_bytes(text, QUOTE_BYTES - marker.len());
    Some(format!("{head}{marker}"))
}

/// Counts the texts clipped, so the flag on each answer and the run's warning can say so.
#[derive(Debug, Default)]
pub struct Quoter {
    pub clipped: usize,
}

impl Quoter {
    /// Clip `text` in place; true when it was cut.
    pub fn string(&mut self, text: &mut String) -> bool {
        match clipped(text) {
            Some(quote) => {
                *text = quote;
                self.clipped += 1;
                true
            }
            None => false,
        }
    }

    /// [`Quoter::string`] for an optional text.
    pub fn option(&mut self, text: &mut Option<String>) -> bool {
        text.as_mut().is_some_and(|t| self.string(t))
    }

    /// [`Quoter::string`] for a shared text (the repeats of a prompt share theirs).
    pub fn shared(&mut self, text: &mut Option<Arc<str>>) -> bool {
        match text.as_deref().and_then(clipped) {
            Some(quote) => {
                *text = Some(quote.into());
                self.clipped += 1;
                true
            }
            None => false,
        }
    }

    /// Clip the keys of a count of answers (two keys alike once clipped count together).
    pub fn keys(&mut self, counts: &mut BTreeMap<String, u32>) -> bool {
        if counts.keys().all(|k| k.len() <= QUOTE_BYTES) {
            return false;
        }
        let mut quoted = BTreeMap::new();
        for (mut key, n) in std::mem::take(counts) {
            self.string(&mut key);
            *quoted.entry(key).or_default() += n;
        }
        *counts = quoted;
        true
    }
}

/// `text` as results.json quotes it, where no flag records the clip (a probe histogram's keys).
pub fn quote(text: String) -> String {
    clipped(&text).unwrap_or(text)
}

/// The run's warning, when `clipped` texts were clipped.
pub fn warning(clipped: usize) -> Option<String> {
    (clipped > 0).then(|| {
        format!(
            "{clipped} quoted reply texts are longer than {QUOTE_BYTES} bytes: results.json and the reports quote the start of each (marked `clipped`); records.jsonl keeps them whole"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_states_the_bound() {
        let schema = include_str!("../../report/results.schema.json");
        assert!(schema.contains(&format!("longer than {QUOTE_BYTES} bytes")));
    }

    #[test]
    fn a_long_text_is_cut_on_a_character_boundary_with_its_full_length() {
        let mut q = Quoter::default();
        let mut short = "fits".to_string();
        assert!(!q.string(&mut short));
        assert_eq!(short, "fits");
        let long = "é".repeat(QUOTE_BYTES);
        let mut text = long.clone();
        assert!(q.string(&mut text));
        assert!(text.starts_with(&long[..QUOTE_BYTES / 2]));
        assert!(text.ends_with(&format!(
            "[clipped: {} bytes in full, kept in records.jsonl]",
            2 * QUOTE_BYTES
        )));
        assert!(text.len() <= QUOTE_BYTES);
        let mut shared: Option<Arc<str>> = Some(long.as_str().into());
        assert!(q.shared(&mut shared));
        assert_eq!(q.clipped, 2);
        assert!(warning(q.clipped)
            .unwrap()
            .starts_with("2 quoted reply texts"));
        assert_eq!(warning(0), None);
        let mut again = text.clone();
        assert!(!q.string(&mut again), "a quote fits once clipped");
        let mut counts = BTreeMap::from([(long.clone(), 2), (format!("{long}!"), 1)]);
        assert!(q.keys(&mut counts));
        assert_eq!(counts.values().sum::<u32>(), 3);
        assert!(counts.keys().all(|k| k.len() <= QUOTE_BYTES));
    }
}
