//! What kind of divergence a `diff` pair is: a `flip` (one side correct, the other not), an
//! `answer` (both wrong, or ungraded, with different answers) or a `format` difference (the same
//! failure rendered differently).
//!
//! A pair where one side passed its text checks (an open-ended answer, ungraded) and the other
//! failed them counts as a `flip` too: one side did what was asked, the other did not.
//!
//! A both-wrong pair is `format` when the two failures are one failure in two renderings:
//! - the extracted answers are equal once rendering is set aside (code fences, a leading
//!   `Output:`, Markdown emphasis, case, whitespace and punctuation);
//! - predicted output: one answer is the other restated after an echo of the code (the code line
//!   echoed back, then the same output);
//! - text checks (trap, open, clarify): both failed the same checks (the same forbidden word
//!   used, the same required fact missing), whatever else the texts say;
//! - neither side gave a readable answer at all;
//! - JavaScript: both candidates passed no test (whether they failed by wrong value or by
//!   exception is how the failure shows, not a different answer);
//! - JSON: neither side made an attempt at the requested shape: no JSON object at all (a
//!   fragment such as `[1,2]`, or nothing), or an object picked out of code in another language
//!   (a `json.dumps({...})` inside a Python block).

use serde::{Deserialize, Serialize};

use super::verdict::Side;

/// The kind of a `diff` pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DivergenceKind {
    Flip,
    Answer,
    Format,
}

impl DivergenceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::Flip => "flip",
            DivergenceKind::Answer => "answer",
            DivergenceKind::Format => "format",
        }
    }
}

/// The kind of a pair the verdict already called `diff`; `scorer` is the scorer family name.
pub fn classify(scorer: &str, a: Side, b: Side) -> DivergenceKind {
    match (a.correct, b.correct) {
        (Some(x), Some(y)) if x != y => DivergenceKind::Flip,
        (Some(false), None) | (None, Some(false)) => DivergenceKind::Flip,
        (Some(false), Some(false)) if same_failure(scorer, a, b) => DivergenceKind::Format,
        _ => DivergenceKind::Answer,
    }
}

fn same_failure(scorer: &str, a: Side, b: Side) -> bool {
    let (x, y) = (readable(a.extracted), readable(b.extracted));
    match (x, y) {
        (None, None) => true,
        (Some(x), Some(y)) if rendering_free(x) == rendering_free(y) => true,
        _ => match scorer {
            "js" => passed_none(x) && passed_none(y),
            "json" => !json_attempt(a) && !json_attempt(b),
            "output" => x.zip(y).is_some_and(|(x, y)| restated(x, y)),
            "trap" | "open" | "clarify" => {
                failed_checks(a.evidence).is_some_and(|f| Some(f) == failed_checks(b.evidence))
            }
            _ => false,
        },
    }
}

/// One output is the other repeated after an echo of the code: the longer ends with the shorter.
fn restated(x: &str, y: &str) -> bool {
    let (x, y) = (rendering_free(x), rendering_free(y));
    let (long, short) = if x.len() >= y.len() { (x, y) } else { (y, x) };
    !short.is_empty() && long.ends_with(&short)
}

/// The checks a text failed, without their particulars (counts and quoted words): from evidence
/// such as `failed: contains forbidden "moon"; letter 'e' in 3 word(s): "The" | passed: …`.
fn failed_checks(evidence: Option<&str>) -> Option<Vec<String>> {
    let failed = evidence?.strip_prefix("failed: ")?;
    let failed = failed.split(" | passed:").next().unwrap_or(failed);
    let checks: Vec<String> = failed
        .split("; ")
        .map(|check| {
            let head = check.split(": ").next().unwrap_or(check);
            head.chars().filter(|c| !c.is_ascii_digit()).collect()
        })
        .collect();
    (!checks.is_empty()).then_some(checks)
}

fn readable(extracted: Option<&str>) -> Option<&str> {
    extracted.map(str::trim).filter(|s| !s.is_empty())
}

/// The text without what only renders it: fence lines, an `Output:` label, emphasis, case,
/// punctuation and spacing.
fn rendering_free(text: &str) -> String {
    let body: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect();
    let joined = body.join(" ");
    let joined = joined.trim();
    let joined = joined
        .strip_prefix("Output:")
        .or_else(|| joined.strip_prefix("output:"))
        .unwrap_or(joined);
    joined
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A JS verdict key such as `0/6 FFFFFF` (none of six tests passed).
fn passed_none(extracted: Option<&str>) -> bool {
    extracted.is_none_or(|e| e.starts_with("0/"))
}

/// Whether a side answered with a JSON object of its own, not one found inside code in
/// another language.
fn json_attempt(side: Side) -> bool {
    is_object(readable(side.extracted)) && !in_foreign_code(side.answer)
}

/// The answer is a fenced block in a language other than JSON (```python, ```js …).
fn in_foreign_code(answer: &str) -> bool {
    answer.trim_start().strip_prefix("```").is_some_and(|rest| {
        let lang = rest.lines().next().unwrap_or("").trim().to_lowercase();
        !lang.is_empty() && lang != "json"
    })
}

fn is_object(extracted: Option<&str>) -> bool {
    extracted
        .is_some_and(|e| serde_json::from_str::<serde_json::Value>(e).is_ok_and(|v| v.is_object()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrong(extracted: Option<&'static str>) -> Side<'static> {
        Side {
            usable: true,
            correct: Some(false),
            extracted,
            answer: "",
            evidence: None,
        }
    }

    #[test]
    fn one_side_correct_is_a_flip() {
        let right = Side {
            correct: Some(true),
            ..wrong(Some("4"))
        };
        assert_eq!(
            classify("numeric", right, wrong(Some("5"))),
            DivergenceKind::Flip
        );
    }

    #[test]
    fn different_wrong_answers_are_answers() {
        assert_eq!(
            classify("numeric", wrong(Some("9")), wrong(Some("5"))),
            DivergenceKind::Answer
        );
        assert_eq!(
            classify("json", wrong(Some("{\"a\":1}")), wrong(Some("{\"a\":2}"))),
            DivergenceKind::Answer
        );
        assert_eq!(
            classify("js", wrong(Some("2/6 PPFFFF")), wrong(Some("0/6 FFFFFF"))),
            DivergenceKind::Answer
        );
    }

    #[test]
    fn the_same_failure_rendered_differently_is_format() {
        // Seen on the committed example: the code line echoed back, with and without a fence.
        assert_eq!(
            classify(
                "output",
                wrong(Some("print([x * 2 for x in range(5) if x % 2 == 0])")),
                wrong(Some(
                    "```python\nprint([x * 2 for x in range(5) if x % 2 == 0])"
                ))
            ),
            DivergenceKind::Format
        );
        // Every test failing, by wrong value on one side and by exception on the other.
        assert_eq!(
            classify("js", wrong(Some("0/6 FFFFFF")), wrong(Some("0/6 EEEEEE"))),
            DivergenceKind::Format
        );
        // JSON fragments picked out of Python, or nothing at all.
        assert_eq!(
            classify("json", wrong(Some("[1,2]")), wrong(Some(""))),
            DivergenceKind::Format
        );
        let python = Side {
            answer: "```python\nprint(json.dumps({\"id\": 3}))\n```",
            ..wrong(Some("{\"id\":3}"))
        };
        assert_eq!(
            classify("json", wrong(Some("")), python),
            DivergenceKind::Format
        );
        assert_eq!(
            classify("numeric", wrong(None), wrong(Some("  "))),
            DivergenceKind::Format
        );
        // The code line echoed with the output after it, against the output alone.
        assert_eq!(
            classify(
                "output",
                wrong(Some(
                    "console.log([10, 9, 1].sort().join(\",\")); // Output: 10, 9, 1"
                )),
                wrong(Some("[10, 9, 1]"))
            ),
            DivergenceKind::Format
        );
        // The same forbidden words in two wordings of one sentence.
        let failing = |evidence: &'static str| Side {
            evidence: Some(evidence),
            ..wrong(Some(evidence))
        };
        assert_eq!(
            classify(
                "trap",
                failing("failed: contains forbidden \"moon\"; letter 'e' in 1 word(s): \"Awe\" | passed: 21 words (min 5)"),
                failing("failed: contains forbidden \"moon\"; letter 'e' in 3 word(s): \"The\" | passed: 22 words (min 5)")
            ),
            DivergenceKind::Format
        );
        assert_eq!(
            classify(
                "trap",
                failing("failed: contains forbidden \"moon\" | passed: 5 words"),
                failing("failed: 3 words, fewer than 5 | passed: no \"moon\"")
            ),
            DivergenceKind::Answer,
            "different checks failed"
        );
    }

    #[test]
    fn failing_the_checks_where_the_other_passes_is_a_flip() {
        let passed = Side {
            correct: None,
            ..wrong(Some("cold rain on the leaves"))
        };
        assert_eq!(
            classify("open", wrong(Some("one line")), passed),
            DivergenceKind::Flip
        );
    }

    #[test]
    fn ungraded_texts_that_differ_are_answers() {
        let open = |t: &'static str| Side {
            correct: None,
            ..wrong(Some(t))
        };
        assert_eq!(
            classify("open", open("a poem"), open("a song")),
            DivergenceKind::Answer
        );
    }
}
