//! Code-reasoning scoring: the predicted output of a snippet must equal the expected output exactly.
//!
//! The prediction is the first of these that exists:
//! 1. the whole answer, when it already equals the expected output once cleaned;
//! 2. the last fenced code block;
//! 3. the text after the last "Output:" / "output is" / "prints" / "result:" prefix (the rest of
//!    its line, or the lines below it when the prefix ends the line);
//! 4. the last inline code span (`` `...` ``);
//! 5. the last non-empty line.
//!
//! Cleaning trims each line's trailing spaces and blank lines at both ends, then removes wrapping
//! backticks, bold markers and quotes, and a final period, unless the expected output itself has
//! them. After that the comparison is exact: case, inner spaces and punctuation matter.

use std::sync::LazyLock;

use regex::Regex;

use super::{Detail, Score};
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
    let Some((candidate, rule)) = predict(answer, &want) else {
        return Score::new(Some(false), Detail::NotFound, "empty answer");
    };
    let ok = candidate == want;
    let tail = if ok {
        String::new()
    } else {
        format!("; expected `{}`", clip(&want, 60))
    };
    Score::new(
        Some(ok),
        Detail::Value,
        format!("predicted `{}` ({rule}){tail}", clip(&candidate, 60)),
    )
    .read(candidate.clone(), &candidate)
}

static FENCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)```[^\n`]*\n(.*?)```").unwrap());
static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:(?:the\s+)?(?:final\s+)?(?:output|result)(?:\s+(?:is|will be|would be|should be))?\s*:",
        r"|(?:the\s+)?(?:final\s+)?(?:output|result)\s+(?:is|will be|would be|should be)",
        r"|(?:it|this|the (?:code|program|snippet|script))\s+(?:prints|outputs|logs|displays|will print|would print)",
        r")[ \t*]*",
    ))
    .unwrap()
});
static INLINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").unwrap());

/// The predicted output and the rule that found it.
fn predict(answer: &str, want: &str) -> Option<(String, &'static str)> {
    let whole = clean(answer, want);
    if whole.is_empty() {
        return None;
    }
    if whole == want {
        return Some((whole, "whole answer"));
    }
    if let Some(c) = FENCE.captures_iter(answer).last() {
        return Some((clean(&c[1], want), "last code block"));
    }
    if let Some(m) = PREFIX.find_iter(answer).last() {
        let rest = &answer[m.end()..];
        let line = rest.lines().next().unwrap_or("");
        let taken = if line.trim().is_empty() {
            rest.split("\n\n")
                .find(|block| !block.trim().is_empty())
                .unwrap_or("")
        } else {
            line
        };
        let candidate = clean(taken, want);
        if !candidate.is_empty() {
            return Some((candidate, "after an output prefix"));
        }
    }
    if let Some(c) = INLINE.captures_iter(answer).last() {
        return Some((clean(&c[1], want), "last inline code"));
    }
    let last = answer.lines().rev().find(|l| !l.trim().is_empty())?;
    Some((clean(last, want), "last line"))
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

/// Tidy, then strip wrapping backticks, bold, quotes and a final period the expected output lacks.
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
        if out == before {
            return out;
        }
    }
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
