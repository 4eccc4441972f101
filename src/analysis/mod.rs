//! From saved records to results: score every answer, summarise repeats, decide verdicts, tell
//! sampler noise from deployment differences, paired statistics, the exit gate. Pure: no network,
//! no printing.

mod determinism;
mod divergence;
pub mod fingerprint;
mod gate;
mod results;
mod rollup;
mod similarity;
mod stats;
mod verdict;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use chrono::Utc;

pub use determinism::{summarize, Class, Determinism, Outcome, RepeatDivergence, FAILED_KEY};
pub use divergence::{first_divergence, logprob_tokens, Divergence};
pub use gate::{parse_gate, Condition, DEFAULT_COMPARE_GATE, DEFAULT_DETERMINISM_GATE};
pub use results::*;
pub use similarity::{similarity, SAME_SIMILARITY};
pub use stats::{format_p, mcnemar_exact, wilson, Proportion};
pub use verdict::{pair_verdict, Side, Verdict};

use crate::catalogue::{Catalogue, Prompt};
use crate::run::journal::{effective, Slot};
use crate::run::{Manifest, Record};
use crate::score::{score, Score, ScoreContext};
use rollup::{endpoint_summary, pair_statistics, rollup};

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
    let scores = score_all(catalogue, &slots, &ctx);
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
            per_endpoint.push(endpoint_prompt(&recs, manifest.repeats, &scores));
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

/// Every usable record's score, computed once and in parallel: JS scoring runs a sandboxed
/// process per distinct candidate, which would otherwise leave all but one core idle.
fn score_all(
    catalogue: &Catalogue,
    slots: &BTreeMap<Slot, &Record>,
    ctx: &ScoreContext,
) -> HashMap<Slot, Score> {
    let work: Vec<(&Slot, &Prompt, &str)> = slots
        .iter()
        .filter(|(_, r)| r.is_usable())
        .filter_map(|(slot, r)| {
            Some((
                slot,
                catalogue.get(&slot.0)?,
                r.completion.answer.as_deref().unwrap_or(""),
            ))
        })
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(work.len().max(1));
    let next = AtomicUsize::new(0);
    let scores = Mutex::new(HashMap::with_capacity(work.len()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some((slot, prompt, answer)) =
                    work.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    let scored = score(&prompt.score, answer, ctx);
                    scores
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert((*slot).clone(), scored);
                }
            });
        }
    });
    scores.into_inner().unwrap_or_else(|e| e.into_inner())
}

fn endpoint_prompt<'a>(
    recs: &[Option<&'a Record>],
    planned: u32,
    scored: &HashMap<Slot, Score>,
) -> EndpointPrompt<'a> {
    let mut outcomes = Vec::new();
    let mut scores: Vec<Option<Score>> = Vec::new();
    let mut present: Vec<&Record> = Vec::new();
    for (repeat, rec) in recs.iter().enumerate() {
        let Some(r) = rec else { continue };
        let s = scored
            .get(&(r.prompt.clone(), r.endpoint.clone(), r.repeat))
            .cloned();
        outcomes.push(Outcome {
            repeat: repeat as u32,
            key: s.as_ref().map(|s| {
                s.extracted
                    .clone()
                    .unwrap_or_else(|| r.completion.answer.clone().unwrap_or_default())
            }),
            correct: s.as_ref().and_then(|s| s.correct),
            completion: r.completion.content.clone().unwrap_or_default(),
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
        answer: rec.completion.answer.clone(),
        reasoning_chars: rec
            .completion
            .reasoning
            .as_ref()
            .map_or(0, |t| t.chars().count()),
        finish_reason: rec.completion.finish_reason.clone(),
        max_tokens: Some(rec.max_tokens),
        latency_ms: Some(rec.latency_ms),
        completion_tokens: rec.completion.usage.and_then(|u| u.completion_tokens),
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
                    a.completion.content.as_deref().unwrap_or(""),
                    b.completion.content.as_deref().unwrap_or(""),
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
