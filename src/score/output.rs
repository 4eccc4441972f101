//! Code-reasoning and list scoring: the predicted output of a snippet, or a list the prompt asks
//! for, must equal the expected output exactly.
//!
//! The prediction is the first of these that exists:
//! 1. the whole answer, when it already equals the expected output once cleaned;
//! 2. the later of the last fenced code block and the text after the last "Output:" / "output
//!    is" / "prints" / "result:" prefix (the rest of its line, or the lines below it when the
//!    prefix ends the line); a block right after such a prefix is what the prefix names;
//! 3. for a list ("a, b, c", the sorting and reversing families), the last line holding one, or
//!    the last run of two or more bullet or numbered lines, read as one list;
//! 4. the last inline code span (`` `...` ``);
//! 5. the last non-empty line.
//!
//! Cleaning trims each line's trailing spaces and blank lines at both ends, then removes wrapping
//! backticks, bold markers and quotes, and a final period, unless the expected output itself has
//! them. A list also loses its label ("Sorted:", "Reversed list:", "The numbers are", "The words
//! in alphabetical order are:"), a bullet, and item numbers ("1. apple, 2. pear"), and its items
//! are joined as the expected list joins them. After that the comparison is exact: case, inner
//! spaces and punctuation matter.

use std::sync::LazyLock;

use regex::Regex;

use super::text::offset_in;
use super::{Detail, ReadAt, Score};
use crate::text::clip;

pub fn validate(expected: &str) -> Result<(), String> {
    if expected.trim().is_empty() {
        Err("expected output must not be empty".into())
    } else {
        Ok(())
    }
}

pub fn score(expected: &str, answer: &str) -> Score {
    let want = tidy(expected);
    let Some(p) = predict(answer, &want) else {
        return Score::new(Some(false), Detail::NotFound, "empty answer");
    };
    let ok = p.text == want;
    let tail = if ok {
        String::new()
    } else {
        format!("; expected `{}`", clip(&want, 60))
    };
    Score::new(
        Some(ok),
        Detail::Value,
        format!("predicted `{}` ({}){tail}", clip(&p.text, 60), p.rule),
    )
    .read(p.text.clone(), &p.text)
    .at(ReadAt::new(p.start, p.end, p.marked))
}

/// A predicted output: its cleaned text, the rule that found it and the raw range it came from.
struct Prediction {
    text: String,
    rule: &'static str,
    start: usize,
    end: usize,
    /// The text names it as the output (a prefix, or the whole answer).
    marked: bool,
}

impl Prediction {
    fn of(answer: &str, raw: &str, want: &str, rule: &'static str, marked: bool) -> Self {
        let start = offset_in(answer, raw);
        Prediction {
            text: clean(raw, want),
            rule,
            start,
            end: start + raw.len(),
            marked,
        }
    }
}

static FENCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)```[^\n`]*\n(.*?)```").unwrap());
static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:(?:the\s+)?(?:final\s+)?(?:output|result)(?:\s+(?:is|will be|would be|should be))?\s*:",
        r"|(?:the\s+)?(?:final\s+)?(?:output|result)\s+(?:is|will be|would be|should be)",
        r"|(?:it|this|the (?:code|program|snippet|script))\s+(?:prints|outputs|logs|displays|will print|would print)",
        r"|(?:this|the)\s+[\w.+#-]+\s+(?:code|program|snippet|script|function)\s+",
        r"(?:prints|outputs|logs|displays|will\s+(?:print|output|log|display)|would\s+(?:print|output))\s*:",
        r")[ \t*]*",
    ))
    .unwrap()
});
static INLINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").unwrap());
/// A bullet or a number opening a list line ("- apple", "2. pear", "3) fig").
static BULLET: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+").unwrap());
/// A label before a list, ended by a colon: "Sorted:", "Reversed list:", "The words in
/// alphabetical order are:".
static COLON_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[*_]*(?:[\p{L}][\p{L}'’-]*[ \t]+){0,7}[\p{L}][\p{L}'’-]*[ \t]*:[*_]*[ \t]*")
        .unwrap()
});
/// A sentence opening that names the list: "The numbers are", "The sorted list is", "Here are".
static COPULA_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)^(?:(?:the|these|here)\b(?:[ \t]+[\p{L}'’-]+){0,6}?[ \t]+(?:is|are)",
        r"|here(?:'s|[ \t]+is|[ \t]+are))[ \t]*:?[ \t]+",
    ))
    .unwrap()
});

/// The predicted output (see the module doc for the rules).
fn predict(answer: &str, want: &str) -> Option<Prediction> {
    let whole = clean(answer, want);
    if whole.is_empty() {
        return None;
    }
    if whole == want {
        return Some(Prediction::of(answer, answer, want, "whole answer", true));
    }
    let block = FENCE.captures_iter(answer).last();
    let prefix = PREFIX.find_iter(answer).last();
    let block_after_prefix = match (&block, prefix) {
        (Some(b), Some(p)) => p.end() <= b.get(0).map_or(0, |m| m.start()),
        _ => false,
    };
    // A prefix after the last block names the output, unless it opens a sentence about the
    // block ("This output is the result of …").
    let prefixed = prefix
        .filter(|_| !block_after_prefix)
        .and_then(|p| after_prefix(answer, p.end()).map(|raw| (p, raw)))
        .filter(|(p, raw)| {
            block.is_none()
                || p.as_str().trim_end_matches([' ', '\t', '*']).ends_with(':')
                || words(raw) <= 4
        })
        .map(|(_, raw)| Prediction::of(answer, raw, want, "after an output prefix", true))
        .filter(|p| !p.text.is_empty());
    if let Some(p) = prefixed {
        return Some(p);
    }
    if let Some((fence, b)) = block.and_then(|c| Some((c.get(0)?, c.get(1)?))) {
        // Named when some prefix ends right before its opening fence.
        let named = PREFIX
            .find_iter(answer)
            .any(|p| p.end() <= fence.start() && answer[p.end()..fence.start()].trim().is_empty());
        let rule = if named {
            "code block after an output prefix"
        } else {
            "last code block"
        };
        return Some(Prediction::of(answer, b.as_str(), want, rule, named));
    }
    if is_list(want) {
        if let Some(p) = last_list(answer, want) {
            return Some(p);
        }
    }
    if let Some(c) = INLINE.captures_iter(answer).last().and_then(|c| c.get(1)) {
        return Some(Prediction::of(
            answer,
            c.as_str(),
            want,
            "last inline code",
            false,
        ));
    }
    let last = answer.lines().rev().find(|l| !l.trim().is_empty())?;
    Some(Prediction::of(answer, last, want, "last line", false))
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// What an output prefix ending at `end` names: the rest of its line, or the next block of lines
/// when the prefix ends its line.
fn after_prefix(answer: &str, end: usize) -> Option<&str> {
    let rest = &answer[end..];
    let line = rest.lines().next().unwrap_or("");
    if line.trim().is_empty() {
        rest.split("\n\n").find(|block| !block.trim().is_empty())
    } else {
        Some(line)
    }
}

/// `s` is a list: one line of two or more comma-separated items of at most three words each,
/// not a printed array, an object or code.
fn is_list(want: &str) -> bool {
    let items: Vec<&str> = want.split(',').filter(|i| !i.trim().is_empty()).collect();
    !want.contains('\n')
        && items.len() >= 2
        && !items
            .iter()
            .any(|i| i.contains(CODE_CHARS) || i.split_whitespace().count() > 3)
}

/// Characters no list item of words or numbers holds, but code and printed arrays do.
const CODE_CHARS: [char; 8] = ['=', '[', ']', '(', ')', '{', '}', ';'];
/// One of [`CODE_CHARS`] (a search that stays fast over a long answer).
static CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[=\[\](){};]").unwrap());

/// The last list in the answer: a line that holds one (label and bullet aside), or a run of two
/// or more bullet lines of one item each.
fn last_list(answer: &str, want: &str) -> Option<Prediction> {
    let lines: Vec<&str> = answer.lines().collect();
    let mut found = None;
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..]
            .iter()
            .take_while(|l| BULLET.is_match(l) && !BULLET.replace(l, "").contains(','))
            .count();
        if run >= 2 {
            let (first, last) = (lines[i], lines[i + run - 1]);
            let start = offset_in(answer, first);
            let end = offset_in(answer, last) + last.len();
            let items: Vec<String> = lines[i..i + run]
                .iter()
                .map(|l| clean(&BULLET.replace(l, ""), want))
                .collect();
            found = Some(Prediction {
                text: items.join(&separator(want)),
                rule: "last list",
                start,
                end,
                marked: false,
            });
            i += run;
            continue;
        }
        let line = lines[i];
        // Only a line with a comma can hold a list: the others are not cleaned.
        if line.contains(',') && is_list(&clean(line, want)) {
            found = Some(Prediction::of(answer, line, want, "last list", false));
        }
        i += 1;
    }
    found
}

/// How the expected list joins its items (", " or ",").
fn separator(want: &str) -> String {
    if want.contains(", ") {
        ", ".into()
    } else {
        ",".into()
    }
}

/// Trim trailing spaces per line and blank lines at both ends.
fn tidy(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim_end).collect();
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |e| e + 1);
    let body = lines[start..end].join("\n");
    // Leading indentation of a single line is never part of a printed value.
    if body.contains('\n') {
        body
    } else {
        body.trim_start().to_string()
    }
}

/// Tidy, then strip wrapping backticks, bold, quotes and a final period the expected output
/// lacks; a list also loses its label, bullet and item numbers (`as_list`).
fn clean(s: &str, want: &str) -> String {
    let mut out = tidy(s);
    loop {
        let before = out.clone();
        for (open, close) in [("**", "**"), ("`", "`"), ("\"", "\""), ("'", "'")] {
            if out.len() >= open.len() + close.len()
                && out.starts_with(open)
                && out.ends_with(close)
                && !(want.starts_with(open) && want.ends_with(close))
            {
                out = out[open.len()..out.len() - close.len()].trim().to_string();
            }
        }
        if out.ends_with('.') && !want.ends_with('.') {
            out.pop();
            out = out.trim_end().to_string();
        }
        if let Some(list) = as_list(&out, want) {
            out = list;
        }
        if out == before {
            return out;
        }
    }
}

/// `s` read as the list `want` is: without a label, bullet or item numbers the expected list
/// does not have, its items joined as the expected list joins them. None when `want` is not a
/// list, or `s` is not one line or holds code or a printed array.
fn as_list(s: &str, want: &str) -> Option<String> {
    if !is_list(want) || s.contains('\n') || CODE.is_match(s) {
        return None;
    }
    let mut body = s.trim();
    if !BULLET.is_match(want) {
        body = BULLET.find(body).map_or(body, |m| &body[m.end()..]);
    }
    if !want.contains(':') {
        body = COLON_LABEL.find(body).map_or(body, |m| &body[m.end()..]);
    }
    if let Some(m) = COPULA_LABEL.find(body) {
        if body[m.end()..].contains(',') {
            body = &body[m.end()..];
        }
    }
    if !body.contains(',') {
        return Some(body.to_string());
    }
    let numbered = |item: &str| BULLET.is_match(item);
    let strip_numbers = !want.split(',').any(numbered);
    let items: Vec<&str> = body
        .split(',')
        .map(str::trim)
        .map(|item| {
            if strip_numbers {
                BULLET.find(item).map_or(item, |m| &item[m.end()..])
            } else {
                item
            }
        })
        .collect();
    Some(items.join(&separator(want)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::testing::assert_scores;

    fn check(expected: &str, accept: &[&str], reject: &[&str]) {
        assert_scores(accept, reject, |a| score(expected, a));
    }

    #[test]
    fn single_line_outputs_in_many_wrappings() {
        check(
            "[0, 4]",
            &[
                "[0, 4]",
                "  [0, 4]  \n",
                "`[0, 4]`",
                "**[0, 4]**",
                "```\n[0, 4]\n```",
                "```python\n[0, 4]\n```",
                "Output: [0, 4]",
                "**Output:** `[0, 4]`",
                "The output is [0, 4].",
                "The code prints `[0, 4]`.",
                "Only even x are kept: 0 and 2, doubled.\n\nOutput:\n```\n[0, 4]\n```",
                "The output will be:\n\n[0, 4]",
            ],
            &[
                "[0,4]",
                "[0, 2]",
                "[0, 4, 8]",
                "Output: [0, 2]",
                "0, 4",
                "```\n[0, 2, 4]\n```",
                "",
                "It prints [0, 4]? No: it prints [0, 2].",
            ],
        );
    }

    #[test]
    fn multi_line_outputs() {
        let want = "Fizz\nBuzz\nFizzBuzz\n7";
        check(
            want,
            &[
                "Fizz\nBuzz\nFizzBuzz\n7",
                "```\nFizz\nBuzz\nFizzBuzz\n7\n```",
                "Output:\n```text\nFizz   \nBuzz\nFizzBuzz\n7\n```\nEach number is checked in turn.",
                "The output is:\n\nFizz\nBuzz\nFizzBuzz\n7\n\n7 is printed as itself.",
            ],
            &[
                "Fizz\nBuzz\nFizzBuzz",
                "Fizz Buzz FizzBuzz 7",
                "fizz\nbuzz\nfizzbuzz\n7",
                "```\nFizz\nBuzz\nFizz\nBuzz\n7\n```",
            ],
        );
    }

    #[test]
    fn quotes_and_periods_that_belong_to_the_output_are_kept() {
        check("'c-b-a'", &["'c-b-a'", "Output: 'c-b-a'"], &["c-b-a"]);
        check(
            "c-b-a",
            &["c-b-a", "\"c-b-a\"", "It prints c-b-a."],
            &["a-b-c", "c b a"],
        );
        check("Done.", &["Done.", "Output: `Done.`"], &["Done"]);
    }

    #[test]
    fn evidence_names_the_rule_and_the_expected_output() {
        let s = score("30", "The code prints 20.");
        assert_eq!(s.extracted.as_deref(), Some("20"));
        assert!(
            s.evidence
                .contains("(after an output prefix); expected `30`"),
            "{}",
            s.evidence
        );
        assert!(validate("  ").is_err());
    }
}
