//! What kind of divergence a `diff` pair is: a `flip` (one side correct, the other not), an
//! `answer` (both wrong, or ungraded, with different answers), a `format` difference (the same
//! failure rendered differently) or `no_answer` (neither side answered).
//!
//! A pair where one side passed its text checks (an open-ended answer, ungraded) and the other
//! failed them counts as a `flip` too: one side did what was asked, the other did not.
//!
//! A both-wrong pair is `no_answer` when neither side gave an answer (nothing read on either:
//! empty, no number, a reply of code where JSON was asked, a completion cut off before it
//! committed to one, a hedge), and `format` only when the two answers are the same answer,
//! rendered differently:
//! - the extracted answers are equal once rendering is set aside (code fences, a leading
//!   `Output:`, Markdown emphasis, case, whitespace and punctuation);
//! - predicted output: one answer is the other restated after an echo of the code (the code line
//!   echoed back, then the same output);
//! - a text answer (`exact`, read whole when wrong): the same words but for the ones that only
//!   join them ("The item that is in box 6 is the feather" and "The item in box 6 is the
//!   feather").
//!
//! Two different wrong answers are an `answer` difference, however alike their failures: two
//! sentences that both use the letter `e`, two translations that both miss a word, two code
//! answers that fail their tests differently. Calling them `format` would hide a real divergence.

use serde::{Deserialize, Serialize};

use super::verdict::Side;
use crate::score::ScorerSpec;

/// The kind of a `diff` pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    Flip,
    Answer,
    Format,
    /// Neither side gave an answer: both read none (empty, no number, code for JSON, cut off
    /// before committing, hedged), with different texts.
    NoAnswer,
}

impl DivergenceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::Flip => "flip",
            DivergenceKind::Answer => "answer",
            DivergenceKind::Format => "format",
            DivergenceKind::NoAnswer => "no_answer",
        }
    }
}

/// The kind of a pair the verdict already called `diff`, scored by `spec`.
pub fn classify(spec: &ScorerSpec, a: Side, b: Side) -> DivergenceKind {
    match (a.correct, b.correct) {
        (Some(x), Some(y)) if x != y => DivergenceKind::Flip,
        (Some(false), None) | (None, Some(false)) => DivergenceKind::Flip,
        (Some(false), Some(false)) => match (readable(a.extracted), readable(b.extracted)) {
            (None, None) => DivergenceKind::NoAnswer,
            (Some(x), Some(y)) if same_answer(spec, x, y) => DivergenceKind::Format,
            _ => DivergenceKind::Answer,
        },
        _ => DivergenceKind::Answer,
    }
}

/// Two wrong answers are one answer rendered differently.
fn same_answer(spec: &ScorerSpec, x: &str, y: &str) -> bool {
    rendering_free(x) == rendering_free(y)
        || (matches!(spec, ScorerSpec::Output { .. }) && restated(x, y))
        || (matches!(spec, ScorerSpec::Exact { .. }) && content_words(x) == content_words(y))
}

/// A text answer's words without the words that only join them ("The item that is in box 6 is
/// the feather" and "The item in box 6 is the feather" say one thing).
fn content_words(text: &str) -> Vec<String> {
    const JOINING: [&str; 16] = [
        "a", "an", "the", "that", "which", "who", "is", "are", "was", "were", "it", "its", "this",
        "there", "of", "now",
    ];
    crate::score::normalize(text)
        .split(' ')
        .filter(|w| !JOINING.contains(w))
        .map(str::to_string)
        .collect()
}

/// One output is the other repeated after an echo of the code: the longer ends with the shorter.
fn restated(x: &str, y: &str) -> bool {
    let (x, y) = (rendering_free(x), rendering_free(y));
    let (long, short) = if x.len() >= y.len() { (x, y) } else { (y, x) };
    !short.is_empty() && long.ends_with(&short)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::{score, Detail, Score, ScoreContext, TextChecks};

    fn numeric() -> ScorerSpec {
        ScorerSpec::Numeric {
            expected: "4".into(),
            tolerance: None,
            counts: None,
        }
    }

    fn js() -> ScorerSpec {
        ScorerSpec::Js {
            suite: "code_generation/x.toml".into(),
            function: "f".into(),
        }
    }

    /// JSON that must be an object with an integer `id`.
    fn json() -> ScorerSpec {
        ScorerSpec::Json {
            required: [("id".to_string(), crate::score::JsonType::Integer)].into(),
            values: Default::default(),
        }
    }

    fn output() -> ScorerSpec {
        ScorerSpec::Output {
            expected: "[0, 4]".into(),
        }
    }

    fn trap(toml_src: &str) -> ScorerSpec {
        ScorerSpec::Trap(crate::score::testing::text_checks(toml_src))
    }

    fn wrong(extracted: Option<&'static str>) -> Side<'static> {
        Side {
            usable: true,
            correct: Some(false),
            extracted,
            answer: "",
        }
    }

    /// A side as the analysis builds it from a score of `answer`.
    fn scored<'a>(s: &'a Score, answer: &'a str) -> Side<'a> {
        Side {
            usable: true,
            correct: s.correct,
            extracted: s.extracted.as_deref(),
            answer,
        }
    }

    fn run(spec: &ScorerSpec, answer: &str) -> Score {
        score(
            spec,
            answer,
            &ScoreContext::for_catalogue(std::path::Path::new("prompts")),
        )
    }

    #[test]
    fn one_side_correct_is_a_flip() {
        let right = Side {
            correct: Some(true),
            ..wrong(Some("4"))
        };
        assert_eq!(
            classify(&numeric(), right, wrong(Some("5"))),
            DivergenceKind::Flip
        );
    }

    #[test]
    fn different_wrong_answers_are_answers() {
        assert_eq!(
            classify(&numeric(), wrong(Some("9")), wrong(Some("5"))),
            DivergenceKind::Answer
        );
        let (a, b) = (run(&json(), "{\"a\":1}"), run(&json(), "{\"a\":2}"));
        assert_eq!((a.correct, b.correct), (Some(false), Some(false)));
        assert_eq!(
            classify(&json(), scored(&a, "{\"a\":1}"), scored(&b, "{\"a\":2}")),
            DivergenceKind::Answer
        );
        assert_eq!(
            classify(&js(), wrong(Some("2/6 PPFFFF")), wrong(Some("0/6 FFFFFF"))),
            DivergenceKind::Answer
        );
        // Every test failing, by wrong value on one side and by exception on the other: two
        // code answers that fail differently.
        assert_eq!(
            classify(&js(), wrong(Some("0/6 FFFFFF")), wrong(Some("0/6 EEEEEE"))),
            DivergenceKind::Answer
        );
        // A JSON fragment against nothing at all, or against a Python reply (no JSON answer:
        // code is not JSON): different answers.
        let fragment = run(&json(), "[1,2]");
        let nothing = run(&json(), "no JSON here");
        assert_eq!(
            (fragment.correct, nothing.correct),
            (Some(false), Some(false))
        );
        assert_eq!(
            classify(&json(), scored(&fragment, "[1,2]"), scored(&nothing, "")),
            DivergenceKind::Answer
        );
        let python = "```python\nprint(json.dumps({\"id\": \"3\"}))\n```";
        let picked = run(&json(), python);
        assert_eq!(
            (&picked.detail, &picked.extracted),
            (&Detail::NotFound, &None)
        );
        assert_eq!(
            classify(&json(), scored(&fragment, "[1,2]"), scored(&picked, python)),
            DivergenceKind::Answer
        );
    }

    /// The demo run's pairs (runs/example-smollm2-kv-demo-catalogue) that were called `format`: both
    /// wrong, failing the same checks, with different answers.
    #[test]
    fn the_demo_runs_different_wrong_answers_are_answers() {
        let cases = [
            (
                trap("forbid_letters = \"e\"\nmin_words = 5\nmax_sentences = 1"),
                "A sentence that does not contain the letter 'e' anywhere is: \"Awesome, but I'm not a superhero.\"",
                "The sentence is \"The only thing I can do is to smile.\"",
            ),
            (
                ScorerSpec::Open(crate::score::testing::text_checks(
                    "language = \"de\"\nrequire = [\"Zug\", \"Berlin\", \"heute\"]\nmax_words = 30",
                )),
                "Die train auf Berlin ist wei\u{df}, um die Auslager zu erhalten.",
                "Die Train auf Berlin ist lese, wenn es wichtig ist.",
            ),
            (
                ScorerSpec::Clarify { require: vec![] },
                "The bank is located in a building called the \"Bank of the East.\" It's a 20-story building with a 10-story lobby.",
                "The bank is about 2.5 kilometers away from here.",
            ),
        ];
        for (spec, a, b) in &cases {
            let (x, y) = (run(spec, a), run(spec, b));
            assert_eq!(
                (x.correct, y.correct),
                (Some(false), Some(false)),
                "{a} / {b}"
            );
            assert_eq!(
                classify(spec, scored(&x, a), scored(&y, b)),
                DivergenceKind::Answer,
                "{a} / {b}"
            );
        }
    }

    #[test]
    fn the_same_failure_rendered_differently_is_format() {
        // Seen on the committed example: the code line echoed back, with and without a fence.
        assert_eq!(
            classify(
                &output(),
                wrong(Some("print([x * 2 for x in range(5) if x % 2 == 0])")),
                wrong(Some(
                    "```python\nprint([x * 2 for x in range(5) if x % 2 == 0])"
                ))
            ),
            DivergenceKind::Format
        );
        // The same wrong item in two wordings (runs/example-smollm2-kv-demo,
        // gen.state_tracking.0003): one answer, "key", however the sentence joins it.
        let exact = ScorerSpec::Exact {
            expected: "feather".into(),
            aliases: Vec::new(),
            distractors: Vec::new(),
            closed: false,
        };
        let (a, b) = (
            "The item in box 5 is the key.",
            "The item that is in box 5 is the key.",
        );
        let (x, y) = (run(&exact, a), run(&exact, b));
        assert_ne!(x.extracted, y.extracted);
        assert_eq!(
            classify(&exact, scored(&x, a), scored(&y, b)),
            DivergenceKind::Format
        );
        let other_item = "The item in box 5 is the ring.";
        let z = run(&exact, other_item);
        assert_eq!(
            classify(&exact, scored(&x, a), scored(&z, other_item)),
            DivergenceKind::Answer
        );
        // The code line echoed with the output after it, against the output alone.
        assert_eq!(
            classify(
                &output(),
                wrong(Some(
                    "console.log([10, 9, 1].sort().join(\",\")); // Output: 10, 9, 1"
                )),
                wrong(Some("[10, 9, 1]"))
            ),
            DivergenceKind::Format
        );
    }

    #[test]
    fn nothing_read_on_either_side_is_no_answer() {
        assert_eq!(
            classify(&numeric(), wrong(None), wrong(Some("  "))),
            DivergenceKind::NoAnswer
        );
        // runs/example-smollm2-kv-demo, gen.json_extraction.0000: two Python replies (no JSON
        // answer: code is not JSON), and a cut-off echo against a cut-off loop (gen.programs.0000).
        let (a, b) = (
            "```python\nimport json\n\ndef calculate_total_items(order_data):\n    return \
             json.dumps({\"city\": \"Bergen\", \"items\": order_data[\"items\"]})\n```",
            "```python\nimport json\n\ndef get_json_from_json(json_data):\n    json_data = \
             json_data.format({\"city\": \"Bergen\", \"items\": [\n        {\"qty\": 9},",
        );
        let (x, y) = (run(&json(), a), run(&json(), b));
        assert_eq!(
            (x.extracted.as_deref(), y.extracted.as_deref()),
            (None, None)
        );
        assert_eq!(
            classify(&json(), scored(&x, a), scored(&y, b)),
            DivergenceKind::NoAnswer
        );
        // One side's wrong answer against the other's none: a different answer.
        assert_eq!(
            classify(&numeric(), wrong(Some("5")), wrong(None)),
            DivergenceKind::Answer
        );
    }

    #[test]
    fn failing_the_same_text_checks_with_other_words_is_an_answer() {
        let spec = trap("forbid = [\"moon\"]\nforbid_letters = \"e\"\nmin_words = 5");
        let (a, b) = (
            "Awe at the moon, a bright disc of light up in a dark sky tonight",
            "The moon is a bright disc of light up in a dark sky tonight",
        );
        let (x, y) = (run(&spec, a), run(&spec, b));
        assert_ne!(x.evidence, y.evidence, "the particulars differ");
        assert_eq!(
            classify(&spec, scored(&x, a), scored(&y, b)),
            DivergenceKind::Answer
        );
        let shouted = "THE MOON is a bright disc of light up in a dark sky tonight!";
        let w = run(&spec, shouted);
        assert_eq!(
            classify(&spec, scored(&y, b), scored(&w, shouted)),
            DivergenceKind::Format,
            "the same sentence, rendered differently"
        );
        let short = "Too short here";
        let z = run(&spec, short);
        assert_eq!(
            classify(&spec, scored(&x, a), scored(&z, short)),
            DivergenceKind::Answer,
            "different checks failed"
        );
    }

    #[test]
    fn a_reworded_evidence_message_does_not_change_the_kind() {
        // The trap's answer check quotes the sentence it read, and this one holds "; ": read
        // back from the evidence text, that sentence looked like a list of further checks.
        let spec = trap("answer = \"4\"\nforbid = [\"moon\"]");
        let (a, b) = ("The moon; it shows 5.", "The moon shows 6.");
        let (x, mut y) = (run(&spec, a), run(&spec, b));
        assert_eq!((x.correct, y.correct), (Some(false), Some(false)));
        assert_ne!(x.extracted, y.extracted);
        assert_eq!(
            classify(&spec, scored(&x, a), scored(&y, b)),
            DivergenceKind::Answer
        );
        y.evidence = y
            .evidence
            .replace("failed:", "did not pass:")
            .replace("; ", " and ");
        assert_eq!(
            classify(&spec, scored(&x, a), scored(&y, b)),
            DivergenceKind::Answer
        );
    }

    #[test]
    fn answers_are_kept_as_written_beside_their_normalised_key() {
        let spec = ScorerSpec::Clarify { require: vec![] };
        let answer = "The bank is about 2.5 kilometers away.";
        let s = run(&spec, answer);
        assert_eq!(
            s.extracted.as_deref(),
            Some("the bank is about 2 5 kilometers away")
        );
        assert_eq!(s.as_written.as_deref(), Some(answer));
        let s = run(&numeric(), "It is **4.0** apples");
        assert_eq!(
            (s.extracted.as_deref(), s.as_written.as_deref()),
            (Some("4"), Some("4.0"))
        );
    }

    #[test]
    fn failing_the_checks_where_the_other_passes_is_a_flip() {
        let passed = Side {
            correct: None,
            ..wrong(Some("cold rain on the leaves"))
        };
        assert_eq!(
            classify(
                &ScorerSpec::Open(TextChecks::default()),
                wrong(Some("one line")),
                passed
            ),
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
            classify(
                &ScorerSpec::Open(TextChecks::default()),
                open("a poem"),
                open("a song")
            ),
            DivergenceKind::Answer
        );
    }
}
