//! From saved records to results: score every answer, summarise repeats, decide verdicts, tell
//! sampler noise from deployment differences, paired statistics, the exit gate. Pure: no network,
//! no printing.

mod cache_state;
mod determinism;
mod divergence;
pub mod fingerprint;
mod kind;
mod load;
mod noise;
mod overview;
mod parity;
mod probe;
mod quality;
mod results;
mod rollup;
mod samples;
mod similarity;
mod stats;
mod token_agreement;
mod token_divergence;
mod under_load;
mod verdict;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use chrono::Utc;

pub use cache_state::{CacheStateResult, CacheVerdict, CacheVerdictKind};
pub use determinism::{summarize, Class, Determinism, RepeatDivergence, RepeatOutcome, FAILED_KEY};
pub use divergence::{first_divergence, Divergence};
pub use kind::DivergenceKind;
pub use load::{analyze_load, LoadResults};
pub use noise::{Difference, MIN_REFERENCE_REPEATS};
pub use quality::{Interval, Quality, QualityVerdict, DEFAULT_MARGIN_POINTS};
pub use results::*;
pub use samples::{DivergenceUnit, SampleResult};
pub use similarity::{similarity, SAME_SIMILARITY};
pub use stats::{format_p, mcnemar_exact, wilson, Proportion};
pub use token_agreement::{analyze_forcing, TeacherForcing};
pub use under_load::{LoadVerdict, LoadVerdictKind, UnderLoad};
pub use verdict::{pair_verdict, Side, Verdict};

use crate::catalogue::{Catalogue, Prompt};
use crate::endpoint::LogprobToken;
use crate::gate::{Gate, Metric};
use crate::run::journal::{effective, Slot};
use crate::run::{Manifest, Record};
use crate::score::{score, Detail, Score, ScoreContext};
use rollup::{endpoint_summary, pair_statistics, rollup};

/// What one endpoint did on one prompt, before comparing.
struct EndpointPrompt<'a> {
    answer: AnswerResult,
    outcomes: Vec<RepeatOutcome>,
    /// The most frequent usable answer key.
    modal: Option<String>,
    representative: Option<&'a Record>,
    /// The representative completion's tokens with their logprobs and top-k, parsed once
    /// (`--logprobs`).
    positions: Option<Vec<LogprobToken>>,
    /// What the scorer found in the representative answer.
    detail: Option<Detail>,
}

impl EndpointPrompt<'_> {
    /// Every usable repeat's answer key.
    fn answer_keys(&self) -> Vec<&str> {
        self.outcomes
            .iter()
            .filter_map(|o| o.key.as_deref())
            .collect()
    }
}

/// Where each record sat in what its endpoint was sent: its position and the prompt before it.
type SendOrder = HashMap<*const Record, (usize, Option<String>)>;

fn send_order(records: &[Record]) -> SendOrder {
    let mut by_endpoint: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_endpoint.entry(&r.endpoint).or_default().push(r);
    }
    let mut order = SendOrder::new();
    for list in by_endpoint.values_mut() {
        list.sort_by_key(|r| r.started_at);
        for (i, r) in list.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| list[j].prompt.clone());
            order.insert(*r as *const Record, (i, before));
        }
    }
    order
}

fn side<'a>(e: &'a EndpointPrompt) -> Side<'a> {
    Side {
        usable: e.answer.error.is_none(),
        correct: e.answer.correct,
        extracted: e.answer.extracted.as_deref(),
        answer: e.answer.answer.as_deref().unwrap_or(""),
        detail: e.detail.as_ref(),
    }
}

/// Score and compare everything the journal holds for the run's scope, then apply the gate to
/// that and to the probe phases' results (`analyze_load`; empty for most runs).
pub fn analyze(
    catalogue: &Catalogue,
    manifest: &Manifest,
    records: &[Record],
    load: LoadResults,
    mut warnings: Vec<String>,
    gate: &Gate,
    margin: f64,
) -> Results {
    let ctx = ScoreContext::for_catalogue(&catalogue.dir);
    let slots = effective(records);
    let scores = score_all(catalogue, &slots, &ctx);
    let order = send_order(records);
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
                .map(|repeat| {
                    let slot = Slot {
                        prompt: id.clone(),
                        endpoint: name.clone(),
                        repeat,
                    };
                    slots.get(&slot).copied()
                })
                .collect();
            missing += recs.iter().filter(|r| r.is_none()).count();
            request_failures += recs
                .iter()
                .flatten()
                .filter(|r| r.is_request_failure())
                .count();
            per_endpoint.push(endpoint_prompt(&recs, manifest.repeats, &scores, &order));
        }
        prompts.push(prompt_result(prompt, &names, per_endpoint));
    }

    if let Some(w) = back_to_back_warning(&prompts) {
        warnings.push(w);
    }
    let mut summary = Summary::default();
    for p in &prompts {
        summary.add(p);
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
    let others: Vec<&String> = names.iter().skip(1).collect();
    let quality: Vec<Quality> = statistics
        .iter()
        .map(|s| {
            let o = &s.overall;
            let counts = quality::Paired {
                both_correct: o.both_correct,
                reference_only: o.reference_only,
                other_only: o.other_only,
                both_wrong: o.both_wrong,
            };
            quality::assess(&s.reference, &s.other, counts, margin)
        })
        .collect();
    let stability = names
        .iter()
        .map(|n| overview::stability(&prompts, n, manifest.repeats))
        .collect();
    let identity = others
        .iter()
        .map(|o| overview::identity(&prompts, &reference, o))
        .collect();
    let parity: Vec<Parity> = others
        .iter()
        .map(|o| parity::parity(&prompts, &reference, o))
        .collect();
    let token_divergences: Vec<_> = others
        .iter()
        .map(|o| token_divergence::counts(&prompts, &reference, o))
        .filter(|c| c.overall.near_tie + c.overall.substantive > 0)
        .collect();
    let count_quality = |v: QualityVerdict| quality.iter().filter(|q| q.verdict == v).count();
    let min_p = statistics
        .iter()
        .map(|s| s.overall.p_value)
        .reduce(f64::min);
    let metric = |m: Metric| -> Option<f64> {
        Some(match m {
            Metric::Same => summary.same as f64,
            Metric::Diff => summary.diff as f64,
            Metric::Review => summary.review as f64,
            Metric::Fail => summary.fail as f64,
            Metric::Nondeterministic => nondeterministic as f64,
            Metric::Deployment => deployment_differences as f64,
            Metric::P => return min_p,
            Metric::Flip => summary.kinds.flip as f64,
            Metric::Answer => summary.kinds.answer as f64,
            Metric::Format => summary.kinds.format as f64,
            Metric::Different => count_quality(QualityVerdict::Different) as f64,
            Metric::Inconclusive => count_quality(QualityVerdict::Inconclusive) as f64,
            Metric::Parity => parity
                .iter()
                .map(|p| p.prompt_tokens_mismatches)
                .sum::<usize>() as f64,
            Metric::ChangesAtLoad => return load.changes_at_load().map(|n| n as f64),
            Metric::CacheDependent => return load.cache_dependent().map(|n| n as f64),
        })
    };
    let gate_result = GateResult {
        expression: gate.to_string(),
        failed: gate.failed(metric).iter().map(|c| c.to_string()).collect(),
    };
    Results {
        schema_version: SCHEMA_VERSION,
        tool: crate::run_folder::tool_version(),
        generated_at: Utc::now(),
        reference: reference.clone(),
        sampling: RunSampling {
            temperature: manifest.sampling.temperature,
            stream: manifest.sampling.stream,
            max_tokens: manifest.sampling.default_max_tokens,
            max_tokens_override: manifest.sampling.max_tokens_override,
            other_budgets: other_budgets(catalogue, manifest, &prompts),
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
        quality,
        stability,
        identity,
        parity,
        token_divergences,
        token_agreement: Vec::new(),
        teacher_forcing: None,
        statistics,
        gate: gate_result,
        prompts,
        warnings,
        load,
    }
}

/// Answers read at a budget other than the run's rule gives their prompt (a re-run at another
/// `--max-tokens`, a reasoning retry), counted per budget.
fn other_budgets(
    catalogue: &Catalogue,
    manifest: &Manifest,
    prompts: &[PromptResult],
) -> BTreeMap<u32, usize> {
    let sampling = &manifest.sampling;
    let mut budgets = BTreeMap::new();
    for p in prompts {
        let own = catalogue.get(&p.id).and_then(|c| c.max_tokens);
        let rule = sampling
            .max_tokens_override
            .or(own)
            .unwrap_or(sampling.default_max_tokens);
        for b in p.answers.values().filter_map(|a| a.max_tokens) {
            if b != rule {
                *budgets.entry(b).or_default() += 1;
            }
        }
    }
    budgets
}

/// A warning when most repeats were sent right after the previous repeat of the same prompt: a
/// server that reuses its prompt cache then answers the later repeats warm, so the repeats
/// understate the reference's own noise.
fn back_to_back_warning(prompts: &[PromptResult]) -> Option<String> {
    let (mut later, mut after_self) = (0usize, 0usize);
    for p in prompts {
        for r in p
            .answers
            .values()
            .flat_map(|a| &a.repeats)
            .filter(|r| r.repeat > 0)
        {
            later += 1;
            after_self += usize::from(r.after.as_deref() == Some(p.id.as_str()));
        }
    }
    (later > 0 && after_self * 2 > later).then(|| {
        format!(
            "{after_self} of {later} repeats were sent right after the previous repeat of the same \
             prompt (back to back): a server that reuses its prompt cache answers them warm, so \
             stability and sampler noise are measured optimistically; the default \
             --repeat-order interleaved avoids it"
        )
    })
}

/// Whether the completion was cut off at the budget.
fn is_truncated(r: &Record) -> bool {
    r.completion.finish_reason.as_deref() == Some("length")
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
                catalogue.get(&slot.prompt)?,
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
    order: &SendOrder,
) -> EndpointPrompt<'a> {
    let mut outcomes = Vec::new();
    let mut repeats = Vec::new();
    let mut scores: Vec<Option<Score>> = Vec::new();
    let mut present: Vec<&Record> = Vec::new();
    for (repeat, rec) in recs.iter().enumerate() {
        let Some(r) = rec else { continue };
        let s = scored.get(&Slot::of(r)).cloned();
        outcomes.push(RepeatOutcome {
            repeat: repeat as u32,
            key: s.as_ref().map(|s| {
                s.extracted
                    .clone()
                    .unwrap_or_else(|| r.completion.answer.clone().unwrap_or_default())
            }),
            correct: s.as_ref().and_then(|s| s.correct),
            completion: r.completion.content.clone().unwrap_or_default(),
            tokens: r.completion.token_texts(),
            failure: r.error.as_ref().map(|e| e.to_string()),
        });
        let (sent, after) = order
            .get(&(*r as *const Record))
            .cloned()
            .unwrap_or((0, None));
        repeats.push(RepeatAnswer {
            repeat: repeat as u32,
            answer: outcomes.last().and_then(|o| o.key.clone()),
            correct: s.as_ref().and_then(|s| s.correct),
            truncated: is_truncated(r),
            sent,
            after,
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
            positions: None,
            detail: None,
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
        truncated: is_truncated(rec),
        prompt_tokens: rec.completion.usage.and_then(|u| u.prompt_tokens),
        max_tokens: Some(rec.max_tokens),
        latency_ms: Some(rec.latency_ms),
        completion_tokens: rec.completion.usage.and_then(|u| u.completion_tokens),
        note: rec.note.clone(),
        repeats_answered: answered,
        repeats_planned: planned,
        determinism: (planned > 1).then_some(det),
        repeats: if planned > 1 { repeats } else { Vec::new() },
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
        positions: rec.completion.logprobs.clone(),
        detail: scores[i].as_ref().map(|s| s.detail.clone()),
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
            let kind = (verdict == Verdict::Diff)
                .then(|| kind::classify(&prompt.score, side(reference), side(other)));
            let reason = if kind == Some(DivergenceKind::Format) {
                "both wrong: the same failure, rendered differently".to_string()
            } else {
                reason
            };
            // Only a divergence needs explaining: agreeing or failed pairs have no difference to classify.
            let divergent = matches!(verdict, Verdict::Diff | Verdict::Review);
            let (ref_keys, other_keys) = (reference.answer_keys(), other.answer_keys());
            let difference = divergent
                .then(|| {
                    noise::classify(
                        noise::Answers {
                            modal: reference.modal.as_deref(),
                            repeats: &ref_keys,
                        },
                        noise::Answers {
                            modal: other.modal.as_deref(),
                            repeats: &other_keys,
                        },
                    )
                })
                .flatten();
            let token_divergence = divergent
                .then(|| {
                    let (a, b) = (reference.positions.as_ref()?, other.positions.as_ref()?);
                    token_divergence::first_token_divergence(a, b)
                })
                .flatten();
            let reference_tokens: Option<Vec<String>> = reference
                .positions
                .as_ref()
                .map(|p| p.iter().map(|t| t.token.clone()).collect());
            let first_divergence = match (reference.representative, other.representative) {
                (Some(a), Some(b)) => first_divergence(
                    a.completion.content.as_deref().unwrap_or(""),
                    b.completion.content.as_deref().unwrap_or(""),
                    reference_tokens.as_deref(),
                ),
                _ => None,
            };
            PairResult {
                reference: names[0].clone(),
                other: other_name.clone(),
                verdict,
                reason,
                similarity,
                kind,
                difference,
                first_divergence,
                token_divergence,
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
