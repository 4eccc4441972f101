//! Sanity checks for free text: not empty, not degenerate, not runaway.
//!
//! Thresholds (a natural answer passes all of them with a wide margin):
//! - empty: no word at all;
//! - runaway: more than [`RUNAWAY_WORDS`] words (when the prompt sets its own `max_words`, the
//!   checks of `checks.rs` enforce that limit instead and this one is skipped);
//! - stuck word: the same word [`STUCK_RUN`] or more times in a row ("the the the ...");
//! - repeated line: the same line of at least three words [`REPEATED_LINES`] or more times;
//! - repeated n-grams: in a text of at least [`NGRAM_MIN_WORDS`] words, fewer than
//!   [`NGRAM_MIN_DISTINCT`] of its word 4-grams are distinct (a loop of phrases).

use std::collections::{HashMap, HashSet};

use super::detail::{Check, FailedCheck};
use super::text::{normalize, words};

/// More words than this is a runaway answer, unless the prompt sets its own `max_words`.
pub const RUNAWAY_WORDS: usize = 1500;
/// The same word this many times in a row is degenerate.
pub const STUCK_RUN: usize = 8;
/// The same line (of three or more words) this many times is degenerate.
pub const REPEATED_LINES: usize = 4;
/// The n-gram check applies from this many words.
pub const NGRAM_MIN_WORDS: usize = 30;
/// The least share of distinct word 4-grams in a long enough text.
pub const NGRAM_MIN_DISTINCT: f64 = 0.5;

/// Ok with the word count, or Err naming the failed check. `own_limit`: the prompt sets its own
/// `max_words`, so the runaway check is left to it.
pub fn check(text: &str, own_limit: bool) -> Result<usize, FailedCheck> {
    let all = words(text);
    if all.is_empty() {
        return Err(FailedCheck::new(Check::Empty, "empty answer"));
    }
    if !own_limit && all.len() > RUNAWAY_WORDS {
        return Err(FailedCheck::new(
            Check::Runaway,
            format!("runaway length: {} words (max {RUNAWAY_WORDS})", all.len()),
        ));
    }
    repetition(text, &all).map_err(|message| FailedCheck::new(Check::Degenerate, message))?;
    Ok(all.len())
}

/// The text loops: a stuck word, a repeated line or a loop of phrases (the degenerate checks).
pub fn loops(text: &str) -> bool {
    repetition(text, &words(text)).is_err()
}

/// Err describing the repetition when the text is degenerate: a stuck word, a repeated line or
/// a loop of phrases.
fn repetition(text: &str, all: &[&str]) -> Result<(), String> {
    let norm: Vec<String> = all.iter().map(|w| normalize(w)).collect();
    let mut run = 1;
    for pair in norm.windows(2) {
        run = if pair[0] == pair[1] && !pair[0].is_empty() {
            run + 1
        } else {
            1
        };
        if run >= STUCK_RUN {
            return Err(format!(
                "degenerate: \"{}\" repeated {run} times in a row",
                pair[0]
            ));
        }
    }
    let mut lines: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        let n = normalize(line);
        if n.split(' ').count() >= 3 {
            let count = lines.entry(n.clone()).or_default();
            *count += 1;
            if *count >= REPEATED_LINES {
                return Err(format!("degenerate: line \"{n}\" repeated {count} times"));
            }
        }
    }
    if norm.len() >= NGRAM_MIN_WORDS {
        let grams: Vec<&[String]> = norm.windows(4).collect();
        let distinct: HashSet<&[String]> = grams.iter().copied().collect();
        let share = distinct.len() as f64 / grams.len() as f64;
        if share < NGRAM_MIN_DISTINCT {
            return Err(format!(
                "degenerate: only {:.0}% of 4-word sequences are distinct",
                share * 100.0
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_text_passes() {
        let story = "The keeper climbed the stairs one last time. Out in the fog a bell rang, \
                     slow and patient, and a ship he had never seen slid past the rocks. He lit \
                     the lamp anyway, the way his father had taught him, and waited for morning.";
        assert_eq!(check(story, false), Ok(45));
        let poem = "Row, row, row your boat\nGently down the stream\nRow, row, row your boat";
        assert!(check(poem, false).is_ok());
    }

    #[test]
    fn degenerate_and_runaway_text_fails() {
        assert_eq!(
            check("  \n ", false),
            Err(FailedCheck::new(Check::Empty, "empty answer"))
        );
        let failure = |text: &str| check(text, false).unwrap_err();
        let stuck = failure(&"the ".repeat(9));
        assert_eq!(stuck.check, Check::Degenerate);
        assert!(stuck.message.contains("repeated 8 times in a row"));
        let looped = failure(&"I will light the lamp.\n".repeat(4));
        assert_eq!(looped.check, Check::Degenerate);
        assert!(looped.message.contains("line"));
        let phrase_loop = failure(&"and then the ship came back ".repeat(8));
        assert_eq!(phrase_loop.check, Check::Degenerate);
        assert!(phrase_loop.message.contains("4-word sequences"));
        let long: Vec<String> = (0..=RUNAWAY_WORDS).map(|i| format!("w{i}")).collect();
        let long = long.join(" ");
        assert_eq!(failure(&long).check, Check::Runaway);
        assert!(failure(&long).message.contains("runaway"));
        assert!(
            check(&long, true).is_ok(),
            "the prompt's own max_words decides"
        );
    }
}
