//! An answer read from a completion cut off at the token budget (`finish_reason: length`). The
//! scorers that read a final answer out of free text (numeric, choice) take an explicit
//! final-answer marker first (`markers.rs`: the last `\boxed{}`, the last "the answer is" /
//! "answer:" / "final answer =" clause, a `#### 18` line); without one they fall back on where the
//! text ends (its concluding sentence, its last clause naming an option, its last bold span or
//! number). A cut-off completion did not end there, it stopped:
//! - a numeric answer without a marker was cut off mid-working: the number where it stopped (a
//!   step of working, "90.7 - 90.22 =") is no answer;
//! - any such answer cut off in a loop (a stuck word, a repeated line or a loop of phrases, as
//!   `sanity.rs` finds them) has no end either: no answer.
//!
//! Every other score of a cut-off completion stands, marked as a weak read (`Score::weak`).

use super::markers::{after_answer_marker, last_boxed};
use super::{sanity, Detail, Score, ScorerSpec};

/// The weak-read reason of every score of a cut-off completion.
const CUT: &str = "cut off at the token limit";

/// The score of an answer whose completion was cut off at the budget: no answer (wrong, nothing
/// extracted, the evidence saying what was not taken) when the scorer reads a final answer out of
/// free text, the text holds no final-answer marker and it loops or, for a number, stops
/// mid-working; else unchanged. Either way marked as a weak read.
pub fn cut_off(spec: &ScorerSpec, answer: &str, scored: Score) -> Score {
    let reads_final_answer = matches!(spec, ScorerSpec::Numeric { .. } | ScorerSpec::Choice { .. });
    let unmarked =
        reads_final_answer && scored.extracted.is_some() && !has_final_answer_marker(answer);
    let why = if !unmarked {
        None
    } else if sanity::loops(answer) {
        Some("while looping")
    } else if matches!(spec, ScorerSpec::Numeric { .. }) {
        Some("mid-working")
    } else {
        None
    };
    match why {
        Some(why) => no_answer(scored, why).weakly(CUT),
        None => scored.weakly(CUT),
    }
}

/// No answer in place of `scored`: what it read is named as not taken.
fn no_answer(scored: Score, why: &str) -> Score {
    let unread = scored
        .as_written
        .as_deref()
        .or(scored.extracted.as_deref())
        .unwrap_or_default();
    Score {
        correct: Some(false),
        extracted: None,
        as_written: None,
        evidence: format!(
            "no answer: {CUT} {why}, with no final-answer marker (\\boxed{{}}, \"the answer \
             is\", ####); `{unread}` read where it stopped is not taken"
        ),
        detail: Detail::NotFound,
        weak: None,
    }
}

/// The text holds an explicit final answer: a `\boxed{}`, an "answer is" marker or a `####` line.
fn has_final_answer_marker(answer: &str) -> bool {
    last_boxed(answer).is_some() || after_answer_marker(answer).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::testing::assert_no_answer;
    use crate::score::{score, Options, ScoreContext};

    fn knights() -> ScorerSpec {
        let names = |label: &str| {
            vec![
                format!("{label} is the knight"),
                format!("{label} is a knight"),
            ]
        };
        ScorerSpec::Choice {
            expected: "A".into(),
            options: Options([("A".to_string(), names("A")), ("B".to_string(), names("B"))].into()),
        }
    }

    fn scored_cut_off(spec: &ScorerSpec, answer: &str) -> Score {
        let ctx = ScoreContext::for_catalogue(std::path::Path::new("prompts"));
        cut_off(spec, answer, score(spec, answer, &ctx))
    }

    /// The re-grade's logic_knights: a loop cut off at 1024 tokens that names A in its last clause.
    const LOOP: &str = "If A is a knight and B is a knave, then A could be both. \
        But we can only consider the scenario where A is a knight and B is a knave. ";

    #[test]
    fn a_looping_cut_off_answer_without_a_marker_is_no_answer() {
        let spec = knights();
        let text = LOOP.repeat(12);
        let s = scored_cut_off(&spec, &text);
        assert_eq!(s.correct, Some(false), "{s:?}");
        assert_eq!(s.extracted, None);
        assert_eq!(s.detail, Detail::NotFound);
        assert!(s.evidence.contains("no answer: cut off"), "{}", s.evidence);
        assert!(s.evidence.contains("`A`"), "{}", s.evidence);
        let numeric = ScorerSpec::Numeric {
            expected: "3".into(),
            tolerance: None,
            counts: None,
        };
        let counted = "There are 3 r letters in straw and berry, so the count is 3 again. ";
        let s = scored_cut_off(&numeric, &counted.repeat(10));
        assert_eq!(
            (s.correct, s.extracted.as_deref()),
            (Some(false), None),
            "{s:?}"
        );
    }

    #[test]
    fn a_marker_a_concluded_text_or_another_scorer_keeps_the_answer() {
        let spec = knights();
        let marked = format!("{}So the answer is A.", LOOP.repeat(12));
        assert_eq!(scored_cut_off(&spec, &marked).correct, Some(true));
        let boxed = format!("{}\\boxed{{A}}", LOOP.repeat(12));
        assert_eq!(scored_cut_off(&spec, &boxed).correct, Some(true));
        // Cut off but not looping: the scorer's reading stands.
        let once = scored_cut_off(&spec, LOOP);
        assert_eq!(once.correct, Some(true), "{once:?}");
        // An exact answer is whole words anywhere, not where the text ends.
        let exact = ScorerSpec::Exact {
            expected: "Paris".into(),
            aliases: Vec::new(),
            distractors: Vec::new(),
        };
        let paris = format!("Paris.{}", " It is the capital city of France.".repeat(12));
        assert_eq!(scored_cut_off(&exact, &paris).correct, Some(true));
    }

    fn numeric(expected: &str) -> ScorerSpec {
        ScorerSpec::Numeric {
            expected: expected.into(),
            tolerance: None,
            counts: None,
        }
    }

    #[test]
    fn a_number_cut_off_mid_working_is_no_answer() {
        // runs/example-smollm2-kv-q4-decided: gen.decimals.0006 on kv-q4 and gen.decimals.0031
        // on kv-q4, both `length`, both credited with 90.7 / 38.4 before.
        for (expected, text) in [
            (
                "90.7",
                "To solve this problem, we need to find the difference between the larger number \
                 and the smaller one.\n\nThe larger number is 90.7, and the smaller number is \
                 90.22.\n\nThe difference between them is 90.7 - 90.22 =",
            ),
            (
                "38.4",
                "To solve this problem, we need to find the greatest integer that is exactly \
                 38.4.\n\nTo find the answer, we can use the floor function to find the largest \
                 integer that is exactly 38.4.\n\nThe largest integer that is exactly 38.4 is 3",
            ),
        ] {
            let s = scored_cut_off(&numeric(expected), text);
            assert_no_answer(&s, "no answer: cut off at the token limit mid-working");
            assert_eq!(s.weak.as_deref(), Some(CUT));
        }
    }

    #[test]
    fn a_cut_off_answer_that_stands_is_a_weak_read() {
        let cut = "Eggs left: 16 - 3 - 4 = 9. The answer is 18.\n\nTo check: 9 × 2";
        let s = scored_cut_off(&numeric("18"), cut);
        assert_eq!(s.correct, Some(true), "{s:?}");
        assert_eq!(s.weak.as_deref(), Some(CUT));
        let s = scored_cut_off(&knights(), LOOP);
        assert_eq!(s.correct, Some(true), "{s:?}");
        assert!(
            s.weak.as_deref().is_some_and(|w| w.starts_with(CUT)),
            "{s:?}"
        );
    }
}
