//! Text helpers shared by the string scorers: normalisation, phrases, words and sentences.

use crate::text::clip;

/// Lowercase, fold common Latin accents (é → e), drop markdown, quotes and punctuation, and
/// collapse whitespace. `normalize("  **Café  Noir**. ") == "cafe noir"`.
pub fn normalize(s: &str) -> String {
    let mapped: String = s
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c.is_alphanumeric() { fold(c) } else { ' ' })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where the normalised `needle` occurs as whole words in the raw text `haystack`: byte ranges
/// of `haystack`, in order. In scripts written without spaces (Han, Kana) each character is a
/// word, so "乔治 奥威尔" is found in "作者是乔治·奥威尔".
pub fn phrase_spans(haystack: &str, needle: &str) -> Vec<(usize, usize)> {
    if needle.is_empty() {
        return Vec::new();
    }
    // The normalised text, one word per entry, with the raw range each word came from.
    let mut words: Vec<(String, usize, usize)> = Vec::new();
    let mut current: Option<(String, usize, usize)> = None;
    for (i, c) in haystack.char_indices() {
        let end = i + c.len_utf8();
        let mut alnum = false;
        for l in c.to_lowercase() {
            if l.is_alphanumeric() {
                alnum = true;
                if unspaced(l) {
                    words.extend(current.take());
                    words.push((l.to_string(), i, end));
                    continue;
                }
                let w = current.get_or_insert_with(|| (String::new(), i, end));
                w.0.push(fold(l));
                w.2 = end;
            }
        }
        if !alnum {
            words.extend(current.take());
        }
    }
    words.extend(current.take());
    let want: Vec<String> = needle
        .split(' ')
        .flat_map(|w| {
            // As the text is cut: runs of spaced letters, each unspaced character alone.
            let mut parts: Vec<String> = Vec::new();
            let mut run = String::new();
            for c in w.chars() {
                if unspaced(c) {
                    parts.extend((!run.is_empty()).then(|| std::mem::take(&mut run)));
                    parts.push(c.to_string());
                } else {
                    run.push(c);
                }
            }
            parts.extend((!run.is_empty()).then_some(run));
            parts
        })
        .collect();
    (0..words.len().saturating_sub(want.len() - 1))
        .filter(|&i| want.iter().enumerate().all(|(k, w)| words[i + k].0 == *w))
        .map(|i| (words[i].1, words[i + want.len() - 1].2))
        .collect()
}

/// A character of a script written without spaces between words (Han, Kana): a word of its own.
fn unspaced(c: char) -> bool {
    matches!(script_of(c), "Han" | "Kana")
}

/// A lowercase letter without its accent; other characters unchanged.
fn fold(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'ç' => 'c',
        'è' | 'é' | 'ê' | 'ë' => 'e',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        other => other,
    }
}

/// The writing system most of a text's letters are in ("Latin", "Han", "Cyrillic", …); None for
/// a text without letters.
pub fn script(s: &str) -> Option<&'static str> {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for c in s.chars().filter(|c| c.is_alphabetic()) {
        let name = script_of(c);
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, k)) => *k += 1,
            None => counts.push((name, 1)),
        }
    }
    counts.into_iter().max_by_key(|&(_, k)| k).map(|(n, _)| n)
}

fn script_of(c: char) -> &'static str {
    match c as u32 {
        0x0000..=0x024F | 0x1E00..=0x1EFF => "Latin",
        0x0370..=0x03FF => "Greek",
        0x0400..=0x052F => "Cyrillic",
        0x0590..=0x05FF => "Hebrew",
        0x0600..=0x06FF => "Arabic",
        0x0900..=0x097F => "Devanagari",
        0x0E00..=0x0E7F => "Thai",
        0x3040..=0x30FF => "Kana",
        0xAC00..=0xD7AF | 0x1100..=0x11FF => "Hangul",
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF => "Han",
        _ => "other",
    }
}

/// Whether `needle` occurs in `haystack` as whole words (both already normalised).
pub fn contains_phrase(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let padded = format!(" {haystack} ");
    padded.contains(&format!(" {needle} "))
}

/// The first alternative of `term` ("bibliothèque|library") found as a phrase in the
/// normalised `haystack`.
pub fn find_alternative<'a>(haystack: &str, term: &'a str) -> Option<&'a str> {
    term.split('|')
        .map(str::trim)
        .find(|alt| contains_phrase(haystack, &normalize(alt)))
}

/// Whether every alternative of a `a|b` term has letters or digits (so it can ever match).
pub fn term_is_matchable(term: &str) -> bool {
    term.split('|').all(|alt| !normalize(alt).is_empty())
}

/// The words of a text: whitespace-separated tokens holding at least one letter or digit.
pub fn words(s: &str) -> Vec<&str> {
    s.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect()
}

/// The sentences of a text: runs ended by `.`, `!`, `?` (followed by space or the end) or a
/// line break, that hold at least one word. A dot inside a token ("3.5") does not end one.
pub fn sentences(s: &str) -> Vec<String> {
    sentence_spans(s)
        .into_iter()
        .map(|(a, b)| s[a..b].to_string())
        .collect()
}

/// The byte ranges of [`sentences`], trimmed, in order.
pub fn sentence_spans(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut push = |a: usize, b: usize| {
        let piece = &s[a..b];
        if !words(piece).is_empty() {
            let lead = piece.len() - piece.trim_start().len();
            out.push((a + lead, a + piece.trim_end().len()));
        }
    };
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        match c {
            '\n' => {
                push(start, i);
                start = i + 1;
            }
            '.' | '!' | '?' | '。' if next.is_none_or(char::is_whitespace) => {
                push(start, i + c.len_utf8());
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    push(start, s.len());
    out
}

/// The sentence of `s` (see [`sentences`]) that holds byte `pos`, clipped to `max` characters, as
/// evidence of where an answer was read.
pub fn sentence_at(s: &str, pos: usize, max: usize) -> String {
    let (a, b) = sentence_spans(s)
        .into_iter()
        .find(|&(a, b)| a <= pos && pos < b.max(a + 1))
        .unwrap_or((pos.min(s.len()), s.len()));
    clip(&s[a..b], max)
}

/// Where `part`, a slice of `whole`, starts in it (0 when it is not a slice of it).
pub fn offset_in(whole: &str, part: &str) -> usize {
    let (w, p) = (whole.as_ptr() as usize, part.as_ptr() as usize);
    if p >= w && p + part.len() <= w + whole.len() {
        p - w
    } else {
        0
    }
}

/// How long a quoted sentence in evidence may be.
pub const QUOTE_CHARS: usize = 160;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_drops_case_punctuation_markdown_and_accents() {
        assert_eq!(normalize("  **George  Orwell**. "), "george orwell");
        assert_eq!(normalize("“Yes,” she said!"), "yes she said");
        assert_eq!(
            normalize("La Bibliothèque ouvre à 9h"),
            "la bibliotheque ouvre a 9h"
        );
        assert_eq!(normalize("ÉCOLE"), "ecole");
    }

    #[test]
    fn phrase_match_respects_word_boundaries() {
        assert!(contains_phrase(
            "the author is george orwell",
            "george orwell"
        ));
        assert!(!contains_phrase("paris hilton", "paris hilt"));
        assert!(!contains_phrase("anything", ""));
        let text = "It was **George  Orwell**, not george-orwellian; GEORGE ORWELL.";
        let found: Vec<&str> = phrase_spans(text, "george orwell")
            .into_iter()
            .map(|(a, b)| &text[a..b])
            .collect();
        assert_eq!(found, ["George  Orwell", "GEORGE ORWELL"]);
        assert_eq!(phrase_spans("Café noir", "cafe").len(), 1);
    }

    #[test]
    fn alternatives_are_separated_by_bars() {
        let text = normalize("La bibliothèque ouvre à neuf heures.");
        assert_eq!(find_alternative(&text, "neuf|9"), Some("neuf"));
        assert_eq!(find_alternative(&text, "dix|10"), None);
        assert!(term_is_matchable("a|b"));
        assert!(!term_is_matchable("a|?"));
    }

    #[test]
    fn words_and_sentences_are_counted_like_a_reader_would() {
        assert_eq!(words("Hello, world - it's 3.5 km!").len(), 5);
        assert_eq!(words("  ").len(), 0);
        assert_eq!(sentences("It costs 3.5 euros. Cheap! Really?").len(), 3);
        assert_eq!(sentences("One line\nanother line").len(), 2);
        assert_eq!(sentences("No full stop at the end").len(), 1);
        assert_eq!(sentences("...").len(), 0);
        let text = "So 3.5 km.\n  Then 4! ";
        let spans: Vec<&str> = sentence_spans(text)
            .iter()
            .map(|&(a, b)| &text[a..b])
            .collect();
        assert_eq!(spans, ["So 3.5 km.", "Then 4!"]);
        assert_eq!(sentence_at(text, 13, 160), "Then 4!");
        assert_eq!(sentence_at(text, 0, 5), "So 3…");
        assert_eq!(offset_in(text, &text[3..]), 3);
    }

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text() {
        assert_eq!(clip("a\nb", 10), "a b");
        assert_eq!(clip("abcdefghij", 5), "abcd…");
    }
}
