//! Hedges and self-corrections between two candidate answers, read from the text between them.
//!
//! - A **hedge** offers two answers as alternatives: "9 or 8, depending on how you count", "It's
//!   either Sydney or Canberra", "B or C", "8 (or maybe 9)", "8, or it could be 9". The answer
//!   names no one answer: it is `no answer` (hedged), whichever candidate is right. Two ways of
//!   writing one answer ("6/36, or 1/6"; "George Orwell, or Eric Arthur Blair" when both are
//!   accepted) are not a hedge: the scorer checks that the two candidates differ.
//! - A **self-correction** replaces one answer by the next: "9, or rather 8", "9. Wait, no: 8",
//!   "9 (sorry, 8)", "9, I mean 8": the later one is the answer.
//!
//! "or rather", "or more precisely" and "or so" are corrections or approximations, never
//! hedges; a conversion ("5 km, or about 3.1 miles") has words between the values and is neither.

use std::sync::LazyLock;

use regex::Regex;

/// The text between two candidates offers them as alternatives.
static ALTERNATIVES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?i)^[\s,;*_"'`)\]]*(?:\(\s*)?or\s+"#,
        r"(?:(?:maybe|perhaps|possibly|probably|even|else)\s+",
        r"|(?:it|that|this|the\s+answer)\s+(?:could|might|may|would)\s+(?:also\s+)?be\s+)?",
        r#"[\s*_"'`(\[]*$"#,
    ))
    .unwrap()
});
/// The text between two candidates takes the first back for the second.
static CORRECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?i)^[\s,;.:!*_"'`)\]\-–—]*(?:\(\s*)?"#,
        r"(?:or\s+(?:rather|more\s+precisely|more\s+exactly|to\s+be\s+precise)",
        r"|sorry|i\s+mean|make\s+that|correction|no\s*,?\s*wait|wait\s*,?\s*no|actually)",
        r#"[\s,;:!*_"'`(\[-]*$"#,
    ))
    .unwrap()
});

/// `gap`, the text between two candidate answers, offers them as alternatives ("or", "or
/// maybe", "or it could be").
pub fn alternatives(gap: &str) -> bool {
    ALTERNATIVES.is_match(gap)
}

/// `gap`, the text between two candidate answers, takes the first back for the second.
pub fn correction(gap: &str) -> bool {
    CORRECTION.is_match(gap)
}

/// A word phrase offered as an alternative right after `answer[..end]` ("Sydney or
/// **Canberra**": the phrase after "or"), or right before `answer[start..]` ("**Sydney** or
/// Canberra"): its byte range, up to four words of letters or digits. For scorers that match a
/// phrase and know no other candidates (`exact`).
pub fn alternative_phrase(answer: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let after = &answer[end..];
    if let Some(m) = PHRASE_AFTER.captures(after).and_then(|c| c.name("other")) {
        if !NOT_AN_ANSWER.is_match(m.as_str()) {
            return Some((end + m.start(), end + m.end()));
        }
    }
    // The phrase lies on the mention's own line.
    let line_start = answer[..start].rfind('\n').map_or(0, |i| i + 1);
    let before = &answer[line_start..start];
    let m = PHRASE_BEFORE
        .captures(before)
        .and_then(|c| c.name("other"))?;
    // Only the words after the sentence's own ("It's either Sydney" offers "Sydney").
    let lead = LEAD_IN.find_iter(m.as_str()).last().map_or(0, |l| l.end());
    let (a, b) = (line_start + m.start() + lead, line_start + m.end());
    (a < b && !NOT_AN_ANSWER.is_match(&answer[a..b])).then_some((a, b))
}

/// Words that lead into a candidate rather than belong to it ("It's either", "the answer is").
static LEAD_IN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:either|is|are|was|were|be|it's|it’s|that's|answer|think|say|says|probably",
        r"|maybe|perhaps|possibly)\b[ \t]*",
    ))
    .unwrap()
});

/// ", or Canberra", " or maybe Canberra": the words after "or", on the same line.
static PHRASE_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?i)^[ \t,*_"'`)]*(?:\(\s*)?or[ \t]+(?:maybe[ \t]+|perhaps[ \t]+|possibly[ \t]+)?"#,
        r#"[*_"'`]*(?P<other>[\p{L}\p{N}][\p{L}\p{N}'’-]*(?:[ \t]+[\p{L}\p{N}][\p{L}\p{N}'’-]*){0,3})"#,
    ))
    .unwrap()
});
/// "Sydney or ", "either Sydney or ": the words before "or", on the same line.
static PHRASE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?i)(?P<other>[\p{L}\p{N}][\p{L}\p{N}'’-]*(?:[ \t]+[\p{L}\p{N}][\p{L}\p{N}'’-]*){0,3})"#,
        r#"[*_"'`]*[ \t]*,?[ \t]+or[ \t]+(?:maybe[ \t]+|perhaps[ \t]+|possibly[ \t]+)?[*_"'`]*$"#,
    ))
    .unwrap()
});
/// Words after "or" that continue the sentence rather than name another answer.
static NOT_AN_ANSWER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)^(?:rather|more|so|not|else|otherwise|anything|something|someone|somebody|other",
        r"|another|any|both|neither|none|whatever|whoever|less|fewer|equal|to|as|at|in|on)\b",
    ))
    .unwrap()
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternatives_and_corrections_are_told_apart() {
        for gap in [
            " or ",
            ", or ",
            " (or ",
            " or maybe ",
            ", or it could be ",
            " or **",
        ] {
            assert!(alternatives(gap), "{gap:?}");
            assert!(!correction(gap), "{gap:?}");
        }
        for gap in [
            ", or rather ",
            ". Wait, no: ",
            " (sorry, ",
            ", I mean ",
            " — actually, ",
        ] {
            assert!(correction(gap), "{gap:?}");
            assert!(!alternatives(gap), "{gap:?}");
        }
        for gap in [" km, or about ", " and ", ", ", " or so ", " out of "] {
            assert!(!alternatives(gap) && !correction(gap), "{gap:?}");
        }
    }

    #[test]
    fn the_phrase_offered_beside_a_mention() {
        let text = "It's either Sydney or Canberra, depending on who you ask.";
        let at = text.find("Canberra").unwrap();
        let (a, b) = alternative_phrase(text, at, at + "Canberra".len()).unwrap();
        assert_eq!(&text[a..b], "Sydney");
        let text = "Canberra or Sydney.";
        let (a, b) = alternative_phrase(text, 0, 8).unwrap();
        assert_eq!(&text[a..b], "Sydney");
        let text = "Canberra, or rather the ACT.";
        assert_eq!(alternative_phrase(text, 0, 8), None);
        let text = "Canberra is the capital.";
        assert_eq!(alternative_phrase(text, 0, 8), None);
    }
}
