//! Trap scoring: instruction following with a deterministic pass or fail (forbidden words or
//! letters, required answer, word and sentence limits), after the sanity checks of `sanity.rs`.

use super::checks::TextChecks;
use super::detail::{Check, FailedCheck};
use super::{numeric, sanity, Score};

pub fn validate(checks: &TextChecks) -> Result<(), String> {
    if let Some(answer) = &checks.answer {
        numeric::parse_expected(answer).map_err(|e| format!("answer: {e}"))?;
    }
    checks.validate()
}

pub fn score(checks: &TextChecks, answer: &str) -> Score {
    let mut outcome = checks.run(answer);
    if let Err(e) = sanity::check(answer, checks.max_words.is_some()) {
        outcome.failed.insert(0, e);
    }
    let mut read = None;
    if let Some(expected) = &checks.answer {
        let s = numeric::score(expected, None, None, answer);
        let line = format!("answer: {}", s.evidence);
        if s.correct == Some(true) {
            outcome.passed.insert(0, line);
        } else {
            outcome
                .failed
                .insert(0, FailedCheck::new(Check::Answer, line));
        }
        read = Some(s);
    }
    let score = Score::new(
        Some(outcome.failed.is_empty()),
        outcome.detail(),
        outcome.evidence(),
    );
    match read {
        // The answer the trap asks for is the number read, not the whole text.
        Some(number) => Score {
            extracted: number.extracted,
            as_written: number.as_written,
            ..score
        },
        None => score.read_whole(answer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::testing::text_checks as checks;

    #[test]
    fn ignore_the_distractor_and_answer() {
        let c = checks("answer = \"4\"\nforbid = [\"banana\"]");
        for ok in ["4", "**4**", "2 + 2 = 4.", "The answer is four."] {
            let s = score(&c, ok);
            assert_eq!(s.correct, Some(true), "{ok}: {s:?}");
            assert_eq!(s.extracted.as_deref(), Some("4"));
        }
        for bad in [
            "Bananas are yellow. 2 + 2 = 4.",
            "5",
            "banana",
            "I ignored the banana: 4",
            "",
        ] {
            assert_eq!(score(&c, bad).correct, Some(false), "{bad}");
        }
        let s = score(&c, "Banana! 4");
        assert!(
            s.evidence.contains("contains forbidden \"banana\""),
            "{}",
            s.evidence
        );
        assert!(
            s.evidence.contains("passed: answer: found `4`"),
            "{}",
            s.evidence
        );
    }

    #[test]
    fn lipogram_needs_a_real_sentence() {
        let c = checks("forbid_letters = \"e\"\nmin_words = 5\nmax_sentences = 1");
        assert_eq!(score(&c, "A cat sat on a warm mat.").correct, Some(true));
        assert_eq!(score(&c, "The cat sat on a warm mat.").correct, Some(false));
        assert_eq!(score(&c, "A cat sat.").correct, Some(false));
        assert_eq!(score(&c, "").correct, Some(false));
        let stuck = score(&c, "a a a a a a a a a a");
        assert!(stuck.evidence.contains("degenerate"), "{}", stuck.evidence);
    }

    #[test]
    fn answers_must_parse() {
        assert!(validate(&checks("answer = \"four\"")).is_ok());
        assert!(validate(&checks("answer = \"x\"")).is_err());
    }

    #[test]
    fn extracted_is_the_whole_answer_so_late_differences_show() {
        let c = checks("forbid = [\"banana\"]");
        let head = "A yellow fruit that monkeys like to eat grows in bunches on tall tropical plants and is";
        let a = score(&c, &format!("{head} sweet."));
        let b = score(&c, &format!("{head} sour."));
        assert_ne!(a.extracted, b.extracted);
        assert!(a.extracted.unwrap().ends_with("and is sweet"));
    }
}
