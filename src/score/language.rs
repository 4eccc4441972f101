//! A light language check for translations: count each language's distinctive stop words.
//!
//! The lists hold only function words that are not also common words of another listed language
//! ("la", "de", "que", "no", "en" are left out). A text is in the target language when it has at
//! least [`MIN_HITS`] of the target's stop words and more than of any other language's.

use serde::{Deserialize, Serialize};

/// The least number of target-language stop words a text must contain.
pub const MIN_HITS: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    En,
    Fr,
    De,
    Es,
    It,
    Pt,
}

const ALL: [Language; 6] = [
    Language::En,
    Language::Fr,
    Language::De,
    Language::Es,
    Language::It,
    Language::Pt,
];

impl Language {
    pub fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Fr => "fr",
            Language::De => "de",
            Language::Es => "es",
            Language::It => "it",
            Language::Pt => "pt",
        }
    }

    fn stop_words(self) -> &'static [&'static str] {
        match self {
            Language::En => &[
                "the", "and", "is", "are", "was", "were", "of", "to", "it", "that", "this", "with",
                "for", "on", "at", "from", "have", "has", "you", "he", "she", "we", "they", "my",
                "very", "not", "be", "i", "because", "our", "your", "there", "what", "where",
                "its", "every", "today", "an",
            ],
            Language::Fr => &[
                "le", "les", "et", "est", "sont", "des", "du", "une", "dans", "pour", "qui", "pas",
                "sur", "avec", "au", "aux", "ce", "cette", "elle", "nous", "vous", "je", "mais",
                "très", "à", "ne", "où", "ses", "leur", "mon", "tous", "toutes", "chaque", "être",
                "aujourd", "hui",
            ],
            Language::De => &[
                "der", "die", "das", "und", "ist", "sind", "nicht", "ein", "eine", "einen", "mit",
                "für", "auf", "ich", "wir", "sie", "heute", "zu", "zum", "zur", "von", "dem",
                "hat", "haben", "sehr", "auch", "nach", "aus", "bei", "mein", "meine", "kein",
                "keine", "noch", "schon", "wird", "werden",
            ],
            Language::Es => &[
                "el", "los", "las", "y", "es", "muy", "pero", "también", "yo", "mis", "tiene",
                "tengo", "hay", "hoy", "sus", "están", "nosotros", "ella", "ellos", "esta", "este",
                "estoy", "soy", "eres",
            ],
            Language::It => &[
                "il", "lo", "gli", "della", "delle", "degli", "dei", "nel", "nella", "è", "sono",
                "per", "che", "più", "ho", "hanno", "mia", "mio", "di", "alla", "questo", "questa",
                "anche", "molto", "ogni", "siamo", "dov",
            ],
            Language::Pt => &[
                "o", "os", "não", "um", "é", "dos", "das", "em", "na", "nas", "com", "mas", "eu",
                "você", "vai", "vamos", "estão", "muito", "também", "ao", "pelo", "pela", "seu",
                "sua", "isso", "ela", "ele",
            ],
        }
    }
}

/// How many of each language's stop words the text holds, in the order of `ALL`.
pub fn hits(text: &str) -> Vec<(Language, usize)> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    ALL.iter()
        .map(|&lang| {
            let list = lang.stop_words();
            (lang, words.iter().filter(|w| list.contains(w)).count())
        })
        .collect()
}

/// Ok with a summary when `text` reads as `target`; Err with the counts otherwise.
pub fn check(text: &str, target: Language) -> Result<String, String> {
    let counts = hits(text);
    let mine = counts
        .iter()
        .find(|(l, _)| *l == target)
        .map_or(0, |(_, n)| *n);
    let rivals: Vec<String> = counts
        .iter()
        .filter(|(l, n)| *l != target && *n > 0)
        .map(|(l, n)| format!("{} {n}", l.code()))
        .collect();
    let beaten = counts.iter().any(|(l, n)| *l != target && *n >= mine);
    let summary = format!(
        "{} stop words: {mine}{}",
        target.code(),
        if rivals.is_empty() {
            String::new()
        } else {
            format!(" (others: {})", rivals.join(", "))
        }
    );
    if mine >= MIN_HITS && !beaten {
        Ok(format!("language {} ({summary})", target.code()))
    } else {
        Err(format!("not in language {} ({summary})", target.code()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_each_language() {
        let samples = [
            (
                Language::En,
                "The library opens at nine o'clock every morning.",
            ),
            (
                Language::Fr,
                "La bibliothèque ouvre à neuf heures tous les matins.",
            ),
            (Language::De, "Der Zug nach Berlin hat heute Verspätung."),
            (Language::Es, "Mi hermano tiene dos gatos y un perro."),
            (
                Language::It,
                "Dov'è la farmacia più vicina? Ho bisogno di medicine per mia figlia.",
            ),
            (
                Language::Pt,
                "Vamos à praia amanhã porque o tempo vai estar bom.",
            ),
        ];
        for (lang, text) in samples {
            assert!(check(text, lang).is_ok(), "{text}: {:?}", check(text, lang));
            for other in ALL.iter().filter(|&&o| o != lang) {
                assert!(check(text, *other).is_err(), "{text} is not {other:?}");
            }
        }
    }

    #[test]
    fn an_untranslated_answer_fails_with_counts() {
        let err = check("The train to Berlin is late today.", Language::De).unwrap_err();
        assert!(
            err.starts_with("not in language de (de stop words: 0"),
            "{err}"
        );
        assert!(err.contains("en 4"), "{err}");
        assert!(check("", Language::Fr).is_err());
    }
}
