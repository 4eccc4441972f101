//! Normalised string scoring with accepted aliases.

use super::text::{clip, contains_phrase, normalize};
use super::Score;

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
        Some(clip(&norm_answer, 80)),
        format!("\"{expected}\" not found"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_expected_or_alias_in_prose() {
        let aliases = vec!["Eric Arthur Blair".to_string()];
        assert_eq!(
            score("George Orwell", &aliases, "It was **George Orwell**.").correct,
            Some(true)
        );
        assert_eq!(
            score("George Orwell", &aliases, "eric arthur blair").correct,
            Some(true)
        );
        let wrong = score("George Orwell", &aliases, "Aldous Huxley wrote it.");
        assert_eq!(wrong.correct, Some(false));
        assert_eq!(wrong.extracted.as_deref(), Some("aldous huxley wrote it"));
    }
}
