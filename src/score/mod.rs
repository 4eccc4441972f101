//! Deterministic scorers: pure functions from (scorer spec, answer text) to a score with evidence.

mod exact;
pub(crate) mod js;
mod json;
mod numeric;
mod text;

pub use text::clip;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use json::JsonType;
pub use numeric::{extract_number, Extracted};

/// How a prompt's answer is scored, as written in the catalogue (`score = { type = "...", ... }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScorerSpec {
    /// The final number in free text must equal `expected` (an integer, decimal, fraction such as
    /// `1/6`, or a time of day such as `10:54 AM`). `tolerance` is an absolute tolerance.
    Numeric {
        expected: String,
        #[serde(default)]
        tolerance: Option<f64>,
    },
    /// The answer must contain `expected` (or one of `aliases`) after normalisation
    /// (case, whitespace, punctuation, quotes, markdown).
    Exact {
        expected: String,
        #[serde(default)]
        aliases: Vec<String>,
    },
    /// The answer must hold valid JSON; `required` names keys and their types, `values` exact values.
    Json {
        #[serde(default)]
        required: BTreeMap<String, JsonType>,
        #[serde(default)]
        values: BTreeMap<String, serde_json::Value>,
    },
    /// The JavaScript function `function` extracted from the answer must pass every test of
    /// `suite` (a file under `scorers/`), run in a sandboxed worker process.
    Js { suite: String, function: String },
}

impl ScorerSpec {
    /// Checks the spec itself (for example that a numeric `expected` parses).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            ScorerSpec::Numeric {
                expected,
                tolerance,
            } => {
                numeric::parse_expected(expected)?;
                if tolerance.is_some_and(|t| t.is_nan() || t < 0.0) {
                    return Err("tolerance must be a non-negative number".into());
                }
                Ok(())
            }
            ScorerSpec::Exact { expected, aliases } => {
                if text::normalize(expected).is_empty()
                    || aliases.iter().any(|a| text::normalize(a).is_empty())
                {
                    return Err("expected and aliases must contain letters or digits".into());
                }
                Ok(())
            }
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
            ScorerSpec::Js { suite, function } => js::validate_spec(suite, function),
        }
    }

    /// The scorer family name used in reports.
    pub fn kind(&self) -> &'static str {
        match self {
            ScorerSpec::Numeric { .. } => "numeric",
            ScorerSpec::Exact { .. } => "exact",
            ScorerSpec::Json { .. } => "json",
            ScorerSpec::Js { .. } => "js",
        }
    }

    /// A short human description of what a correct answer is.
    pub fn expected_summary(&self) -> String {
        match self {
            ScorerSpec::Numeric { expected, .. } => expected.clone(),
            ScorerSpec::Exact { expected, .. } => expected.clone(),
            ScorerSpec::Json { required, .. } if required.is_empty() => "valid JSON".into(),
            ScorerSpec::Json { required, .. } => {
                let keys: Vec<&str> = required.keys().map(String::as_str).collect();
                format!("JSON with {}", keys.join(", "))
            }
            ScorerSpec::Js { function, .. } => format!("{function} passes all tests"),
        }
    }
}

/// The outcome of scoring one answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// true/false against ground truth; None when the prompt has none (open-ended text).
    pub correct: Option<bool>,
    /// The answer as the scorer understood it; two endpoints agree when these are equal.
    pub extracted: Option<String>,
    /// What the report shows: how the answer was extracted and which check failed.
    pub evidence: String,
}

impl Score {
    fn new(correct: Option<bool>, extracted: Option<String>, evidence: impl Into<String>) -> Self {
        Score {
            correct,
            extracted,
            evidence: evidence.into(),
        }
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
    /// The context for a catalogue folder: `scorers/` is its sibling; the worker is this
    /// executable unless `COHERENCE_JS_WORKER` names another (tests point it at the binary).
    pub fn for_catalogue(catalogue_dir: &Path) -> Self {
        let parent = catalogue_dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let js_worker = std::env::var_os("COHERENCE_JS_WORKER")
            .map(PathBuf::from)
            .or_else(|| std::env::current_exe().ok())
            .unwrap_or_else(|| PathBuf::from("coherence"));
        ScoreContext {
            scorers_dir: parent.join("scorers"),
            js_worker,
        }
    }
}

/// Score one answer (the model's content with any reasoning removed) against a spec.
pub fn score(spec: &ScorerSpec, answer: &str, ctx: &ScoreContext) -> Score {
    match spec {
        ScorerSpec::Numeric {
            expected,
            tolerance,
        } => numeric::score(expected, *tolerance, answer),
        ScorerSpec::Exact { expected, aliases } => exact::score(expected, aliases, answer),
        ScorerSpec::Json { required, values } => json::score(required, values, answer),
        ScorerSpec::Js { suite, function } => js::score(suite, function, answer, ctx),
    }
}
