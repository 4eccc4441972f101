//! An answer read from a completion cut off at the token budget (`finish_reason: length`) while
//! looping. The scorers that read a final answer out of free text (numeric, choice) take an
//! explicit final-answer marker first (`markers.rs`: the last `\boxed{}`, the last "the answer
//! is" / "answer:" / "final answer =" clause, a `#### 18` line); without one they fall back on
//! where the text ends (its concluding sentence, its last clause naming an option, its last bold
//! span or number). A completion cut off in a loop (a stuck word, a repeated line or a loop of
//! phrases, as `sanity.rs` finds them) has no end: what those rules read there is no answer.

use super::markers::{after_answer_marker, last_boxed};
use super::{sanity, Detail, Score, ScorerSpec};

/// The score of an answer whose completion was cut off at the budget: unchanged unless the
/// scorer reads a final answer out of free text, the text loops and holds no final-answer
/// marker; then no answer (wrong, nothing extracted), the evidence saying what was not taken.
pub fn cut_off(spec: &ScorerSpec, answer: &str, scored: Score) -> Score {
    let reads_final_answer = matches!(spec, ScorerSpec::Numeric { .. } | ScorerSpec::Choice { .. });
    if !reads_final_answer
        || scored.extracted.is_none()
        || has_final_answer_marker(answer)
        || !sanity::loops(answer)
    {
        return scored;
    }
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
            "no answer: cut off at the token budget while looping, with no final-answer marker \
             (\\boxed{{}}, \"the answer is\", ####); `{unread}` read from the loop is not taken"
        ),
        detail: Detail::NotFound,
    }
}

/// The text holds an explicit final answer: a `\boxed{}`, an "answer is" marker or a `####` line.
fn has_final_answer_marker(answer: &str) -> bool {
    last_boxed(answer).is_some() || after_answer_marker(answer).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
