//! Open-ended scoring (creative, summarization, translation): sanity checks plus the prompt's
//! own checks (key facts, length, language). A passing answer has no ground truth
//! (`correct: None`), so the similarity of the endpoints' texts decides same or review; a failing
//! one is wrong (`correct: Some(false)`) with the failed checks as evidence.

use super::checks::TextChecks;
use super::{sanity, Score};

pub fn validate(checks: &TextChecks) -> Result<(), String> {
    if checks.answer.is_some() {
        return Err("open-ended prompts have no `answer`; use type = \"trap\"".into());
    }
    checks.validate()
}

pub fn score(checks: &TextChecks, answer: &str) -> Score {
    let mut outcome = checks.run(answer);
    match sanity::check(answer, checks.max_words.is_some()) {
        Ok(n) => outcome.passed.insert(0, format!("sane ({n} words)")),
        Err(e) => outcome.failed.insert(0, e),
    }
    if outcome.failed.is_empty() {
        Score::new(None, outcome.detail(), outcome.evidence())
    } else {
        Score::new(Some(false), outcome.detail(), outcome.evidence()).read_whole(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::testing::text_checks as checks;

    #[test]
    fn passing_text_is_left_to_similarity() {
        let c = checks("require = [\"bridge\", \"repair|repairs\"]\nmax_words = 40");
        let s = score(
            &c,
            "The Elm Street bridge closes on June 3 for six months of repairs.",
        );
        assert_eq!((s.correct, s.extracted.as_deref()), (None, None));
        assert!(
            s.evidence
                .starts_with("passed: sane (13 words); has \"bridge\""),
            "{}",
            s.evidence
        );
    }

    #[test]
    fn failing_text_is_wrong_with_the_failed_check() {
        let c = checks("require = [\"bridge\"]\nmin_words = 5");
        let s = score(&c, "The council met on Tuesday to discuss the budget.");
        assert_eq!(s.correct, Some(false));
        assert!(
            s.evidence.starts_with("failed: missing \"bridge\""),
            "{}",
            s.evidence
        );
        assert_eq!(
            s.extracted.as_deref(),
            Some("the council met on tuesday to discuss the budget")
        );
        let s = score(&TextChecks::default(), &"bridge ".repeat(20));
        assert!(s.evidence.contains("degenerate"), "{}", s.evidence);
        assert_eq!(score(&TextChecks::default(), "").correct, Some(false));
    }

    #[test]
    fn translations_must_be_in_the_target_language() {
        let c = checks("language = \"fr\"\nrequire = [\"bibliothèque\"]");
        let s = score(&c, "La bibliothèque ouvre à neuf heures tous les matins.");
        assert_eq!(s.correct, None, "{}", s.evidence);
        let s = score(
            &c,
            "The library (bibliothèque) opens at nine o'clock every morning.",
        );
        assert_eq!(s.correct, Some(false));
        assert!(s.evidence.contains("not in language fr"), "{}", s.evidence);
    }

    #[test]
    fn answers_belong_to_traps() {
        assert!(validate(&checks("answer = \"4\"")).is_err());
        assert!(validate(&checks("max_words = 10")).is_ok());
    }

    #[test]
    fn extracted_is_the_whole_answer_so_late_differences_show() {
        let c = checks("require = [\"bridge\"]");
        let head =
            "The council met on Tuesday evening to discuss the budget for the coming year and then";
        let a = score(&c, &format!("{head} adjourned."));
        let b = score(&c, &format!("{head} voted."));
        assert_eq!((a.correct, b.correct), (Some(false), Some(false)));
        assert_ne!(a.extracted, b.extracted);
        assert!(a.extracted.unwrap().ends_with("and then adjourned"));
    }
}
