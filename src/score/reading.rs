//! How a careful grader reads a mention of a candidate answer in its sentence: some mentions name
//! a candidate without giving it as the answer. Shared by the `exact` and `choice` scorers.
//!
//! A mention is dismissed when it is:
//! - negated: after "not", "never", "isn't", "rather than", "instead of", "other than", or
//!   followed by "is not" / "isn't" ("Jupiter, not Saturn", "not Saturn but Jupiter", "Jupiter
//!   (not Saturn)", "Saturn isn't the largest");
//! - rejected: asked and answered no ("Saturn? No, Jupiter");
//! - corrected: followed in its sentence by "actually", "rather", "in fact", "I mean" or
//!   "correction" and then another candidate ("Jupiter, but it's actually Saturn": Saturn);
//! - ranked below the question: "only the second ...", "just the third ...", "the
//!   second-largest" right after it or right before it ("Saturn is only the second largest");
//! - someone else's relation, when another candidate is that someone: "Michelangelo, a rival of
//!   Leonardo da Vinci", "Michelangelo was a student of ...", "Phobos, a moon of Mars".
//!
//! What "another candidate" is depends on the scorer: another option for `choice`; for `exact`,
//! which knows only the accepted phrases, a capitalised name that is not one of them.

use std::sync::LazyLock;

use regex::Regex;

use super::text::sentence_spans;

static NEGATED_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:not|never|isn['’]t|wasn['’]t|aren['’]t|rather\s+than|instead\s+of|other\s+than)",
        r"\s+(?:(?:the|a|an|planet|option|choice|answer|just|only|even)\s+)*[*_`'‘“(]*\s*$",
    ))
    .unwrap()
});
static NEGATED_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^[*_`'’”)]*\s*(?:(?:is|was|are)\s+not|isn['’]t|wasn['’]t|aren['’]t)\b")
        .unwrap()
});
static REJECTED_AFTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^[*_`'’”)]*\s*\?\s*(?:no|nope|wrong)\b").unwrap());
static CORRECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:actually|rather|in\s+fact|i\s+mean|correction)\b(?:\s*[,:—–-])?\s*",
        r"(?:(?:it['’]s|it\s+is|it\s+was|that['’]s|that\s+is|is|was|the\s+answer\s+is)\s+)?",
        r"(?:the\s+)?",
    ))
    .unwrap()
});
static RANKED_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)^[*_`'’”)]*\s*,?\s*(?:which\s+)?(?:is\s+|was\s+|being\s+|comes\s+|ranks\s+)?",
        r"(?:(?:only|just|merely)\s+(?:the\s+)?(?:second|third|fourth|fifth|next|runner)\b",
        r"|(?:the\s+)?(?:second|third|fourth|fifth)[- ]\p{L}+est\b)",
    ))
    .unwrap()
});
static RANKED_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:second|third|fourth|fifth)[- ]\p{L}+est(?:\s+\p{L}+)?[\s,]*[*_`'‘“]*$")
        .unwrap()
});
static RELATION_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?P<subject>\p{Lu}[\p{L}'’.-]*(?:\s+(?:da|de|di|van|von|del|\p{Lu}[\p{L}'’.-]*))*)",
        r"[*_`'’”]*\s*(?:,|\s(?:was|is|became|had\s+been))\s*(?i:a|an|the|his|her|their|one\s+of)",
        r"\s+(?i:(?:\p{L}+\s+){0,2}?)",
        r"(?i:rivals?|students?|pupils?|teachers?|contemporar(?:y|ies)|friends?|mentors?",
        r"|apprentices?|colleagues?|successors?|predecessors?|followers?|admirers?|imitators?",
        r"|disciples?|competitors?|peers?|sons?|daughters?|brothers?|sisters?|wife|husband",
        r"|father|mother|partners?|moons?|satellites?|neighbou?rs?)",
        r"\s+(?i:of)\s+(?:the\s+)?[*_`'‘“]*$",
    ))
    .unwrap()
});

/// Why a careful grader does not take the mention at `start..end` of `text` as the answer, or
/// None when it may be the answer. `other(a, b)` says whether `text[a..b]` names another
/// candidate.
pub fn dismissed(
    text: &str,
    start: usize,
    end: usize,
    other: &dyn Fn(usize, usize) -> bool,
) -> Option<&'static str> {
    let (s_start, s_end) = sentence_spans(text)
        .into_iter()
        .find(|&(a, b)| a <= start && start < b)
        .unwrap_or((0, text.len()));
    let before = &text[s_start..start];
    // Sentence splitting breaks at "?", so a rejection looks into the next sentence.
    let after = &text[end..s_end.max(end)];
    let rest = &text[end..];
    if NEGATED_BEFORE.is_match(before) || NEGATED_AFTER.is_match(after) {
        return Some("negated");
    }
    if REJECTED_AFTER.is_match(rest) {
        return Some("rejected");
    }
    if RANKED_AFTER.is_match(after) || RANKED_BEFORE.is_match(before) {
        return Some("ranked below the question");
    }
    if let Some(c) = CORRECTION.find(after) {
        let fix_start = end + c.end();
        let fix_len = text[fix_start..s_end.max(fix_start)]
            .find([',', ';', '.', '!', '?', '(', '\n'])
            .unwrap_or(s_end.max(fix_start) - fix_start);
        if fix_len > 0 && other(fix_start, fix_start + fix_len) {
            return Some("corrected");
        }
    }
    if let Some(subject) = RELATION_BEFORE
        .captures(before)
        .and_then(|c| c.name("subject"))
    {
        if other(s_start + subject.start(), s_start + subject.end()) {
            return Some("someone else's relation");
        }
    }
    None
}

/// For `exact`: whether `text[a..b]` opens with a capitalised name ("Saturn", "Michelangelo")
/// other than the pronoun "I".
pub fn opens_with_name(text: &str, a: usize, b: usize) -> bool {
    let span = text[a..b].trim_start_matches(|c: char| !c.is_alphanumeric());
    let word: String = span.chars().take_while(|c| c.is_alphanumeric()).collect();
    word.chars().next().is_some_and(char::is_uppercase) && word != "I"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict on the first mention of `who` in `text`; other candidates are capitalised names.
    fn why(text: &str, who: &str) -> Option<&'static str> {
        let start = text.find(who).unwrap();
        let other = |a: usize, b: usize| opens_with_name(text, a, b) && !text[a..b].contains(who);
        dismissed(text, start, start + who.len(), &other)
    }

    #[test]
    fn negations() {
        assert_eq!(why("Jupiter, not Saturn.", "Saturn"), Some("negated"));
        assert_eq!(why("Jupiter, not Saturn.", "Jupiter"), None);
        assert_eq!(
            why("It is not Saturn but Jupiter.", "Saturn"),
            Some("negated")
        );
        assert_eq!(why("It is not Saturn but Jupiter.", "Jupiter"), None);
        assert_eq!(why("Jupiter (not Saturn)", "Saturn"), Some("negated"));
        assert_eq!(
            why("Saturn isn't the largest; Jupiter is.", "Saturn"),
            Some("negated")
        );
        assert_eq!(
            why("Saturn is not the largest; Jupiter is.", "Jupiter"),
            None
        );
        assert_eq!(
            why("Canberra, rather than Sydney.", "Sydney"),
            Some("negated")
        );
    }

    #[test]
    fn rejections_and_corrections() {
        assert_eq!(why("Saturn? No, Jupiter.", "Saturn"), Some("rejected"));
        assert_eq!(why("Saturn? No, Jupiter.", "Jupiter"), None);
        let s = "The largest planet is Jupiter, but it's actually Saturn.";
        assert_eq!(why(s, "Jupiter"), Some("corrected"));
        assert_eq!(why(s, "Saturn"), None);
        assert_eq!(
            why("Saturn, or rather Jupiter.", "Saturn"),
            Some("corrected")
        );
        // "actually" without another candidate after it corrects nothing.
        let s = "It is said to be Leonardo da Vinci, but it actually dates back to 1503.";
        assert_eq!(why(s, "Leonardo"), None);
        assert_eq!(why("Jupiter is actually huge.", "Jupiter"), None);
    }

    #[test]
    fn ranks_and_relations() {
        assert_eq!(
            why("Saturn is only the second largest.", "Saturn"),
            Some("ranked below the question")
        );
        assert_eq!(
            why("Saturn, the second-largest planet.", "Saturn"),
            Some("ranked below the question")
        );
        assert_eq!(
            why("The second largest planet, Saturn, is not it.", "Saturn"),
            Some("ranked below the question")
        );
        assert_eq!(
            why(
                "Jupiter, the fifth planet from the Sun, is the largest.",
                "Jupiter"
            ),
            None
        );
        let s = "Michelangelo, a rival of Leonardo da Vinci, painted it.";
        assert_eq!(why(s, "Leonardo"), Some("someone else's relation"));
        assert_eq!(why(s, "Michelangelo"), None);
        assert_eq!(
            why("Michelangelo was a student of Leonardo.", "Leonardo"),
            Some("someone else's relation")
        );
        assert_eq!(
            why("It was the work of Leonardo da Vinci.", "Leonardo"),
            None
        );
        assert_eq!(
            why(
                "The Mona Lisa, a painting by Leonardo da Vinci.",
                "Leonardo"
            ),
            None
        );
    }
}
