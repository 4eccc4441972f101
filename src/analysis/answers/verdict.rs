//! The per-prompt verdict between a reference endpoint and another endpoint.

use serde::{Deserialize, Serialize};

use super::similarity::{similarity, SAME_SIMILARITY};

/// same: the endpoints agree; format: both fail the same way, rendered differently (a formatting
/// difference, not a different answer); no_answer: neither side gave an answer (wrong on both,
/// nothing to compare); diff: they disagree; review: cannot be decided deterministically; fail: a
/// side has no usable answer. Ordered by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Same,
    Format,
    NoAnswer,
    Review,
    Diff,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Format => "format",
            Verdict::NoAnswer => "no_answer",
            Verdict::Review => "review",
            Verdict::Diff => "diff",
            Verdict::Fail => "fail",
        }
    }
}

/// What the verdict needs to know about one side.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub usable: bool,
    pub correct: Option<bool>,
    pub extracted: Option<&'a str>,
    pub answer: &'a str,
}

/// The verdict for one pair, why, and the text similarity when it decided.
pub fn pair_verdict(a: Side, b: Side) -> (Verdict, String, Option<f64>) {
    if !a.usable || !b.usable {
        let reason = match (a.usable, b.usable) {
            (false, false) => "neither endpoint produced a usable answer",
            (false, true) => "the reference produced no usable answer",
            _ => "the other endpoint produced no usable answer",
        };
        return (Verdict::Fail, reason.to_string(), None);
    }
    match (a.correct, b.correct) {
        (Some(true), Some(true)) => (Verdict::Same, "both correct".into(), None),
        (Some(x), Some(y)) if x != y => {
            let reason = if x {
                "reference correct, other wrong"
            } else {
                "reference wrong, other correct"
            };
            (Verdict::Diff, reason.into(), None)
        }
        (Some(_), Some(_)) => both_wrong(&a, &b),
        (None, None) => by_similarity(a.answer, b.answer),
        (Some(x), None) | (None, Some(x)) => one_side_checked(&a, x),
    }
}

/// Both answers wrong: the same when the same answer (or, with none read, the same text).
fn both_wrong(a: &Side, b: &Side) -> (Verdict, String, Option<f64>) {
    let (verdict, reason) = if a.extracted.is_none() && b.extracted.is_none() {
        if a.answer.trim() == b.answer.trim() {
            (Verdict::Same, "both wrong with the same text")
        } else {
            (
                Verdict::Diff,
                "both wrong; no answer could be read from either and the texts differ",
            )
        }
    } else if a.extracted.is_some() && a.extracted == b.extracted {
        (Verdict::Same, "both wrong with the same answer")
    } else {
        (Verdict::Diff, "both wrong with different answers")
    };
    (verdict, reason.into(), None)
}

/// Neither answer has a ground truth: the texts decide, by similarity.
fn by_similarity(a: &str, b: &str) -> (Verdict, String, Option<f64>) {
    let s = similarity(a, b);
    if s >= SAME_SIMILARITY {
        (
            Verdict::Same,
            format!("texts {:.0}% similar", s * 100.0),
            Some(s),
        )
    } else {
        (
            Verdict::Review,
            format!("texts only {:.0}% similar", s * 100.0),
            Some(s),
        )
    }
}

/// Only one side could be checked (`correct` is whether it passed): a failure is a difference,
/// a pass is for review.
fn one_side_checked(a: &Side, correct: bool) -> (Verdict, String, Option<f64>) {
    let checked = if a.correct.is_some() {
        "reference"
    } else {
        "other"
    };
    if correct {
        (
            Verdict::Review,
            "only one side could be checked".into(),
            None,
        )
    } else {
        (
            Verdict::Diff,
            format!("the {checked} answer failed its checks"),
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(correct: Option<bool>, extracted: &'static str) -> Side<'static> {
        Side {
            usable: true,
            correct,
            extracted: Some(extracted),
            answer: extracted,
        }
    }

    #[test]
    fn two_unreadable_wrong_answers_are_compared_by_text() {
        let unreadable = |text: &'static str| Side {
            usable: true,
            correct: Some(false),
            extracted: None,
            answer: text,
        };
        let (v, reason, _) = pair_verdict(
            unreadable("The quick brown fox."),
            unreadable("The quick fox."),
        );
        assert_eq!(v, Verdict::Diff);
        assert!(reason.contains("no answer could be read"));
        assert_eq!(
            pair_verdict(unreadable("Same."), unreadable("Same.")).0,
            Verdict::Same
        );
    }

    #[test]
    fn verdicts_follow_the_design() {
        assert_eq!(
            pair_verdict(side(Some(true), "3"), side(Some(true), "3")).0,
            Verdict::Same
        );
        assert_eq!(
            pair_verdict(side(Some(true), "3"), side(Some(false), "5")).0,
            Verdict::Diff
        );
        assert_eq!(
            pair_verdict(side(Some(false), "5"), side(Some(false), "5")).0,
            Verdict::Same
        );
        assert_eq!(
            pair_verdict(side(Some(false), "5"), side(Some(false), "9")).0,
            Verdict::Diff
        );
        let broken = Side {
            usable: false,
            correct: None,
            extracted: None,
            answer: "",
        };
        assert_eq!(pair_verdict(side(Some(true), "3"), broken).0, Verdict::Fail);
        assert_eq!(
            pair_verdict(
                side(None, "once upon a time"),
                side(None, "once upon a time")
            )
            .0,
            Verdict::Same
        );
        assert_eq!(
            pair_verdict(
                side(None, "once upon a time"),
                side(None, "a dark night fell")
            )
            .0,
            Verdict::Review
        );
        assert_eq!(
            pair_verdict(side(None, "story"), side(Some(false), "")).0,
            Verdict::Diff
        );
    }
}
