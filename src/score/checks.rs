//! Instruction checks on free text, shared by the `trap` and `open` scorers: required terms,
//! forbidden words and letters, word, sentence and line limits, target language.
//!
//! Terms are matched as whole normalised phrases (case, punctuation and accents ignored);
//! `"a|b"` accepts either alternative. A forbidden word also forbids its plural ("banana" catches
//! "bananas"). A forbidden letter is checked case-insensitively with accents folded ('e' catches
//! 'É').

use serde::{Deserialize, Serialize};

use super::detail::{Check, Detail, FailedCheck};
use super::language::{self, Language};
use super::text::{find_alternative, normalize, sentences, term_is_matchable, words};

/// The checks a `trap` or `open` prompt sets (`score = { type = "trap", forbid = [...], ... }`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextChecks {
    /// The answer that must be given, scored like `numeric` (traps only), e.g. "4".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Terms that must all appear; `"a|b"` accepts either.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub require: Vec<String>,
    /// Words or phrases that must not appear (plurals included).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbid: Vec<String>,
    /// Letters that must not appear anywhere, e.g. "e".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub forbid_letters: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_words: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_words: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sentences: Option<usize>,
    /// The exact number of non-empty lines (a haiku has 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<usize>,
    /// The language the text must be written in (en, fr, de, es, it, pt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<Language>,
}

/// What the checks found: one line per check, failures first when shown.
#[derive(Debug, Default, PartialEq)]
pub struct CheckOutcome {
    pub passed: Vec<String>,
    pub failed: Vec<FailedCheck>,
}

impl CheckOutcome {
    fn record(&mut self, check: Check, result: Result<String, String>) {
        match result {
            Ok(p) => self.passed.push(p),
            Err(f) => self.failed.push(FailedCheck::new(check, f)),
        }
    }

    /// "failed: a; b" or "passed: c; d" (failures first, then what passed).
    pub fn evidence(&self) -> String {
        let mut parts = Vec::new();
        if !self.failed.is_empty() {
            let failed: Vec<&str> = self.failed.iter().map(|f| f.message.as_str()).collect();
            parts.push(format!("failed: {}", failed.join("; ")));
        }
        if !self.passed.is_empty() {
            parts.push(format!("passed: {}", self.passed.join("; ")));
        }
        parts.join(" | ")
    }

    /// The failed checks, as data.
    pub fn detail(&self) -> Detail {
        Detail::Checks {
            failed: self.failed.iter().map(|f| f.check.clone()).collect(),
        }
    }
}

impl TextChecks {
    pub fn validate(&self) -> Result<(), String> {
        if let Some(t) = self
            .require
            .iter()
            .chain(&self.forbid)
            .find(|t| !term_is_matchable(t))
        {
            return Err(format!("term `{t}` has no letters or digits"));
        }
        if let Some(c) = self.forbid_letters.chars().find(|c| !c.is_alphabetic()) {
            return Err(format!("forbid_letters holds `{c}`, which is not a letter"));
        }
        match (self.min_words, self.max_words) {
            (Some(lo), Some(hi)) if lo > hi => {
                return Err(format!("min_words {lo} is above max_words {hi}"))
            }
            (_, Some(0)) => return Err("max_words must be at least 1".into()),
            _ => {}
        }
        if self.max_sentences == Some(0) {
            return Err("max_sentences must be at least 1".into());
        }
        if self.lines == Some(0) {
            return Err("lines must be at least 1".into());
        }
        Ok(())
    }

    /// Run every check except `answer` (which the trap scorer owns).
    pub fn run(&self, text: &str) -> CheckOutcome {
        let mut out = CheckOutcome::default();
        self.check_terms(text, &mut out);
        self.check_letters(text, &mut out);
        self.check_lengths(text, &mut out);
        if let Some(lang) = self.language {
            out.record(Check::Language, language::check(text, lang));
        }
        out
    }

    /// Required terms (one alternative found) and forbidden words (none found).
    fn check_terms(&self, text: &str, out: &mut CheckOutcome) {
        let norm = normalize(text);
        for term in &self.require {
            out.record(
                Check::Require(term.clone()),
                match find_alternative(&norm, term) {
                    Some(alt) => Ok(format!("has \"{alt}\"")),
                    None => Err(format!("missing \"{term}\"")),
                },
            );
        }
        for term in &self.forbid {
            out.record(
                Check::Forbid(term.clone()),
                match forbidden_hit(&norm, term) {
                    Some(hit) => Err(format!("contains forbidden \"{hit}\"")),
                    None => Ok(format!("no \"{term}\"")),
                },
            );
        }
    }

    /// Forbidden letters, each naming up to three words that hold it.
    fn check_letters(&self, text: &str, out: &mut CheckOutcome) {
        for letter in normalize(&self.forbid_letters).chars() {
            let offenders: Vec<&str> = words(text)
                .into_iter()
                .filter(|w| normalize(w).contains(letter))
                .collect();
            out.record(
                Check::ForbidLetter(letter),
                if offenders.is_empty() {
                    Ok(format!("no letter '{letter}'"))
                } else {
                    let shown: Vec<String> = offenders
                        .iter()
                        .take(3)
                        .map(|w| format!("\"{w}\""))
                        .collect();
                    Err(format!(
                        "letter '{letter}' in {} word(s): {}",
                        offenders.len(),
                        shown.join(", ")
                    ))
                },
            );
        }
    }

    /// Word, sentence and line limits.
    fn check_lengths(&self, text: &str, out: &mut CheckOutcome) {
        let n_words = words(text).len();
        if let Some(lo) = self.min_words {
            out.record(
                Check::MinWords,
                if n_words >= lo {
                    Ok(format!("{n_words} words (min {lo})"))
                } else {
                    Err(format!("{n_words} words, fewer than {lo}"))
                },
            );
        }
        if let Some(hi) = self.max_words {
            out.record(
                Check::MaxWords,
                if n_words <= hi {
                    Ok(format!("{n_words} words (max {hi})"))
                } else {
                    Err(format!("{n_words} words, more than {hi}"))
                },
            );
        }
        if let Some(hi) = self.max_sentences {
            let n = sentences(text).len();
            out.record(
                Check::MaxSentences,
                if n <= hi {
                    Ok(format!("{n} sentence(s) (max {hi})"))
                } else {
                    Err(format!("{n} sentences, more than {hi}"))
                },
            );
        }
        if let Some(want) = self.lines {
            let n = text.lines().filter(|l| !l.trim().is_empty()).count();
            out.record(
                Check::Lines,
                if n == want {
                    Ok(format!("{n} line(s)"))
                } else {
                    Err(format!("{n} line(s), not {want}"))
                },
            );
        }
    }

    /// A one-line description of the constraints, for reports.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(a) = &self.answer {
            parts.push(format!("answer {a}"));
        }
        if !self.require.is_empty() {
            parts.push(format!("has {}", self.require.join(", ")));
        }
        if !self.forbid.is_empty() {
            parts.push(format!("no {}", self.forbid.join(", ")));
        }
        if !self.forbid_letters.is_empty() {
            parts.push(format!("no letter {}", self.forbid_letters));
        }
        match (self.min_words, self.max_words) {
            (Some(lo), Some(hi)) => parts.push(format!("{lo}-{hi} words")),
            (Some(lo), None) => parts.push(format!(">= {lo} words")),
            (None, Some(hi)) => parts.push(format!("<= {hi} words")),
            (None, None) => {}
        }
        if let Some(s) = self.max_sentences {
            parts.push(format!("<= {s} sentence(s)"));
        }
        if let Some(n) = self.lines {
            parts.push(format!("{n} line(s)"));
        }
        if let Some(l) = self.language {
            parts.push(format!("in {}", l.code()));
        }
        parts.join("; ")
    }
}

/// The forbidden term or its plural, when the normalised text holds it.
fn forbidden_hit(norm: &str, term: &str) -> Option<String> {
    let t = normalize(term);
    [t.clone(), format!("{t}s"), format!("{t}es")]
        .into_iter()
        .find(|v| super::text::contains_phrase(norm, v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::testing::text_checks as checks;

    #[test]
    fn required_terms_with_alternatives_and_accents() {
        let c = checks(r#"require = ["bibliothèque", "neuf|9"]"#);
        assert!(c.run("La bibliotheque ouvre à 9 heures.").failed.is_empty());
        let out = c.run("La librairie ouvre à dix heures.");
        assert_eq!(out.failed.len(), 2, "{out:?}");
        assert!(out
            .evidence()
            .starts_with("failed: missing \"bibliothèque\""));
    }

    #[test]
    fn forbidden_words_include_plurals_but_not_other_words() {
        let c = checks(r#"forbid = ["banana"]"#);
        assert!(c.run("The answer is 4.").failed.is_empty());
        assert!(!c.run("I like Bananas.").failed.is_empty());
        assert!(!c.run("a BANANA!").failed.is_empty());
        assert!(c.run("bandana").failed.is_empty());
    }

    #[test]
    fn forbidden_letters_are_case_and_accent_insensitive() {
        let c = checks(r#"forbid_letters = "e""#);
        assert!(c.run("A cat sat on a warm mat.").failed.is_empty());
        let out = c.run("Émile sat on the mat.");
        assert_eq!(
            out.failed,
            [FailedCheck::new(
                Check::ForbidLetter('e'),
                "letter 'e' in 2 word(s): \"Émile\", \"the\""
            )]
        );
    }

    #[test]
    fn word_and_sentence_limits() {
        let haiku = checks("lines = 3");
        assert!(haiku
            .run("Cold rain\nred maples\nthe pond")
            .failed
            .is_empty());
        let one_line = haiku.run("In the heart of autumn rain, a gentle breeze.");
        assert_eq!(
            one_line.failed,
            [FailedCheck::new(Check::Lines, "1 line(s), not 3")]
        );
        let c = checks("min_words = 3\nmax_words = 5\nmax_sentences = 1");
        assert!(c.run("Blue light scatters most.").failed.is_empty());
        assert_eq!(
            c.run("Blue.").failed,
            [FailedCheck::new(Check::MinWords, "1 words, fewer than 3")]
        );
        assert_eq!(
            c.run("Light scatters. Blue wins.").failed,
            [FailedCheck::new(
                Check::MaxSentences,
                "2 sentences, more than 1"
            )]
        );
        assert_eq!(
            c.run("Air molecules scatter short blue wavelengths.")
                .failed,
            [FailedCheck::new(Check::MaxWords, "6 words, more than 5")]
        );
    }

    #[test]
    fn validation_and_unknown_fields() {
        assert!(checks("min_words = 5\nmax_words = 2").validate().is_err());
        assert!(checks("require = [\"?\"]").validate().is_err());
        assert!(checks("forbid_letters = \"1\"").validate().is_err());
        assert!(checks("language = \"fr\"").validate().is_ok());
        assert!(toml::from_str::<TextChecks>("forbidden = [\"x\"]").is_err());
        assert!(toml::from_str::<TextChecks>("language = \"xx\"").is_err());
    }
}
