//! From saved records to results: score every answer, pick each endpoint's representative
//! answer, decide verdicts, roll up per category. Pure: no network, no printing.

mod similarity;
mod verdict;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use similarity::{similarity, SAME_SIMILARITY};
pub use verdict::{pair_verdict, Side, Verdict};

use crate::catalogue::{Catalogue, Prompt, CATEGORIES};
use crate::run::journal::effective;
use crate::run::{Manifest, Record};
use crate::score::{score, Score, ScoreContext};

/// `results.json`: a public contract (see README).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub tool: String,
    pub generated_at: DateTime<Utc>,
    /// Name of the reference endpoint (the first `--endpoint`).
    pub reference: String,
    pub endpoints: Vec<EndpointSummary>,
    pub summary: Summary,
    /// No request failures and nothing missing.
    pub complete: bool,
    pub request_failures: usize,
    /// Planned (prompt, endpoint, repeat) slots with no record at all.
    pub missing: usize,
    pub categories: Vec<CategoryRollup>,
    pub prompts: Vec<PromptResult>,
    /// Problems met while analysing (prompts no longer in the catalogue, unreadable lines).
    pub warnings: Vec<String>,
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
    /// Distinct `model` values the responses reported.
    pub served_models: Vec<String>,
    /// Distinct `system_fingerprint` values the responses reported.
    pub system_fingerprints: Vec<String>,
    /// Distinct `Server` headers.
    pub servers: Vec<String>,
    pub max_model_len: Option<u64>,
    pub correct: usize,
    pub wrong: usize,
    /// Answered, with no ground truth to check against.
    pub ungraded: usize,
    pub failed: usize,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairResult {
    pub reference: String,
    pub other: String,
    pub verdict: Verdict,
    pub reason: String,
    pub similarity: Option<f64>,
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
    /// Repeats with a usable answer, of those planned.
    pub repeats_answered: u32,
    pub repeats_planned: u32,
}

/// Score and compare everything the journal holds for the run's scope.
pub fn analyze(
    catalogue: &Catalogue,
    manifest: &Manifest,
    records: &[Record],
    warnings: Vec<String>,
) -> Results {
    let mut warnings = warnings;
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
        let mut answers = BTreeMap::new();
        for name in &names {
            let mut scored: Vec<(&Record, Option<Score>)> = Vec::new();
            for repeat in 0..manifest.repeats {
                match slots.get(&(id.clone(), name.clone(), repeat)) {
                    None => missing += 1,
                    Some(r) => {
                        if r.is_request_failure() {
                            request_failures += 1;
                        }
                        let s = r
                            .is_usable()
                            .then(|| score(&prompt.score, r.answer.as_deref().unwrap_or(""), &ctx));
                        scored.push((r, s));
                    }
                }
            }
            answers.insert(name.clone(), answer_result(&scored, manifest.repeats));
        }
        prompts.push(prompt_result(prompt, &names, answers));
    }

    let endpoints = manifest
        .endpoints
        .iter()
        .map(|e| endpoint_summary(e, records, &prompts))
        .collect();
    let mut summary = Summary::default();
    for p in &prompts {
        summary.add(p.verdict);
    }
    Results {
        schema_version: 1,
        tool: format!("coherence {}", env!("CARGO_PKG_VERSION")),
        generated_at: Utc::now(),
        reference,
        endpoints,
        summary,
        complete: request_failures == 0 && missing == 0,
        request_failures,
        missing,
        categories: rollup(&prompts, &names),
        prompts,
        warnings,
    }
}

/// The representative repeat is the most common answer (ties: the earliest repeat).
fn answer_result(scored: &[(&Record, Option<Score>)], planned: u32) -> AnswerResult {
    let usable: Vec<(&Record, &Score)> = scored
        .iter()
        .filter_map(|(r, s)| s.as_ref().map(|s| (*r, s)))
        .collect();
    let Some((rec, s)) = modal(&usable) else {
        let error = scored
            .iter()
            .filter_map(|(r, _)| r.error.as_ref())
            .next()
            .map(|e| e.to_string())
            .unwrap_or_else(|| {
                "no response recorded (run incomplete; continue it with --resume)".into()
            });
        let last = scored.first().map(|(r, _)| *r);
        return AnswerResult {
            error: Some(error),
            finish_reason: last.and_then(|r| r.finish_reason.clone()),
            max_tokens: last.map(|r| r.max_tokens),
            reasoning_chars: last
                .and_then(|r| r.reasoning.as_ref())
                .map_or(0, |t| t.chars().count()),
            completion_tokens: last.and_then(|r| r.usage).and_then(|u| u.completion_tokens),
            repeats_planned: planned,
            ..AnswerResult::default()
        };
    };
    AnswerResult {
        extracted: s.extracted.clone(),
        correct: s.correct,
        error: None,
        evidence: Some(s.evidence.clone()),
        answer: rec.answer.clone(),
        reasoning_chars: rec.reasoning.as_ref().map_or(0, |t| t.chars().count()),
        finish_reason: rec.finish_reason.clone(),
        max_tokens: Some(rec.max_tokens),
        latency_ms: Some(rec.latency_ms),
        completion_tokens: rec.usage.and_then(|u| u.completion_tokens),
        repeats_answered: usable.len() as u32,
        repeats_planned: planned,
    }
}

fn modal<'a>(usable: &[(&'a Record, &'a Score)]) -> Option<(&'a Record, &'a Score)> {
    let key = |r: &Record, s: &Score| {
        s.extracted
            .clone()
            .or_else(|| r.answer.clone())
            .unwrap_or_default()
    };
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (i, (r, s)) in usable.iter().enumerate() {
        let e = counts.entry(key(r, s)).or_insert((0, i));
        e.0 += 1;
    }
    let (_, first) = counts
        .values()
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))?;
    Some(usable[*first])
}

fn prompt_result(
    prompt: &Prompt,
    names: &[String],
    answers: BTreeMap<String, AnswerResult>,
) -> PromptResult {
    let side = |name: &String| {
        let a = &answers[name];
        Side {
            usable: a.error.is_none(),
            correct: a.correct,
            extracted: a.extracted.as_deref(),
            answer: a.answer.as_deref().unwrap_or(""),
        }
    };
    let pairs: Vec<PairResult> = names
        .iter()
        .skip(1)
        .map(|other| {
            let (verdict, reason, similarity) = pair_verdict(side(&names[0]), side(other));
            PairResult {
                reference: names[0].clone(),
                other: other.clone(),
                verdict,
                reason,
                similarity,
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
        answers,
    }
}

fn endpoint_summary(
    e: &crate::run::EndpointInfo,
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
    let mut s = EndpointSummary {
        name: e.spec.name.clone(),
        base_url: e.spec.base_url.clone(),
        model: e.spec.model.clone(),
        served_models: distinct(|r| r.model.as_ref()),
        system_fingerprints: distinct(|r| r.system_fingerprint.as_ref()),
        servers: distinct(|r| r.server.as_ref()),
        max_model_len: e.models.as_ref().and_then(|m| m.max_model_len),
        correct: 0,
        wrong: 0,
        ungraded: 0,
        failed: 0,
    };
    for p in prompts {
        match p.answers.get(&e.spec.name) {
            Some(a) if a.error.is_some() => s.failed += 1,
            Some(a) => match a.correct {
                Some(true) => s.correct += 1,
                Some(false) => s.wrong += 1,
                None => s.ungraded += 1,
            },
            None => s.failed += 1,
        }
    }
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
