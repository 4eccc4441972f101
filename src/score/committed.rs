//! Whether a number read where an answer ends (numeric rules 5 and 6: the concluding sentence,
//! the last number) is one the answer commits to. Rules 1 to 4 and the counted noun read a value
//! the answer marks (boxed, an answer phrase, bold, a percentage, the count of the asked noun);
//! the low-precedence rules read one the text merely ends near, which holds only when it is:
//! - stated, not a property or a parallel remark: "a string … with a length of 1", "occurs twice
//!   … and counts as one occurrence", "12.57 is a decimal, and 12.9 is also a decimal" say
//!   something of a number, not that it is the answer (unless the sentence stated the same value
//!   before: "occurs 1 time … and is counted as 1 time");
//! - not an operand: a number an operator and another number follow ("= 187 + 66 × 18"), or an
//!   operator precedes ("the largest integer that can be multiplied by 2"), is part of an
//!   expression, not its result;
//! - for the last number (every number an aside), the only number or alone on the last line.
//!
//! A committed read is still a weak one (no answer phrase ties it to the question): its reason
//! goes to `Score::weak`. An uncommitted read is no answer (`numeric::score`), never a guess.

use std::sync::LazyLock;

use regex::Regex;

use super::numtoken::{tokens, Token, Want};
use super::text::sentence_spans;

/// The rule names of `numeric.rs` whose reads are checked here.
pub const CONCLUDING: &str = "concluding sentence";
pub const LAST_NUMBER: &str = "last number";
pub const LAST_TIME: &str = "last time";

/// How a number was read, for the commitment check: the rule that chose it and where it lies in
/// the answer (byte offsets).
pub struct Read<'a> {
    pub answer: &'a str,
    pub rule: &'static str,
    pub start: usize,
    pub end: usize,
    pub want: Want,
}

/// Why the read is weak (`Ok(Some)`), strong (`Ok(None)`, a marked rule) or not one the answer
/// commits to (`Err`, what about the number says so).
pub fn commitment(read: &Read) -> Result<Option<&'static str>, String> {
    if ![CONCLUDING, LAST_NUMBER, LAST_TIME].contains(&read.rule) {
        return Ok(None);
    }
    let all = tokens(read.answer, read.want);
    if let Some(phrase) = property(read).filter(|_| !restated(read, &all)) {
        return Err(format!("{phrase} describes it"));
    }
    let line_start = read.answer[..read.start].rfind('\n').map_or(0, |i| i + 1);
    if OPERAND.is_match(&read.answer[read.end..])
        || OPERAND_BEFORE.is_match(&read.answer[line_start..read.start])
    {
        return Err("it is an operand of an expression, not its result".into());
    }
    if all.len() == 1 {
        return Ok(Some("the only number, with no answer phrase"));
    }
    if read.rule == CONCLUDING {
        return Ok(Some(
            "read from the concluding sentence, with no answer phrase",
        ));
    }
    if alone_on_last_line(read) {
        return Ok(Some("alone on the last line, with no answer phrase"));
    }
    Err("it is an aside, not alone on the last line".into())
}

/// The phrase around the number that makes it a property or a parallel remark, quoted.
fn property(read: &Read) -> Option<String> {
    let before = &read.answer[..read.start];
    let after = &read.answer[read.end..];
    if let Some(m) = PROPERTY_BEFORE.find(before) {
        return Some(format!("\"{}\"", m.as_str().trim()));
    }
    let m = PROPERTY_AFTER.find(after)?;
    let compares = COMPARES.is_match(&after[m.end()..]);
    (!compares).then(|| format!("\"{}\"", m.as_str().trim()))
}

/// The sentence of the read states its value before it, as a number that is not an aside.
fn restated(read: &Read, all: &[Token]) -> bool {
    let Some(value) = all.iter().find(|t| t.start == read.start).map(|t| t.value) else {
        return false;
    };
    let sentence_start = sentence_spans(read.answer)
        .into_iter()
        .find(|&(a, b)| a <= read.start && read.start < b)
        .map_or(0, |(a, _)| a);
    all.iter()
        .any(|t| !t.aside && t.value == value && (sentence_start..read.start).contains(&t.start))
}

/// The last non-empty line is the number alone (markdown emphasis, brackets and end punctuation
/// aside).
fn alone_on_last_line(read: &Read) -> bool {
    let line_start = read.answer[..read.start].rfind('\n').map_or(0, |i| i + 1);
    let rest = &read.answer[read.end..];
    let bare = |s: &str| {
        s.trim()
            .trim_matches(|c: char| "*_`.!$()[]".contains(c))
            .is_empty()
    };
    bare(&read.answer[line_start..read.start]) && bare(rest)
}

/// An arithmetic operator and another number right after a number: the number is an operand
/// ("= 187 + 66 × 18 - 224" states no result).
static OPERAND: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:[+×*÷/^]|\s[-−]\s)\s*[$(]?\d").unwrap());

/// An operator right before a number: an operand ("can be multiplied by 2", "+ 3"); a minus glued
/// to the number is its sign ("x = -4") and an asterisk after no number emphasis ("*3*").
static OPERAND_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(?:[+×÷^]|[\d)\]]\s*\*|\s[-−]\s|\b(?:plus|minus|times|multiplied\s+by|divided\s+by",
        r"|added\s+to|subtracted\s+from))\s*[$€£]?$",
    ))
    .unwrap()
});

/// Written right before a number that describes a thing: "with a length of", "counts as".
static PROPERTY_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(?:\bwith\s+(?:a|an|the)\s+",
        r"(?:length|size|width|height|depth|weight|radius|diameter)\s+of",
        r"|\bcounts?\s+as|\bis\s+counted\s+as)\s*$",
    ))
    .unwrap()
});
/// Written right after a number that is classified or set beside another ("12.57 is a
/// decimal", "12.9 is also a decimal"); not a comparison ("1.6 is a larger number than 1.13").
static PROPERTY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)^\s*(?:is|are)\s+(?:also\b|(?:an?\s+)(?:[\w-]+\s+)?",
        r"(?:decimal|number|integer|fraction|numeral|digit|value)s?\b)",
    ))
    .unwrap()
});
static COMPARES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^[^.;,]*\b(?:than|equal\s+to)\b").unwrap());
