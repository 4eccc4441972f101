//! The parts of `results.json` below the whole run (`results.rs`): each prompt's result and
//! answers, and the per-endpoint and per-pair figures rolled up from them. The analysis modules
//! build these; `results.rs` assembles them.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::determinism::Determinism;
use super::divergence::Divergence;
use super::kind::DivergenceKind;
use super::noise::Difference;
use super::stats::{McNemarCounts, Paired, Proportion};
use super::verdict::Verdict;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSampling {
    pub temperature: f64,
    pub stream: bool,
    /// The budget of a prompt that sets none of its own.
    pub max_tokens: u32,
    /// `--max-tokens` as the run was started: it overrides every prompt's own budget.
    #[serde(default)]
    pub max_tokens_override: Option<u32>,
    /// Answers (one per prompt and endpoint) read at a budget other than the run's rule gives
    /// their prompt, counted per budget: a re-run at another `--max-tokens`, a reasoning retry.
    #[serde(default)]
    pub other_budgets: BTreeMap<u32, usize>,
    pub repeats: u32,
    pub params: Map<String, Value>,
    /// Whether decode logprobs were requested and why (the probe's finding, or the flag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<String>,
}

impl RunSampling {
    /// The budget sentence of the report header: the rule the run was started with and, when
    /// answers were read at other budgets too, how many at each.
    pub fn budget_statement(&self) -> String {
        let rule = match self.max_tokens_override {
            Some(n) => format!("max_tokens {n} for every prompt (--max-tokens)"),
            None => format!(
                "max_tokens {} (unless a prompt sets its own)",
                self.max_tokens
            ),
        };
        if self.other_budgets.is_empty() {
            return rule;
        }
        let used: Vec<String> = self
            .other_budgets
            .iter()
            .map(|(b, n)| format!("{n} answer{} at {b}", if *n == 1 { "" } else { "s" }))
            .collect();
        format!("{rule}; read at another budget: {}", used.join(", "))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndpointSummary {
    pub name: String,
    pub base_url: String,
    /// The model requested.
    pub model: Option<String>,
    /// Ids listed by `GET /models` when the run started.
    pub listed_models: Vec<String>,
    pub max_model_len: Option<u64>,
    /// Distinct `model` values the responses reported.
    pub served_models: Vec<String>,
    /// Distinct `system_fingerprint` values the responses reported.
    pub system_fingerprints: Vec<String>,
    /// Distinct `Server` headers.
    pub servers: Vec<String>,
    pub correct: usize,
    pub wrong: usize,
    /// Answered, with no ground truth to check against.
    pub ungraded: usize,
    pub failed: usize,
    /// Correct among graded prompts, with a Wilson 95% interval.
    pub accuracy: Proportion,
    /// Prompts per determinism class (with repeats).
    pub determinism: BTreeMap<String, usize>,
    /// Mean completion tokens per usable answer.
    pub mean_completion_tokens: Option<f64>,
    /// Usable answers (every repeat counted), and of those the ones cut off at their token
    /// budget (`finish_reason: length`): read only where committed before the cut.
    #[serde(default)]
    pub answers: usize,
    #[serde(default)]
    pub cut_off: usize,
    /// Prompts re-run automatically at a larger budget because the reasoning used the whole budget.
    pub reasoning_retries: usize,
    /// How this endpoint's code answers (`js` prompts) met their tests; absent without any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_answers: Option<CodeAnswers>,
}

/// An endpoint's code answers: how many were scored, and of those how many ran their tests,
/// never got to them (did not parse, threw while loading) or held no code defining the
/// function (no answer). A scorer error is none of the three.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeAnswers {
    pub scored: usize,
    pub ran_tests: usize,
    pub did_not_load: usize,
    pub no_code_found: usize,
}

impl CodeAnswers {
    pub fn add(&mut self, run: Option<CodeRun>) {
        self.scored += 1;
        match run {
            Some(CodeRun::RanTests) => self.ran_tests += 1,
            Some(CodeRun::DidNotLoad) => self.did_not_load += 1,
            Some(CodeRun::NoCode) => self.no_code_found += 1,
            None => {}
        }
    }
}

/// How one code answer (a `js` prompt) met its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeRun {
    /// Its code was located and ran its tests, passing or failing them.
    RanTests,
    /// Its code was located but never got to its tests: it did not parse, or threw while loading.
    DidNotLoad,
    /// No code defining the function was found: no answer.
    NoCode,
}

/// Paired right/wrong counts over prompts both endpoints answered with ground truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedCounts {
    /// None for the whole catalogue.
    pub category: Option<String>,
    #[serde(flatten)]
    pub counts: McNemarCounts,
    /// In words, e.g. "counting_traps: full right and spark wrong on 10 of 13, the reverse on 0; p = 0.002".
    pub statement: String,
}

impl PairedCounts {
    /// The counts of `category` (None: every prompt) with their exact McNemar p; no statement.
    pub fn of(category: Option<&str>, paired: Paired) -> PairedCounts {
        PairedCounts {
            category: category.map(str::to_string),
            counts: McNemarCounts::of(paired),
            statement: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairStatistics {
    pub reference: String,
    pub other: String,
    pub overall: PairedCounts,
    pub categories: Vec<PairedCounts>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    /// The `--fail-on` expression evaluated.
    pub expression: String,
    /// Where the expression came from: a `--fail-on` flag, the run's manifest or the default
    /// (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<crate::gate::GateOrigin>,
    /// The conditions that held (empty: the gate passed).
    pub failed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PromptResult {
    pub id: String,
    pub category: String,
    pub question: String,
    pub expected: String,
    pub scorer: String,
    /// The most severe pair verdict (fail, diff, review, same).
    pub verdict: Verdict,
    pub pairs: Vec<PairResult>,
    /// Keyed by endpoint name.
    pub answers: BTreeMap<String, AnswerResult>,
}

impl PromptResult {
    /// Each pair whose two endpoints both left an answer text, with the two texts.
    pub fn pair_texts(&self) -> impl Iterator<Item = (&PairResult, &str, &str)> {
        self.pairs.iter().filter_map(|pair| {
            let a = self.answers.get(&pair.reference)?.answer.as_deref()?;
            let b = self.answers.get(&pair.other)?.answer.as_deref()?;
            Some((pair, a, b))
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairResult {
    pub reference: String,
    pub other: String,
    pub verdict: Verdict,
    pub reason: String,
    pub similarity: Option<f64>,
    /// For a `diff` verdict: a flip, a different answer, or the same failure in another format.
    #[serde(default)]
    pub kind: Option<DivergenceKind>,
    /// For a diff or review verdict whose modal answers differ: sampler noise, a deployment
    /// difference, or inconclusive (the reference's own repeats cannot rule the answer out).
    pub difference: Option<Difference>,
    /// Where the two representative completions first differ.
    pub first_divergence: Option<Divergence>,
    /// With `--logprobs`: the first differing token and whether it is a near-tie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_divergence: Option<TokenDivergence>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AnswerResult {
    pub extracted: Option<String>,
    /// The same answer as the model wrote it (`extracted` is normalised), when the scorer read it
    /// out of the text: what a reader is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_written: Option<String>,
    /// true/false against ground truth; null when the prompt has none.
    pub correct: Option<bool>,
    /// Why there is no usable answer.
    pub error: Option<String>,
    pub evidence: Option<String>,
    /// Why the score rests on a weak read (`Score::weak`): a cut-off completion, a number read
    /// with no answer phrase or not stated as the answer, code that did not run. Absent when it
    /// does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weak: Option<String>,
    /// The answer text (reasoning removed) of the representative repeat.
    pub answer: Option<String>,
    pub reasoning_chars: usize,
    pub finish_reason: Option<String>,
    /// The answer was read from a completion cut off at the budget (`finish_reason: length`).
    #[serde(default)]
    pub truncated: bool,
    /// `usage.prompt_tokens` of the representative repeat.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    pub max_tokens: Option<u32>,
    pub latency_ms: Option<f64>,
    pub completion_tokens: Option<u64>,
    /// Set when the answer came from an automatic re-run at a larger budget.
    pub note: Option<String>,
    /// Repeats with a usable answer, of those planned.
    pub repeats_answered: u32,
    pub repeats_planned: u32,
    /// Present when the prompt was repeated.
    pub determinism: Option<Determinism>,
    /// Every repeat's answer, in repeat order (present when the prompt was repeated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatAnswer>,
    /// For a code answer (a `js` prompt): whether its tests ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeRun>,
    /// A text quoted here (the answer, the scorer's reading, the evidence, a repeat's) is longer
    /// than `analysis::answers::quote::QUOTE_BYTES` and quoted clipped, with a marker; records.jsonl holds
    /// it whole. Absent when nothing is clipped.
    #[serde(default, skip_serializing_if = "is_false")]
    pub clipped: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One repeat's answer, with where it sat in what the endpoint was sent. A long run holds one per
/// record, so the strings repeats have in common (the same answer, a prompt id) are shared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatAnswer {
    pub repeat: u32,
    /// The answer as scored; None when the repeat failed.
    pub answer: Option<Arc<str>>,
    /// The same answer as the model wrote it, when the scorer read it out of the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_written: Option<Arc<str>>,
    pub correct: Option<bool>,
    pub truncated: bool,
    /// Its position among every request this endpoint was sent in the run (0 is the first).
    pub sent: usize,
    /// The prompt of the request sent to this endpoint just before it (None: the first).
    pub after: Option<Arc<str>>,
    /// This repeat's answer text when it differs from the text shown (the answer's `answer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// One endpoint's agreement with itself across repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    pub endpoint: String,
    /// Repeats per prompt in the run.
    pub repeats: u32,
    /// Prompts with at least two usable repeats.
    pub measured: usize,
    /// Of those, prompts whose repeats all gave the same answer.
    pub stable: usize,
    /// Prompts whose repeats gave different answers at temperature 0.
    pub unstable: usize,
    /// Of those, prompts whose answers split by prompt-cache state: every repeat sent right after
    /// the same prompt (back to back, the prompt cache warm) gave one answer, every repeat sent
    /// after another prompt another. Such instability may be the cache, not the model.
    #[serde(default)]
    pub cache_split: usize,
    /// Most of its later repeats were sent right after the previous repeat of the same prompt.
    #[serde(default)]
    pub back_to_back: bool,
}

/// How two endpoints' texts compare, per prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub reference: String,
    pub other: String,
    /// Both answered with exactly the same text.
    pub identical: usize,
    /// Verdict `same` or `format` (the same failure, rendered differently), but the texts differ.
    pub same_answer: usize,
    /// Verdict `diff` or `review`.
    pub diverged: usize,
    /// Verdict `fail`: a side has no usable answer.
    pub failed: usize,
}

/// Parity of one (reference, other) pair over the prompts both answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parity {
    pub reference: String,
    pub other: String,
    /// Prompts where both endpoints reported `usage.prompt_tokens`.
    pub prompt_tokens_compared: usize,
    /// Prompts whose `usage.prompt_tokens` differ: a different template or tokenizer.
    pub prompt_tokens_mismatches: usize,
    /// Up to ten of them, as `id (reference N, other M)`.
    pub prompt_tokens_examples: Vec<String>,
    /// Prompts where both answered and `finish_reason` differs.
    pub finish_reason_mismatches: usize,
    pub finish_reason_examples: Vec<String>,
    /// Mean of other − reference reasoning characters over prompts where either reasoned.
    pub mean_reasoning_chars_delta: Option<f64>,
}

/// The first token at which two completions part (`compare --logprobs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenDivergence {
    /// Index of the first differing generated token.
    pub index: usize,
    pub reference_token: String,
    pub other_token: String,
    /// Each side's token is in the other's top-k and both logprob gaps are under the threshold.
    pub near_tie: bool,
    /// On the reference, lp(its token) − lp(the other's token); None when not in its top-k.
    pub gap_reference: Option<f64>,
    /// On the other endpoint, lp(its token) − lp(the reference's token).
    pub gap_other: Option<f64>,
}

/// Near-tie and substantive first divergences.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NearTieCounts {
    pub near_tie: usize,
    pub substantive: usize,
}

/// First divergences of one pair by class, overall and per category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenDivergenceCounts {
    pub reference: String,
    pub other: String,
    /// The near-tie logprob gap, in nats.
    pub gap_threshold: f64,
    pub overall: NearTieCounts,
    pub by_category: BTreeMap<String, NearTieCounts>,
}
