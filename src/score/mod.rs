//! Deterministic scorers: pure functions from (scorer spec, answer text) to a score with evidence.

pub(crate) mod channels;
mod checks;
mod choice;
mod clarify;
mod committed;
mod cut_off;
mod detail;
mod exact;
mod hedge;
pub(crate) mod js;
mod json;
mod language;
mod markers;
mod numeric;
mod numtoken;
mod open;
mod output;
mod reading;
#[cfg(test)]
mod reasoning_styles;
mod sanity;
mod text;
pub mod tool_call;
mod trap;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::text::clip;

pub use checks::TextChecks;
pub use choice::Options;
use cut_off::cut_off;
pub use detail::{Detail, JsonFound, JsonPlace, Tests};
pub use json::JsonType;
pub use text::normalize;
pub use tool_call::{ExpectedCall, ToolCallFound};

/// How a prompt's answer is scored, as written in the catalogue (`score = { type = "...", ... }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScorerSpec {
    /// The final number in free text must equal `expected`: an integer, decimal, fraction
    /// (`1/6`), percentage (`16%`) or time of day (`10:54 AM`); units after it are ignored.
    /// `tolerance` is an absolute tolerance. Precedence rules: `numeric.rs`.
    Numeric {
        expected: String,
        #[serde(default)]
        tolerance: Option<f64>,
        /// The noun the question counts ("vowel" for "How many vowels…?"): a number written
        /// right before it ("1 vowel and 3 consonants" reads 1) wins over the concluding clause.
        #[serde(default)]
        counts: Option<String>,
    },
    /// The answer must contain `expected` (or one of `aliases`) as whole words after
    /// normalisation (case, whitespace, punctuation, quotes, markdown, accents), in a mention
    /// that is not negated or corrected (rules: `exact.rs`). No one-letter phrases: those are
    /// `choice` labels.
    Exact {
        expected: String,
        #[serde(default)]
        aliases: Vec<String>,
        /// Wrong answers a confused model tends to credit alongside the right one
        /// ("Michelangelo" for the Mona Lisa): an answer that also credits one, in a mention that
        /// is not negated or corrected, names two answers and is wrong.
        #[serde(default)]
        distractors: Vec<String>,
        /// `expected` and the `distractors` are every answer there is (a day of the week, an item
        /// in the boxes, a person of the puzzle): a wrong answer is read as the one candidate it
        /// names, and one that names none gives no answer.
        #[serde(default, skip_serializing_if = "is_false")]
        closed: bool,
    },
    /// The answer must pick the option labelled `expected`, and only it:
    /// `options = { A = "Paris", B = ["London", "..."] }` or `options = ["yes", "no"]`.
    Choice { expected: String, options: Options },
    /// The predicted output of a code snippet must equal `expected` exactly (after trimming,
    /// code fences and "Output:" prefixes).
    Output { expected: String },
    /// The answer must hold valid JSON; `required` names keys and their types, `values` exact values.
    Json {
        #[serde(default)]
        required: BTreeMap<String, JsonType>,
        #[serde(default)]
        values: BTreeMap<String, serde_json::Value>,
    },
    /// Instruction following, pass or fail: `answer`, `require`, `forbid`, `forbid_letters`,
    /// `min_words`, `max_words`, `max_sentences`, `language` (see [`TextChecks`]).
    Trap(TextChecks),
    /// Open-ended text: sanity plus the same checks (no `answer`). Passing leaves the verdict to
    /// the similarity between endpoints (`correct: None`); failing is wrong.
    Open(TextChecks),
    /// Ambiguous request: the answer must ask for clarification or state its assumption, and
    /// mention every `require` term.
    Clarify {
        #[serde(default)]
        require: Vec<String>,
    },
    /// The JavaScript function `function` extracted from the answer must pass every test of
    /// `suite` (a file under `scorers/`), run in a sandboxed worker process.
    Js { suite: String, function: String },
    /// The reply must make exactly the `calls` (none: answer in text, no call), each to a
    /// defined function with well-formed arguments valid against its schema, equal to the
    /// expected ones (normalised, keys in any order), with `finish_reason` `tool_calls`
    /// (`tool_call.rs`). The answer it reads is the reply rendered by `tool_call::Reply::text`.
    ToolCall {
        #[serde(default)]
        calls: Vec<ExpectedCall>,
        /// The offered functions' `parameters` schemas by name: not written in the catalogue
        /// but taken from the prompt's `tool_use` when it is loaded ([`ScorerSpec::with_tools`]).
        #[serde(skip)]
        schemas: BTreeMap<String, serde_json::Value>,
    },
}

impl ScorerSpec {
    /// Checks the spec itself (for example that a numeric `expected` parses).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            ScorerSpec::Numeric {
                expected,
                tolerance,
                ..
            } => {
                numeric::parse_expected(expected)?;
                if tolerance.is_some_and(|t| !t.is_finite() || t < 0.0) {
                    return Err("tolerance must be a finite, non-negative number".into());
                }
                Ok(())
            }
            ScorerSpec::Exact {
                expected,
                aliases,
                distractors,
                closed,
            } => {
                if *closed && distractors.is_empty() {
                    return Err("closed = true needs the other answers as distractors".into());
                }
                exact::validate(expected, aliases)
                    .and_then(|()| exact::validate(expected, distractors))
            }
            ScorerSpec::Choice { expected, options } => choice::validate(expected, options),
            ScorerSpec::Output { expected } => output::validate(expected),
            ScorerSpec::Json { required, values } => {
                for (key, value) in values {
                    if let Some(ty) = required.get(key) {
                        if !ty.matches(value) {
                            return Err(format!("values.{key} is not of the required type {ty:?}"));
                        }
                    }
                }
                Ok(())
            }
            ScorerSpec::Trap(checks) => trap::validate(checks),
            ScorerSpec::Open(checks) => open::validate(checks),
            ScorerSpec::Clarify { require } => clarify::validate(require),
            ScorerSpec::Js { suite, function } => js::validate_spec(suite, function),
            ScorerSpec::ToolCall { calls, schemas } => tool_call::validate(calls, schemas),
        }
    }

    /// The spec scored with these functions' `parameters` schemas (name, schema): a
    /// `tool_call` spec learns them; any other is unchanged.
    pub fn with_tools<'a>(
        mut self,
        functions: impl IntoIterator<Item = (&'a str, &'a serde_json::Value)>,
    ) -> Self {
        if let ScorerSpec::ToolCall { schemas, .. } = &mut self {
            schemas.extend(
                functions
                    .into_iter()
                    .map(|(n, s)| (n.to_string(), s.clone())),
            );
        }
        self
    }

    /// The scorer family name used in reports.
    pub fn kind(&self) -> &'static str {
        match self {
            ScorerSpec::Numeric { .. } => "numeric",
            ScorerSpec::Exact { .. } => "exact",
            ScorerSpec::Choice { .. } => "choice",
            ScorerSpec::Output { .. } => "output",
            ScorerSpec::Json { .. } => "json",
            ScorerSpec::Trap(_) => "trap",
            ScorerSpec::Open(_) => "open",
            ScorerSpec::Clarify { .. } => "clarify",
            ScorerSpec::Js { .. } => "js",
            ScorerSpec::ToolCall { .. } => "tool_call",
        }
    }

    /// Whether a passing answer has no ground truth (`correct: None`) and endpoints are compared
    /// by text similarity.
    pub fn open_ended(&self) -> bool {
        matches!(self, ScorerSpec::Open(_))
    }

    /// The one answer that scores correct, in full, where there is one: the expected value or
    /// option, the exact output, or the JSON values (serialized); `None` for the scorers that
    /// accept a kind of answer rather than a value. What a constant answer has to match.
    pub fn expected_answer(&self) -> Option<String> {
        match self {
            ScorerSpec::Numeric { expected, .. }
            | ScorerSpec::Exact { expected, .. }
            | ScorerSpec::Choice { expected, .. }
            | ScorerSpec::Output { expected } => Some(expected.clone()),
            ScorerSpec::Json { values, .. } if !values.is_empty() => {
                serde_json::to_string(values).ok()
            }
            _ => None,
        }
    }

    /// A short human description of what a correct answer is.
    pub fn expected_summary(&self) -> String {
        match self {
            ScorerSpec::Numeric { expected, .. } => expected.clone(),
            ScorerSpec::Exact { expected, .. } => expected.clone(),
            ScorerSpec::Choice { expected, options } => match options.0.get(expected) {
                Some(names) if !names.is_empty() => format!("{expected} ({})", names[0]),
                _ => expected.clone(),
            },
            ScorerSpec::Output { expected } => format!("output {}", clip(expected, 40)),
            ScorerSpec::Json { required, values } => json_summary(required, values),
            ScorerSpec::Trap(checks) => checks.summary(),
            ScorerSpec::Open(checks) if checks.summary().is_empty() => "open-ended".into(),
            ScorerSpec::Open(checks) => format!("open-ended; {}", checks.summary()),
            ScorerSpec::Clarify { .. } => "asks for clarification or states an assumption".into(),
            ScorerSpec::Js { function, .. } => format!("{function} passes all tests"),
            ScorerSpec::ToolCall { calls, .. } if calls.is_empty() => {
                "no call; answers in text".into()
            }
            ScorerSpec::ToolCall { calls, .. } => {
                let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                format!("calls {}", names.join(", "))
            }
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What a JSON answer must be: the expected values as JSON (`{"city":"Bergen","items":12}`),
/// then the required keys no value is given for; or "valid JSON".
fn json_summary(
    required: &BTreeMap<String, JsonType>,
    values: &BTreeMap<String, serde_json::Value>,
) -> String {
    let keys: Vec<&str> = required
        .keys()
        .filter(|k| !values.contains_key(*k))
        .map(String::as_str)
        .collect();
    let values = (!values.is_empty())
        .then(|| serde_json::to_string(values).ok())
        .flatten();
    match (values, keys.is_empty()) {
        (None, true) => "valid JSON".into(),
        (None, false) => format!("JSON with {}", keys.join(", ")),
        (Some(v), true) => format!("JSON {v}"),
        (Some(v), false) => format!("JSON {v} with {}", keys.join(", ")),
    }
}

/// The outcome of scoring one answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    /// true/false against ground truth; None when the prompt has none (open-ended text).
    pub correct: Option<bool>,
    /// The answer as the scorer understood it, normalised; two endpoints agree when these are
    /// equal. A key the scorer composes (a JS pass/fail pattern) when it reads no text.
    pub extracted: Option<String>,
    /// The same answer as the model wrote it (before normalisation), when the scorer read it
    /// out of the text.
    pub as_written: Option<String>,
    /// What the report shows: how the answer was extracted and which check failed.
    pub evidence: String,
    /// What the evidence says, as data.
    pub detail: Detail,
    /// Why this score rests on a weak read, when it does: a completion cut off at the token
    /// limit, a number taken from where the text ends with no answer phrase, or one read there
    /// but not stated as the answer. The report lists the flips that rest on one so a reader
    /// checks them first. Any scorer may set it with [`Score::weakly`]; `cut_off` adds the cut.
    /// For the JS scorer (`js/`, not yet wired): code that did not run (no function extracted, a
    /// candidate that never executed) is `score.weakly("code did not run: …")`, and nothing else
    /// needs to change: `per_prompt` carries it to `AnswerResult::weak` and `weak_reads`.
    pub weak: Option<String>,
    /// Where in the answer the scorer read its answer, for the cut-off rule (`cut_off.rs`):
    /// None when it read none, or judged the text as a whole (text checks, code, tool calls).
    pub at: Option<ReadAt>,
}

/// Where an answer was read in the text: its byte range and how the text marks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadAt {
    pub start: usize,
    pub end: usize,
    /// The text marks it as the answer: `\boxed{}`, an answer phrase, `####`, bold, an "Output:"
    /// prefix; not merely where the text ends.
    pub marked: bool,
    /// It closes itself (a JSON value that parsed whole): nothing need follow it to show that it
    /// ended before the cut.
    pub closed: bool,
}

impl ReadAt {
    /// A read of `start..end` that the text marks as the answer (`marked`) or not.
    pub fn new(start: usize, end: usize, marked: bool) -> Self {
        ReadAt {
            start,
            end,
            marked,
            closed: false,
        }
    }
}

impl Score {
    /// A score that read no answer out of the text (`extracted` and `as_written` are None).
    fn new(correct: Option<bool>, detail: Detail, evidence: impl Into<String>) -> Self {
        Score {
            correct,
            extracted: None,
            as_written: None,
            evidence: evidence.into(),
            detail,
            weak: None,
            at: None,
        }
    }

    /// The same score, read at `at` in the answer.
    fn at(mut self, at: ReadAt) -> Self {
        self.at = Some(at);
        self
    }

    /// The same score marked as resting on a weak read, for `reason` (joined after any reason
    /// it already has).
    pub fn weakly(mut self, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        self.weak = Some(match self.weak.take() {
            Some(before) => format!("{reason}; {before}"),
            None => reason,
        });
        self
    }

    /// The answer read out of the text: `normalised` is what endpoints are compared on,
    /// `as_written` the same answer as the model wrote it.
    fn read(mut self, normalised: String, as_written: &str) -> Self {
        self.extracted = Some(normalised);
        self.as_written = Some(as_written.to_string());
        self
    }

    /// The whole answer as the value (free text scored by checks, or a phrase not found):
    /// normalised as `text::normalize` does; nothing when that leaves nothing.
    fn read_whole(self, answer: &str) -> Self {
        let normalised = text::normalize(answer);
        if normalised.is_empty() {
            self
        } else {
            self.read(normalised, answer.trim())
        }
    }

    /// A comparison key the scorer composed rather than read (a JS pass/fail pattern, whether a
    /// clarification asked or hedged): nothing of it is as written.
    fn keyed(mut self, key: impl Into<String>) -> Self {
        self.extracted = Some(key.into());
        self
    }
}

/// What scorers need beyond the answer: where test suites live and how to run sandboxed code.
#[derive(Debug, Clone)]
pub struct ScoreContext {
    /// The `scorers/` folder (test suites, reference data), beside the catalogue folder.
    pub scorers_dir: PathBuf,
    /// The executable re-run as the sandboxed JS worker (`coherence __js-worker`).
    pub js_worker: PathBuf,
}

impl ScoreContext {
    /// The context for a catalogue folder: `scorers/` is its sibling; the worker is the
    /// `coherence` binary (see `js::default_worker`). For the built-in catalogue
    /// (`catalogue::embedded::BUILT_IN_DIR`) the sibling is the built-in `scorers/`, whose suites
    /// are read from the binary.
    pub fn for_catalogue(catalogue_dir: &Path) -> Self {
        let parent = catalogue_dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        ScoreContext {
            scorers_dir: parent.join("scorers"),
            js_worker: js::default_worker(),
        }
    }
}

/// Score one answer (the model's content with any reasoning removed) against a spec, from a
/// completion that ended on its own. See [`score_completion`].
pub fn score(spec: &ScorerSpec, answer: &str, ctx: &ScoreContext) -> Score {
    score_completion(spec, answer, false, ctx)
}

/// Score one answer against a spec; `cut`: its completion was cut off at the token budget, so
/// the answer counts only when it was committed before the cut (`cut_off.rs`). The answer is
/// read through [`channels::answer_of`] first: reasoning markup or control tokens left in it (a
/// record journalled before they were split off) are never part of what is scored.
pub fn score_completion(spec: &ScorerSpec, answer: &str, cut: bool, ctx: &ScoreContext) -> Score {
    let answer = &*channels::answer_of(answer);
    let scored = score_text(spec, answer, ctx);
    if cut {
        cut_off(answer, scored, |earlier| score_text(spec, earlier, ctx))
    } else {
        scored
    }
}

fn score_text(spec: &ScorerSpec, answer: &str, ctx: &ScoreContext) -> Score {
    match spec {
        ScorerSpec::Numeric {
            expected,
            tolerance,
            counts,
        } => numeric::score(expected, *tolerance, counts.as_deref(), answer),
        ScorerSpec::Exact {
            expected,
            aliases,
            distractors,
            closed,
        } => exact::score(
            &exact::Phrases {
                expected,
                aliases,
                distractors,
                closed: *closed,
            },
            answer,
        ),
        ScorerSpec::Choice { expected, options } => choice::score(expected, options, answer),
        ScorerSpec::Output { expected } => output::score(expected, answer),
        ScorerSpec::Json { required, values } => json::score(required, values, answer),
        ScorerSpec::Trap(checks) => trap::score(checks, answer),
        ScorerSpec::Open(checks) => open::score(checks, answer),
        ScorerSpec::Clarify { require } => clarify::score(require, answer),
        ScorerSpec::Js { suite, function } => js::score(suite, function, answer, ctx),
        ScorerSpec::ToolCall { calls, schemas } => tool_call::score(calls, schemas, answer),
    }
}

/// Helpers shared by the scorers' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Score, ScorerSpec, TextChecks};

    /// `numeric` with no tolerance and no counted noun.
    pub fn numeric(expected: &str) -> ScorerSpec {
        ScorerSpec::Numeric {
            expected: expected.into(),
            tolerance: None,
            counts: None,
        }
    }

    /// `exact` with these aliases and no distractors.
    pub fn exact(expected: &str, aliases: &[&str]) -> ScorerSpec {
        ScorerSpec::Exact {
            expected: expected.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            distractors: Vec::new(),
            closed: false,
        }
    }

    pub fn output(expected: &str) -> ScorerSpec {
        ScorerSpec::Output {
            expected: expected.into(),
        }
    }

    /// Every `accept` answer must score correct and every `reject` answer wrong.
    pub fn assert_scores(accept: &[&str], reject: &[&str], score: impl Fn(&str) -> Score) {
        for a in accept {
            let s = score(a);
            assert_eq!(s.correct, Some(true), "should accept {a:?}: {s:?}");
        }
        for a in reject {
            let s = score(a);
            assert_eq!(s.correct, Some(false), "should reject {a:?}: {s:?}");
        }
    }

    /// `s` is no answer (wrong, nothing read, `Detail::NotFound`) and its evidence opens with
    /// `opening`.
    pub fn assert_no_answer(s: &Score, opening: &str) {
        assert_eq!(
            (s.correct, s.extracted.as_deref()),
            (Some(false), None),
            "{s:?}"
        );
        assert_eq!(s.detail, super::Detail::NotFound);
        assert!(s.evidence.starts_with(opening), "{}", s.evidence);
    }

    /// Text checks written as in the catalogue (`forbid = ["x"]`, one field per line).
    pub fn text_checks(toml_src: &str) -> TextChecks {
        toml::from_str(toml_src).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml_src: &str) -> Result<ScorerSpec, String> {
        #[derive(Deserialize)]
        struct W {
            score: ScorerSpec,
        }
        toml::from_str::<W>(&format!("score = {toml_src}"))
            .map(|w| w.score)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_type_parses_from_the_catalogue_syntax() {
        let cases = [
            (
                r#"{ type = "numeric", expected = "2.4", tolerance = 0.01 }"#,
                "numeric",
            ),
            (
                r#"{ type = "exact", expected = "Canberra", aliases = ["canberra act"] }"#,
                "exact",
            ),
            (
                r#"{ type = "choice", expected = "B", options = { A = "London", B = "Paris" } }"#,
                "choice",
            ),
            (
                r#"{ type = "choice", expected = "yes", options = ["yes", "no"] }"#,
                "choice",
            ),
            (r#"{ type = "output", expected = "[0, 4]" }"#, "output"),
            (r#"{ type = "json", required = { a = "integer" } }"#, "json"),
            (
                r#"{ type = "trap", answer = "4", forbid = ["banana"] }"#,
                "trap",
            ),
            (
                r#"{ type = "open", language = "fr", require = ["chat"], max_words = 40 }"#,
                "open",
            ),
            (r#"{ type = "clarify", require = ["bank"] }"#, "clarify"),
            (r#"{ type = "clarify" }"#, "clarify"),
            (
                r#"{ type = "js", suite = "code_generation/x.toml", function = "hasCloseElements" }"#,
                "js",
            ),
        ];
        for (src, kind) in cases {
            let s = spec(src).unwrap_or_else(|e| panic!("{src}: {e}"));
            assert_eq!(s.kind(), kind);
            assert!(s.validate().is_ok(), "{src}: {:?}", s.validate());
            assert!(!s.expected_summary().is_empty());
        }
    }

    #[test]
    fn unknown_fields_and_types_are_refused() {
        for src in [
            r#"{ type = "trap", forbidden = ["x"] }"#,
            r#"{ type = "open", answer_is = "x" }"#,
            r#"{ type = "numeric", expected = "3", tol = 1 }"#,
            r#"{ type = "clarify", topics = ["x"] }"#,
            r#"{ type = "js", suite = "x.toml", function = "f", tests = ["f()"] }"#,
            r#"{ type = "regex", expected = "x" }"#,
        ] {
            assert!(spec(src).is_err(), "{src} should not parse");
        }
    }

    #[test]
    fn invalid_specs_are_refused() {
        for src in [
            r#"{ type = "exact", expected = "A" }"#,
            r#"{ type = "choice", expected = "C", options = ["A", "B"] }"#,
            r#"{ type = "output", expected = " " }"#,
            r#"{ type = "open", answer = "4" }"#,
            r#"{ type = "trap", answer = "lots" }"#,
            r#"{ type = "numeric", expected = "3", tolerance = -1.0 }"#,
            r#"{ type = "numeric", expected = "3", tolerance = inf }"#,
            r#"{ type = "numeric", expected = "3", tolerance = nan }"#,
            r#"{ type = "js", suite = "../outside.toml", function = "f" }"#,
        ] {
            let s = spec(src).unwrap();
            assert!(s.validate().is_err(), "{src} should be invalid");
        }
    }

    #[test]
    fn only_open_prompts_are_open_ended() {
        assert!(spec(r#"{ type = "open" }"#).unwrap().open_ended());
        assert!(!spec(r#"{ type = "trap" }"#).unwrap().open_ended());
    }
}
