//! Determinism across repeats: answer histogram, unique completions, modal share, class, and where
//! repeats first diverge.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::divergence::{first_divergence, Divergence};

/// One repeat of one prompt on one endpoint, as the analysis sees it.
#[derive(Debug, Clone)]
pub struct RepeatOutcome {
    pub repeat: u32,
    /// The answer as scored (extracted value, or the text for open-ended prompts); None when failed.
    pub key: Option<String>,
    pub correct: Option<bool>,
    /// The raw completion text (content as returned).
    pub completion: String,
    pub tokens: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Every repeat gave the same correct answer.
    DeterministicCorrect,
    /// Every repeat gave the same wrong answer: stable but wrong.
    DeterministicWrong,
    /// Every repeat gave the same answer to a prompt without ground truth.
    Deterministic,
    /// Repeats gave different answers at temperature 0.
    Nondeterministic,
    /// No repeat produced a usable answer.
    Failed,
}

impl Class {
    pub fn label(self) -> &'static str {
        match self {
            Class::DeterministicCorrect => "deterministic-correct",
            Class::DeterministicWrong => "deterministic-wrong",
            Class::Deterministic => "deterministic",
            Class::Nondeterministic => "non-deterministic",
            Class::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatDivergence {
    /// The two repeats compared (the first repeat and the first one that differs from it).
    pub repeats: [u32; 2],
    #[serde(flatten)]
    pub at: Divergence,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Determinism {
    pub repeats: u32,
    /// How often each answer came back, e.g. {"9": 4, "5": 1}; failures count as "(fail)".
    pub histogram: BTreeMap<String, u32>,
    /// Distinct raw completions among usable repeats.
    pub unique_completions: u32,
    pub modal_answer: Option<String>,
    /// Share of repeats that gave the modal answer.
    pub modal_share: f64,
    /// Usable repeats whose completion is the text shown: the most frequent text among the
    /// repeats that gave the modal answer. Below the usable repeats when their texts differ.
    #[serde(default)]
    pub modal_text_repeats: u32,
    pub class: Class,
    pub first_divergence: Option<RepeatDivergence>,
}

/// The histogram key of a failed repeat.
pub const FAILED_KEY: &str = "(fail)";

/// Summarise the repeats; also returns the index (into `outcomes`) of the representative repeat:
/// of the repeats that gave the modal answer, the first whose text is the most frequent among
/// them (the modal text), or the first repeat when none is usable.
pub fn determinism_of(outcomes: &[RepeatOutcome]) -> (Determinism, usize) {
    let mut histogram: BTreeMap<String, u32> = BTreeMap::new();
    for o in outcomes {
        *histogram
            .entry(o.key.clone().unwrap_or_else(|| FAILED_KEY.into()))
            .or_default() += 1;
    }
    // Most frequent usable answer; ties go to the one seen first.
    let mut best: Option<(u32, usize)> = None;
    for (i, o) in outcomes.iter().enumerate() {
        let Some(k) = &o.key else { continue };
        let n = histogram[k];
        if best.is_none_or(|(m, _)| n > m) {
            best = Some((n, i));
        }
    }
    let usable: Vec<&RepeatOutcome> = outcomes.iter().filter(|o| o.key.is_some()).collect();
    let distinct: BTreeSet<&str> = usable.iter().filter_map(|o| o.key.as_deref()).collect();
    let completions: BTreeSet<&str> = usable.iter().map(|o| o.completion.as_str()).collect();
    let (modal_answer, modal_share, representative) = match best {
        Some((n, i)) => (
            outcomes[i].key.clone(),
            n as f64 / outcomes.len() as f64,
            modal_text(outcomes, &outcomes[i].key),
        ),
        None => (None, 0.0, 0),
    };
    let modal_text_repeats = usable
        .iter()
        .filter(|o| o.completion == outcomes[representative].completion)
        .count() as u32;
    let class = if usable.is_empty() {
        Class::Failed
    } else if distinct.len() > 1 {
        Class::Nondeterministic
    } else {
        match outcomes[representative].correct {
            Some(true) => Class::DeterministicCorrect,
            Some(false) => Class::DeterministicWrong,
            None => Class::Deterministic,
        }
    };
    let first_divergence = usable.first().and_then(|first| {
        usable.iter().skip(1).find_map(|o| {
            first_divergence(&first.completion, &o.completion, first.tokens.as_deref()).map(|at| {
                RepeatDivergence {
                    repeats: [first.repeat, o.repeat],
                    at,
                }
            })
        })
    });
    (
        Determinism {
            repeats: outcomes.len() as u32,
            histogram,
            unique_completions: completions.len() as u32,
            modal_answer,
            modal_share,
            modal_text_repeats,
            class,
            first_divergence,
        },
        representative,
    )
}

/// Of the repeats that gave `key`, the index of the first whose completion text is the most
/// frequent among them.
fn modal_text(outcomes: &[RepeatOutcome], key: &Option<String>) -> usize {
    let with_key: Vec<(usize, &str)> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| &o.key == key)
        .map(|(i, o)| (i, o.completion.as_str()))
        .collect();
    let count = |text: &str| with_key.iter().filter(|(_, t)| *t == text).count();
    let mut best: Option<(usize, usize)> = None;
    for &(i, text) in &with_key {
        let n = count(text);
        if best.is_none_or(|(m, _)| n > m) {
            best = Some((n, i));
        }
    }
    best.map_or(0, |(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(repeat: u32, key: &str, correct: bool, text: &str) -> RepeatOutcome {
        RepeatOutcome {
            repeat,
            key: Some(key.into()),
            correct: Some(correct),
            completion: text.into(),
            tokens: None,
        }
    }

    #[test]
    fn the_seeds_flaky_counter_is_nondeterministic() {
        let runs = [
            outcome(0, "9", false, "There are 9 r's."),
            outcome(1, "9", false, "There are 9 r's."),
            outcome(2, "5", false, "There are 5 r's."),
            outcome(3, "9", false, "There are 9 r's."),
            outcome(4, "9", false, "There are 9 r's."),
        ];
        let (d, rep) = determinism_of(&runs);
        assert_eq!(
            d.histogram,
            BTreeMap::from([("9".to_string(), 4), ("5".to_string(), 1)])
        );
        assert_eq!(d.class, Class::Nondeterministic);
        assert_eq!(d.modal_answer.as_deref(), Some("9"));
        assert!((d.modal_share - 0.8).abs() < 1e-9);
        assert_eq!(d.unique_completions, 2);
        assert_eq!(rep, 0);
        let div = d.first_divergence.unwrap();
        assert_eq!(div.repeats, [0, 2]);
        assert_eq!(div.at.char_offset, 10);
    }

    #[test]
    fn stable_answers_are_classified_by_correctness() {
        let right = [outcome(0, "3", true, "3"), outcome(1, "3", true, "3")];
        assert_eq!(determinism_of(&right).0.class, Class::DeterministicCorrect);
        let wrong = [
            outcome(0, "5", false, "5"),
            outcome(1, "5", false, "It is 5"),
        ];
        let (d, _) = determinism_of(&wrong);
        assert_eq!(d.class, Class::DeterministicWrong);
        assert_eq!(d.unique_completions, 2, "same answer, different wording");
    }

    #[test]
    fn failures_are_counted_but_do_not_make_noise() {
        let mut failed = outcome(1, "", false, "");
        failed.key = None;
        let (d, rep) = determinism_of(&[failed.clone(), outcome(0, "3", true, "3")]);
        assert_eq!(d.histogram[FAILED_KEY], 1);
        assert_eq!(d.class, Class::DeterministicCorrect);
        assert_eq!(rep, 1);
        assert_eq!(determinism_of(&[failed]).0.class, Class::Failed);
    }

    #[test]
    fn the_text_shown_is_the_most_frequent_among_the_modal_answers_repeats() {
        // factual_author: one repeat names Orwell plainly, two add a made-up author.
        let plain = "The author is George Orwell.";
        let skaro = "The novel by George Orwell was written by A.A. Skaro.";
        let runs = [
            outcome(0, "george orwell", true, plain),
            outcome(1, "george orwell", true, skaro),
            outcome(2, "george orwell", true, skaro),
        ];
        let (d, rep) = determinism_of(&runs);
        assert_eq!(rep, 1, "the text two of three repeats gave");
        assert_eq!(d.modal_text_repeats, 2);
        assert_eq!(d.unique_completions, 2);
        let alike = [outcome(0, "3", true, "3"), outcome(1, "3", true, "3")];
        assert_eq!(determinism_of(&alike).0.modal_text_repeats, 2);
    }
}
