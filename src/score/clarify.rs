//! Ambiguity scoring: the answer must ask for clarification or state the assumption it makes.
//!
//! It asks when a sentence ending in "?" addresses the user or offers alternatives ("which bank do
//! you mean?", "could you tell me ...?", "Celsius or Fahrenheit?"; a rhetorical "Where is the
//! bank?" does not count) or it says "please clarify/specify", "let me know", "more context". It states an assumption with "assuming", "I'll assume", "if you mean", "if it is",
//! "it depends on", "ambiguous", "unclear", "could refer to", "either ... or", "not specified".
//! The extracted answer is "asks", "hedges" (assumption or ambiguity stated) or both.
//! `require` terms (with `a|b` alternatives) must also appear, so the clarification is about the
//! right thing.

use std::sync::LazyLock;

use regex::Regex;

use super::detail::{Check, Detail};
use super::text::{find_alternative, normalize, sentences, term_is_matchable};
use super::Score;
use crate::text::clip;

pub fn validate(require: &[String]) -> Result<(), String> {
    match require.iter().find(|t| !term_is_matchable(t)) {
        Some(t) => Err(format!("term `{t}` has no letters or digits")),
        None => Ok(()),
    }
}

static QUESTION_TO_USER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:you|your|you['’]re|which (?:one|of)|or)\b").unwrap());
static ASKS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:please (?:clarify|specify|tell me|let me know|provide|confirm)|let me know|more (?:context|information|details)|could you clarify|can you clarify)\b")
        .unwrap()
});
static ASSUMES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:assum(?:e|es|ed|ing|ption)|if you(?: mean| meant|['’]re referring| are referring)",
        r"|if (?:it|this|that|he|she|they)(?:'s| is| was| were| means| refers)",
        r"|(?:it )?depends on|ambiguous|ambiguity|unclear|not clear|could (?:refer|mean|be either)",
        r"|can (?:refer|mean)|either\b.{1,60}\bor\b|not specified|(?:didn['’]t|did not|don['’]t|do not|doesn['’]t|does not) (?:specify|say|mention)",
        r"|without knowing|interpret(?:ed|ing)? (?:it|this|that)? ?as)",
    ))
    .unwrap()
});

pub fn score(require: &[String], answer: &str) -> Score {
    let asks = sentences(answer)
        .into_iter()
        .find(|s| s.trim_end().ends_with('?') && QUESTION_TO_USER.is_match(s))
        .map(|s| format!("asks \"{}\"", clip(&s, 60)))
        .or_else(|| {
            ASKS.find(answer)
                .map(|m| format!("asks (\"{}\")", m.as_str()))
        });
    let assumes = ASSUMES.find(answer).map(|m| {
        format!(
            "states an assumption or the ambiguity (\"{}\")",
            clip(m.as_str(), 40)
        )
    });
    let norm = normalize(answer);
    let missing: Vec<&str> = require
        .iter()
        .filter(|t| find_alternative(&norm, t).is_none())
        .map(String::as_str)
        .collect();
    let signals: Vec<String> = asks.iter().chain(assumes.iter()).cloned().collect();
    let mut failed = Vec::new();
    let mut lines = Vec::new();
    if signals.is_empty() {
        failed.push(Check::Clarification);
        lines.push("neither asks for clarification nor states an assumption".to_string());
    }
    if !missing.is_empty() {
        failed.extend(missing.iter().map(|t| Check::Require(t.to_string())));
        lines.push(format!("missing \"{}\"", missing.join("\", \"")));
    }
    let detail = Detail::Checks { failed };
    if lines.is_empty() {
        let kind = match (asks.is_some(), assumes.is_some()) {
            (true, true) => "asks and hedges",
            (true, false) => "asks",
            _ => "hedges",
        };
        Score::new(Some(true), detail, signals.join("; ")).keyed(kind)
    } else {
        Score::new(Some(false), detail, format!("failed: {}", lines.join("; "))).read_whole(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::testing::assert_scores;

    #[test]
    fn asking_or_hedging_passes_and_a_confident_answer_fails() {
        assert_scores(
            &[
                "Which bank do you mean? I can help if you tell me where you are.",
                "Could you tell me which city you are in?",
                "I don't know your location; please let me know where you are.",
                "Assuming you mean 100 °C, that is 212 °F.",
                "If it is 100 °F, that is about 37.8 °C; if it is 100 °C, it is 212 °F.",
                "The sentence is ambiguous: \"he\" could refer to Tom or Jim.",
                "It is unclear who won; it could be either of them.",
                "That depends on which bank you mean.",
                "You didn’t say which scale, so here are both.",
                "Celsius or Fahrenheit?",
            ],
            &[
                "The bank is about two kilometres away.",
                "Tom won the prize.",
                "100 degrees is 212 °F.",
                "What a lovely question! The answer is 212.",
                "Where is the bank? It is on Main Street.",
                "",
            ],
            |a| score(&[], a),
        );
    }

    #[test]
    fn required_terms_keep_the_clarification_on_topic() {
        let require = vec!["celsius|fahrenheit".to_string()];
        assert_eq!(
            score(&require, "Assuming Celsius: 212 °F.").correct,
            Some(true)
        );
        let s = score(&require, "Could you clarify what you mean?");
        assert_eq!(s.correct, Some(false));
        assert!(s.evidence.contains("missing"), "{}", s.evidence);
        assert!(validate(&["?".to_string()]).is_err());
    }

    #[test]
    fn extracted_is_the_whole_answer_so_late_differences_show() {
        let head = "The bank is located in the heart of the city, just a short walk from the main square and";
        let a = score(&[], &format!("{head} the station."));
        let b = score(&[], &format!("{head} the museum."));
        assert_eq!((a.correct, b.correct), (Some(false), Some(false)));
        assert_ne!(a.extracted, b.extracted);
        assert!(a.extracted.unwrap().ends_with("the station"));
    }
}
