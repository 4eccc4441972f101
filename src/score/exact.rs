//! Normalised string scoring with accepted aliases: the answer must contain the expected phrase
//! or an alias as whole words, ignoring case, whitespace, punctuation, quotes, markdown and accents.
//!
//! A one-letter phrase is refused at validation: "A" would match the article "a" in any sentence.
//! Letter answers belong to the `choice` scorer, which knows where a bare letter is a label.

use super::text::{contains_phrase, normalize};
use super::Score;

pub fn validate(expected: &str, aliases: &[String]) -> Result<(), String> {
    for phrase in std::iter::once(expected).chain(aliases.iter().map(String::as_str)) {
        let norm = normalize(phrase);
        if norm.is_empty() {
            return Err("expected and aliases must contain letters or digits".into());
        }
        if norm.chars().count() == 1 && norm.chars().all(char::is_alphabetic) {
            return Err(format!(
                "`{phrase}` is a single letter, which matches the words \"a\" and \"I\"; \
                 use type = \"choice\" for letter answers"
            ));
        }
    }
    Ok(())
}

pub fn score(expected: &str, aliases: &[String], answer: &str) -> Score {
    let norm_answer = normalize(answer);
    if norm_answer.is_empty() {
        return Score::new(Some(false), None, "empty answer");
    }
    let accepted = std::iter::once(expected).chain(aliases.iter().map(String::as_str));
    for candidate in accepted {
        let norm = normalize(candidate);
        if contains_phrase(&norm_answer, &norm) {
            return Score::new(
                Some(true),
                Some(normalize(expected)),
                format!("found \"{candidate}\""),
            );
        }
    }
    Score::new(
        Some(false),
        Some(norm_answer),
        format!("\"{expected}\" not found"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aliases(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn accepts_expected_or_alias_in_prose() {
        let a = aliases(&["Eric Arthur Blair", "Orwell"]);
        for ok in [
            "It was **George Orwell**.",
            "eric arthur blair",
            "Nineteen Eighty-Four was written by George Orwell (Eric Blair) in 1949.",
            "ORWELL",
            "\"George Orwell\"",
        ] {
            assert_eq!(score("George Orwell", &a, ok).correct, Some(true), "{ok}");
        }
        for bad in ["Aldous Huxley wrote it.", "Orwellian", "Georgeorwell", ""] {
            assert_eq!(
                score("George Orwell", &a, bad).correct,
                Some(false),
                "{bad}"
            );
        }
        let wrong = score("George Orwell", &a, "Aldous Huxley wrote it.");
        assert_eq!(wrong.extracted.as_deref(), Some("aldous huxley wrote it"));
        assert_eq!(wrong.evidence, "\"George Orwell\" not found");
    }

    #[test]
    fn accents_and_case_are_ignored_but_words_are_whole() {
        assert_eq!(score("ecnerehoc", &[], "ECNEREHOC").correct, Some(true));
        assert_eq!(score("ecnerehoc", &[], "`ecnerehoc`").correct, Some(true));
        assert_eq!(score("ecnerehoc", &[], "ecnerehco").correct, Some(false));
        assert_eq!(
            score("São Paulo", &[], "It is sao paulo.").correct,
            Some(true)
        );
        assert_eq!(score("Au", &[], "The symbol is Au.").correct, Some(true));
        assert_eq!(score("Au", &[], "The symbol is Ag.").correct, Some(false));
    }

    #[test]
    fn one_letter_phrases_are_refused() {
        assert!(validate("A", &[]).is_err());
        assert!(validate("Canberra", &aliases(&["c"])).is_err());
        assert!(validate("7", &[]).is_ok());
        assert!(validate("Au", &[]).is_ok());
        assert!(validate("?", &[]).is_err());
    }

    #[test]
    fn extracted_is_the_whole_answer_so_late_differences_show() {
        let head = "The largest planet in our solar system is one of the four gas giants, and it is called";
        let a = score("Jupiter", &[], &format!("{head} Saturn."));
        let b = score("Jupiter", &[], &format!("{head} Neptune."));
        assert_ne!(a.extracted, b.extracted);
        assert!(a.extracted.unwrap().ends_with("called saturn"));
    }
}
