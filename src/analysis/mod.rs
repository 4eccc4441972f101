//! From saved records to results: score every answer, summarise repeats, decide verdicts, tell
//! sampler noise from deployment differences, paired statistics, the exit gate. Pure: no network,
//! no printing.

mod determinism;
mod divergence;
mod gate;
mod similarity;
mod stats;
mod verdict;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use determinism::{summarize, Class, Determinism, Outcome, RepeatDivergence, FAILED_KEY};
pub use divergence::{first_divergence, logprob_tokens, Divergence};
pub use gate::{parse_gate, Condition, DEFAULT_COMPARE_GATE, DEFAULT_DETERMINISM_GATE};
pub use similarity::{similarity, SAME_SIMILARITY};
pub use stats::{format_p, mcnemar_exact, wilson, Proportion};
pub use verdict::{pair_verdict, Side, Verdict};

use crate::catalogue::{Catalogue, Prompt, CATEGORIES};
use crate::run::journal::effective;
use crate::run::{EndpointInfo, Manifest, Record};
use crate::score::{score, Score, ScoreContext};

/// The version of the `results.json` layout (see `schema/results.schema.json`).
pub const SCHEMA_VERSION: u32 = 2;

/// `results.json`: a public contract (README, `schema/results.schema.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub tool: String,
    pub generated_at: DateTime<Utc>,
    /// Name of the reference endpoint (the first `--endpoint`).
    pub reference: String,
    pub sampling: RunSampling,
    pub endpoints: Vec<EndpointSummary>,
    pub summary: Summary,
    /// Prompt-endpoint pairs whose repeats gave different answers.
    pub nondeterministic: usize,
    /// Prompts where another endpoint's modal answer never occurs among the reference's repeats.
    pub deployment_differences: usize,
    /// No request failures and nothing missing.
    pub complete: bool,
    pub request_failures: usize,
    /// Planned (prompt, endpoint, repeat) slots with no record at all.
    pub missing: usize,
    pub categories: Vec<CategoryRollup>,
    /// Paired statistics of each other endpoint against the reference.
    pub statistics: Vec<PairStatistics>,
    pub gate: GateResult,
    pub prompts: Vec<PromptResult>,
    /// Problems met while analysing (prompts no longer in the catalogue, unreadable lines).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSampling {
    pub temperature: f64,
    pub stream: bool,
    pub max_tokens: u32,
    pub repeats: u32,
    pub params: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub same: usize,
    pub diff: usize,
    pub review: usize,
    pub fail: usize,
}

impl Summary {
    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Same => self.same += 1,
            Verdict::Diff => self.diff += 1,
            Verdict::Review => self.review += 1,
            Verdict::Fail => self.fail += 1,
        }
    }

    /// "83 same / 17 diff / 0 review / 0 fail".
    pub fn headline(&self) -> String {
        format!(
            "{} same / {} diff / {} review / {} fail",
            self.same, self.diff, self.review, self.fail
        )
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
    /// Prompts re-run automatically at a larger budget because the reasoning used the whole budget.
    pub reasoning_retries: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CategoryRollup {
    pub category: String,
    pub prompts: usize,
    #[serde(flatten)]
    pub summary: Summary,
    /// Correct answers per endpoint.
    pub correct: BTreeMap<String, usize>,
}

/// Paired right/wrong counts over prompts both endpoints answered with ground truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedCounts {
    /// None for the whole catalogue.
    pub category: Option<String>,
    pub graded: u64,
    pub both_correct: u64,
    pub both_wrong: u64,
    /// Reference right, other wrong.
    pub reference_only: u64,
    /// Reference wrong, other right.
    pub other_only: u64,
    /// Exact McNemar test of reference_only vs other_only.
    pub p_value: f64,
    /// In words, e.g. "counting_traps: full right and spark wrong on 10 of 13, the reverse on 0; p = 0.002".
    pub statement: String,
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

/// Whether a difference between endpoints is within the reference's own sampler noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Difference {
    /// The other endpoint's modal answer also occurs among the reference's repeats.
    SamplerNoise,
    /// It never does.
    DeploymentDifference,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairResult {
    pub reference: String,
    pub other: String,
    pub verdict: Verdict,
    pub reason: String,
    pub similarity: Option<f64>,
    /// For a diff or review verdict whose modal answers differ: sampler noise or a deployment difference.
    pub difference: Option<Difference>,
    /// Where the two representative completions first differ.
    pub first_divergence: Option<Divergence>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AnswerResult {
    pub extracted: Option<String>,
    /// true/false against ground truth; null when the prompt has none.
    pub correct: Option<bool>,
    /// Why there is no usable answer.
    pub error: Option<String>,
    pub evidence: Option<String>,
    /// The answer text (reasoning removed) of the representative repeat.
    pub answer: Option<String>,
    pub reasoning_chars: usize,
    pub finish_reason: Option<String>,
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
}

/// What one endpoint did on one prompt, before comparing.
struct EndpointPrompt<'a> {
    answer: AnswerResult,
    outcomes: Vec<Outcome>,
    /// The most frequent usable answer key.
    modal: Option<String>,
    representative: Option<&'a Record>,
}

fn side<'a>(e: &'a EndpointPrompt) -> Side<'a> {
    Side {
        usable: e.answer.error.is_none(),
        correct: e.answer.correct,
        extracted: e.answer.extracted.as_deref(),
        answer: e.answer.answer.as_deref().unwrap_or(""),
    }
}

/// Score and compare everything the journal holds for the run's scope, then apply the gate.
pub fn analyze(
    catalogue: &Catalogue,
    manifest: &Manifest,
    records: &[Record],
    mut warnings: Vec<String>,
    gate: &[Condition],
) -> Results {
    let ctx = ScoreContext::for_catalogue(&catalogue.dir);
    let slots = effective(records);
    let names = manifest.endpoint_names();
    let reference = names.first().cloned().unwrap_or_default();
    let mut prompts = Vec::new();
    let mut request_failures = 0;
    let mut missing = 0;

    for id in &manifest.prompts {
        let Some(prompt) = catalogue.get(id) else {
            warnings.push(format!(
                "prompt `{id}` is in the run but not in the catalogue {}; skipped",
                catalogue.dir.display()
            ));
            continue;
        };
        let mut per_endpoint = Vec::new();
        for name in &names {
            let recs: Vec<Option<&Record>> = (0..manifest.repeats)
                .map(|rep| slots.get(&(id.clone(), name.clone(), rep)).copied())
                .collect();
            missing += recs.iter().filter(|r| r.is_none()).count();
            request_failures += recs
                .iter()
                .flatten()
                .filter(|r| r.is_request_failure())
                .count();
            per_endpoint.push(endpoint_prompt(prompt, &recs, manifest.repeats, &ctx));
        }
        prompts.push(prompt_result(prompt, &names, per_endpoint));
    }

    let mut summary = Summary::default();
    for p in &prompts {
        summary.add(p.verdict);
    }
    let nondeterministic = prompts
        .iter()
        .flat_map(|p| p.answers.values())
        .filter(|a| {
            a.determinism
                .as_ref()
                .is_some_and(|d| d.class == Class::Nondeterministic)
        })
        .count();
    let deployment_differences = prompts
        .iter()
        .filter(|p| {
            p.pairs
                .iter()
                .any(|x| x.difference == Some(Difference::DeploymentDifference))
        })
        .count();
    let statistics: Vec<PairStatistics> = names
        .iter()
        .skip(1)
        .map(|other| pair_statistics(&prompts, &reference, other))
        .collect();
    let endpoints = manifest
        .endpoints
        .iter()
        .map(|e| endpoint_summary(e, records, &prompts))
        .collect();
    let min_p = statistics
        .iter()
        .map(|s| s.overall.p_value)
        .reduce(f64::min);
    let metric = |m: &str| -> Option<f64> {
        Some(match m {
            "same" => summary.same as f64,
            "diff" => summary.diff as f64,
            "review" => summary.review as f64,
            "fail" => summary.fail as f64,
            "nondeterministic" => nondeterministic as f64,
            "deployment" => deployment_differences as f64,
            "p" => return min_p,
            _ => return None,
        })
    };
    let gate_result = GateResult {
        expression: gate
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        failed: gate
            .iter()
            .filter(|c| c.holds(metric(&c.metric)))
            .map(|c| c.to_string())
            .collect(),
    };
    Results {
        schema_version: SCHEMA_VERSION,
        tool: format!("coherence {}", env!("CARGO_PKG_VERSION")),
        generated_at: Utc::now(),
        reference: reference.clone(),
        sampling: RunSampling {
            temperature: manifest.sampling.temperature,
            stream: manifest.sampling.stream,
            max_tokens: manifest.sampling.max_tokens,
            repeats: manifest.repeats,
            params: manifest.sampling.params.clone(),
        },
        endpoints,
        summary,
        nondeterministic,
        deployment_differences,
        complete: request_failures == 0 && missing == 0,
        request_failures,
        missing,
        categories: rollup(&prompts, &names),
        statistics,
        gate: gate_result,
        prompts,
        warnings,
    }
}

fn endpoint_prompt<'a>(
    prompt: &Prompt,
    recs: &[Option<&'a Record>],
    planned: u32,
    ctx: &ScoreContext,
) -> EndpointPrompt<'a> {
    let mut outcomes = Vec::new();
    let mut scores: Vec<Option<Score>> = Vec::new();
    let mut present: Vec<&Record> = Vec::new();
    for (repeat, rec) in recs.iter().enumerate() {
        let Some(r) = rec else { continue };
        let s = r
            .is_usable()
            .then(|| score(&prompt.score, r.answer.as_deref().unwrap_or(""), ctx));
        outcomes.push(Outcome {
            repeat: repeat as u32,
            key: s.as_ref().map(|s| {
                s.extracted
                    .clone()
                    .unwrap_or_else(|| r.answer.clone().unwrap_or_default())
            }),
            correct: s.as_ref().and_then(|s| s.correct),
            completion: r.content.clone().unwrap_or_default(),
            tokens: r.raw_body.as_deref().and_then(logprob_tokens),
            failure: r.error.as_ref().map(|e| e.to_string()),
        });
        scores.push(s);
        present.push(r);
    }
    if present.is_empty() {
        return EndpointPrompt {
            answer: AnswerResult {
                error: Some(
                    "no response recorded (run incomplete; continue it with --resume)".into(),
                ),
                repeats_planned: planned,
                ..AnswerResult::default()
            },
            outcomes,
            modal: None,
            representative: None,
        };
    }
    let (det, i) = summarize(&outcomes);
    let modal = det.modal_answer.clone();
    let rec = present[i];
    let answered = outcomes.iter().filter(|o| o.key.is_some()).count() as u32;
    let mut answer = AnswerResult {
        answer: rec.answer.clone(),
        reasoning_chars: rec.reasoning.as_ref().map_or(0, |t| t.chars().count()),
        finish_reason: rec.finish_reason.clone(),
        max_tokens: Some(rec.max_tokens),
        latency_ms: Some(rec.latency_ms),
        completion_tokens: rec.usage.and_then(|u| u.completion_tokens),
        note: rec.note.clone(),
        repeats_answered: answered,
        repeats_planned: planned,
        determinism: (planned > 1).then_some(det),
        ..AnswerResult::default()
    };
    match &scores[i] {
        Some(s) => {
            answer.extracted = s.extracted.clone();
            answer.correct = s.correct;
            answer.evidence = Some(s.evidence.clone());
        }
        None => answer.error = rec.error.as_ref().map(|e| e.to_string()),
    }
    EndpointPrompt {
        answer,
        outcomes,
        modal,
        representative: Some(rec),
    }
}

fn prompt_result(
    prompt: &Prompt,
    names: &[String],
    per_endpoint: Vec<EndpointPrompt>,
) -> PromptResult {
    let reference = &per_endpoint[0];
    let pairs: Vec<PairResult> = names
        .iter()
        .zip(&per_endpoint)
        .skip(1)
        .map(|(other_name, other)| {
            let (verdict, reason, similarity) = pair_verdict(side(reference), side(other));
            // Only a divergence needs explaining: agreeing or failed pairs have no difference to classify.
            let divergent = matches!(verdict, Verdict::Diff | Verdict::Review);
            let difference = match (&reference.modal, &other.modal) {
                (Some(a), Some(b)) if divergent && a != b => {
                    let seen = reference.outcomes.iter().any(|o| o.key.as_ref() == Some(b));
                    Some(if seen {
                        Difference::SamplerNoise
                    } else {
                        Difference::DeploymentDifference
                    })
                }
                _ => None,
            };
            let first_divergence = match (reference.representative, other.representative) {
                (Some(a), Some(b)) => first_divergence(
                    a.content.as_deref().unwrap_or(""),
                    b.content.as_deref().unwrap_or(""),
                    a.raw_body.as_deref().and_then(logprob_tokens).as_deref(),
                ),
                _ => None,
            };
            PairResult {
                reference: names[0].clone(),
                other: other_name.clone(),
                verdict,
                reason,
                similarity,
                difference,
                first_divergence,
            }
        })
        .collect();
    let verdict = pairs
        .iter()
        .map(|p| p.verdict)
        .max()
        .unwrap_or(Verdict::Same);
    PromptResult {
        id: prompt.id.clone(),
        category: prompt.category.clone(),
        question: prompt.question().to_string(),
        expected: prompt.score.expected_summary(),
        scorer: prompt.score.kind().to_string(),
        verdict,
        pairs,
        answers: names
            .iter()
            .cloned()
            .zip(per_endpoint.into_iter().map(|e| e.answer))
            .collect(),
    }
}

fn pair_statistics(prompts: &[PromptResult], reference: &str, other: &str) -> PairStatistics {
    let count = |category: Option<&str>| {
        let mut c = PairedCounts {
            category: category.map(str::to_string),
            graded: 0,
            both_correct: 0,
            both_wrong: 0,
            reference_only: 0,
            other_only: 0,
            p_value: 1.0,
            statement: String::new(),
        };
        for p in prompts
            .iter()
            .filter(|p| category.is_none_or(|cat| p.category == cat))
        {
            let (Some(a), Some(b)) = (
                p.answers.get(reference).and_then(|a| a.correct),
                p.answers.get(other).and_then(|a| a.correct),
            ) else {
                continue;
            };
            c.graded += 1;
            match (a, b) {
                (true, true) => c.both_correct += 1,
                (false, false) => c.both_wrong += 1,
                (true, false) => c.reference_only += 1,
                (false, true) => c.other_only += 1,
            }
        }
        c.p_value = mcnemar_exact(c.reference_only, c.other_only);
        c.statement = statement(&c, reference, other);
        c
    };
    let categories: BTreeSet<&str> = prompts.iter().map(|p| p.category.as_str()).collect();
    let mut ordered: Vec<&str> = CATEGORIES
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| categories.contains(c))
        .collect();
    ordered.extend(
        categories
            .iter()
            .filter(|c| !CATEGORIES.iter().any(|(k, _)| k == *c)),
    );
    PairStatistics {
        reference: reference.to_string(),
        other: other.to_string(),
        overall: count(None),
        categories: ordered.into_iter().map(|c| count(Some(c))).collect(),
    }
}

/// "counting_traps: full right and spark wrong on 10 of 13, the reverse on 0; p = 0.002: a systemic deficit of spark".
fn statement(c: &PairedCounts, reference: &str, other: &str) -> String {
    let scope = c.category.as_deref().unwrap_or("all prompts");
    let p = format_p(c.p_value);
    let p = if p.starts_with('<') {
        format!("p {p}")
    } else {
        format!("p = {p}")
    };
    let conclusion = if c.reference_only + c.other_only == 0 {
        "no disagreement".to_string()
    } else if c.p_value < 0.05 {
        let worse = if c.reference_only > c.other_only {
            other
        } else {
            reference
        };
        format!("a systemic deficit of {worse}")
    } else {
        "not significant (could be chance)".to_string()
    };
    format!(
        "{scope}: {reference} right and {other} wrong on {} of {}, the reverse on {}; {p}: {conclusion}",
        c.reference_only, c.graded, c.other_only
    )
}

fn endpoint_summary(
    e: &EndpointInfo,
    records: &[Record],
    prompts: &[PromptResult],
) -> EndpointSummary {
    let mine = || records.iter().filter(|r| r.endpoint == e.spec.name);
    let distinct = |f: fn(&Record) -> Option<&String>| -> Vec<String> {
        mine()
            .filter_map(f)
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let mut servers: BTreeSet<String> = mine().filter_map(|r| r.server.clone()).collect();
    servers.extend(e.models.as_ref().and_then(|m| m.server.clone()));
    let mut s = EndpointSummary {
        name: e.spec.name.clone(),
        base_url: e.spec.base_url.clone(),
        model: e.spec.model.clone(),
        listed_models: e.models.as_ref().map(|m| m.ids.clone()).unwrap_or_default(),
        max_model_len: e.models.as_ref().and_then(|m| m.max_model_len),
        served_models: distinct(|r| r.model.as_ref()),
        system_fingerprints: distinct(|r| r.system_fingerprint.as_ref()),
        servers: servers.into_iter().collect(),
        correct: 0,
        wrong: 0,
        ungraded: 0,
        failed: 0,
        accuracy: wilson(0, 0),
        determinism: BTreeMap::new(),
        mean_completion_tokens: None,
        reasoning_retries: 0,
    };
    let mut tokens = Vec::new();
    for p in prompts {
        let Some(a) = p.answers.get(&e.spec.name) else {
            continue;
        };
        if a.error.is_some() {
            s.failed += 1;
        } else {
            match a.correct {
                Some(true) => s.correct += 1,
                Some(false) => s.wrong += 1,
                None => s.ungraded += 1,
            }
            tokens.extend(a.completion_tokens);
        }
        if a.note.is_some() {
            s.reasoning_retries += 1;
        }
        if let Some(d) = &a.determinism {
            *s.determinism
                .entry(d.class.label().to_string())
                .or_default() += 1;
        }
    }
    s.accuracy = wilson(s.correct as u64, (s.correct + s.wrong) as u64);
    s.mean_completion_tokens =
        (!tokens.is_empty()).then(|| tokens.iter().sum::<u64>() as f64 / tokens.len() as f64);
    s
}

fn rollup(prompts: &[PromptResult], names: &[String]) -> Vec<CategoryRollup> {
    let mut order: Vec<String> = CATEGORIES.iter().map(|(c, _)| c.to_string()).collect();
    for p in prompts {
        if !order.contains(&p.category) {
            order.push(p.category.clone());
        }
    }
    order
        .into_iter()
        .filter_map(|cat| {
            let in_cat: Vec<&PromptResult> = prompts.iter().filter(|p| p.category == cat).collect();
            if in_cat.is_empty() {
                return None;
            }
            let mut summary = Summary::default();
            let mut correct: BTreeMap<String, usize> =
                names.iter().map(|n| (n.clone(), 0)).collect();
            for p in &in_cat {
                summary.add(p.verdict);
                for (name, a) in &p.answers {
                    if a.correct == Some(true) {
                        *correct.entry(name.clone()).or_default() += 1;
                    }
                }
            }
            Some(CategoryRollup {
                category: cat,
                prompts: in_cat.len(),
                summary,
                correct,
            })
        })
        .collect()
}
