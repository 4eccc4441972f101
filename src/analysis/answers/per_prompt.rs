//! Per-prompt results: every usable answer scored once, each endpoint's repeats summarised, each
//! pair of the reference with another endpoint given a verdict, a kind and a noise label; and
//! what the journal lacked (missing slots, failed requests).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::determinism::{determinism_of, Class, RepeatOutcome};
use super::divergence::first_divergence;
use super::figures::{AnswerResult, CodeRun, PairResult, PromptResult, RepeatAnswer};
use super::inputs::Inputs;
use super::kind::{self, DivergenceKind};
use super::noise;
use super::quote::Quoter;
use super::token_divergence;
use super::verdict::{pair_verdict, Side, Verdict};
use crate::catalogue::{Catalogue, Prompt};
use crate::endpoint::{LogprobToken, Text};
use crate::run::journal::{effective_in, Slot};
use crate::run::record::{Answered, Line};
use crate::score::{score_completion, Detail, Score, ScoreContext, ScorerSpec};
use crate::text::Strings;

/// The prompts of the run's scope, compared, and what the journal lacked for them.
pub struct PromptResults {
    pub prompts: Vec<PromptResult>,
    /// Slots whose newest record is a failed request.
    pub request_failures: usize,
    /// Planned (prompt, endpoint, repeat) slots with no record at all.
    pub missing: usize,
    /// Prompts of the run that the catalogue no longer has (skipped).
    pub warnings: Vec<String>,
    /// Texts longer than `quote::QUOTE_BYTES`, quoted clipped.
    pub clipped: usize,
    /// Each `tool_call` item's first-repeat score on every endpoint, for the `tool_calls`
    /// section to read instead of scoring again.
    pub tool_items: Vec<ToolItem>,
}

/// One `tool_call` item: each endpoint's score of its first repeat (in the run's endpoint
/// order; None where that repeat has no usable reply).
pub struct ToolItem {
    pub prompt: String,
    pub first_repeat: Vec<Option<Arc<Score>>>,
}

/// What one endpoint did on one prompt, before comparing.
struct EndpointPrompt<'a> {
    answer: AnswerResult,
    outcomes: Vec<RepeatOutcome>,
    /// The most frequent usable answer key.
    modal: Option<String>,
    representative: Option<&'a Answered>,
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

    fn side(&self) -> Side<'_> {
        Side {
            usable: self.answer.error.is_none(),
            correct: self.answer.correct,
            extracted: self.answer.extracted.as_deref(),
            answer: self.answer.answer.as_deref().unwrap_or(""),
        }
    }
}

/// Where each record sat in what its endpoint was sent: its position and the prompt before it.
type SendOrder<'a> = HashMap<*const Answered, (usize, Option<&'a Arc<str>>)>;

fn send_order(records: &[Answered]) -> SendOrder<'_> {
    let mut by_endpoint: BTreeMap<&str, Vec<&Answered>> = BTreeMap::new();
    for r in records {
        by_endpoint.entry(&*r.endpoint).or_default().push(r);
    }
    let mut order = SendOrder::new();
    for list in by_endpoint.values_mut() {
        list.sort_by_key(|r| r.started_at);
        for (i, r) in list.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| &list[j].prompt);
            order.insert(*r as *const Answered, (i, before));
        }
    }
    order
}

/// Score and compare everything the journal holds for the run's scope, prompt by prompt.
pub fn prompt_results(inputs: &Inputs, names: &[String], ctx: &ScoreContext) -> PromptResults {
    let (catalogue, manifest) = (inputs.catalogue, inputs.manifest);
    let slots = effective_in(&inputs.records);
    let scores = score_all(catalogue, &slots, ctx);
    let order = send_order(&inputs.records);
    let mut out = PromptResults {
        prompts: Vec::new(),
        request_failures: 0,
        missing: 0,
        warnings: Vec::new(),
        clipped: 0,
        tool_items: Vec::new(),
    };
    let mut quoter = Quoter::default();
    for id in &manifest.prompts {
        let Some(prompt) = catalogue.get(id) else {
            out.warnings.push(format!(
                "prompt `{id}` is in the run but not in the catalogue {}; skipped",
                catalogue.dir.display()
            ));
            continue;
        };
        let mut per_endpoint = Vec::new();
        let mut first_repeat = Vec::new();
        for name in names {
            let planned = manifest.repeats_of(name);
            let recs: Vec<Option<&Answered>> = (0..planned)
                .map(|repeat| {
                    let slot = Slot {
                        prompt: id.as_str(),
                        endpoint: name.as_str(),
                        repeat,
                    };
                    slots.get(&slot).copied()
                })
                .collect();
            out.missing += recs.iter().filter(|r| r.is_none()).count();
            out.request_failures += recs
                .iter()
                .flatten()
                .filter(|r| r.is_request_failure())
                .count();
            let mut ep = endpoint_prompt(&recs, planned, &scores, &order);
            match prompt.score {
                ScorerSpec::Js { .. } => ep.answer.code = ep.detail.as_ref().and_then(code_run),
                ScorerSpec::ToolCall { .. } => first_repeat.push(
                    recs.first()
                        .copied()
                        .flatten()
                        .and_then(|r| scores.get(&Slot::of(r)).cloned()),
                ),
                _ => {}
            }
            per_endpoint.push(ep);
        }
        if let ScorerSpec::ToolCall { .. } = prompt.score {
            out.tool_items.push(ToolItem {
                prompt: id.clone(),
                first_repeat,
            });
        }
        // Compared on the whole texts; quoted clipped, so no reply is held whole in the results.
        let mut result = prompt_result(prompt, names, per_endpoint);
        for answer in result.answers.values_mut() {
            quote_answer(&mut quoter, answer);
        }
        out.prompts.push(result);
    }
    out.clipped = quoter.clipped;
    out
}

/// How a code answer met its tests, from what the JS scorer found; None for a scorer error.
fn code_run(detail: &Detail) -> Option<CodeRun> {
    match detail {
        Detail::Tests(t) if t.ran => Some(CodeRun::RanTests),
        Detail::Tests(_) => Some(CodeRun::DidNotLoad),
        Detail::NotFound => Some(CodeRun::NoCode),
        _ => None,
    }
}

/// Whether the completion was cut off at the budget.
fn is_truncated(r: &Answered) -> bool {
    r.completion.finish_reason.as_deref() == Some("length")
}

/// Every usable record's score, keyed by its slot. Each distinct (prompt, answer, cut off) is
/// scored once, in parallel, and shared by the slots that gave it: repeats at temperature 0 mostly
/// repeat an answer, so a long run costs the scoring and memory of its distinct answers (JS
/// scoring runs a sandboxed process per candidate, which would otherwise leave all but one core
/// idle). An answer cut off at the budget counts only when it was committed before the cut
/// (`score::score_completion`).
fn score_all<'a>(
    catalogue: &Catalogue,
    slots: &'a BTreeMap<Slot<&str>, &Answered>,
    ctx: &ScoreContext,
) -> HashMap<&'a Slot<&'a str>, Arc<Score>> {
    // Keyed by the shared text itself: a repeat of an answer costs a pointer, not a copy.
    let mut distinct: HashMap<(&str, Text, bool), usize> = HashMap::new();
    let mut work: Vec<(&Prompt, Text, bool)> = Vec::new();
    let mut slot_work: Vec<(&Slot<&str>, usize)> = Vec::with_capacity(slots.len());
    for (slot, r) in slots.iter().filter(|(_, r)| r.is_usable()) {
        let Some(prompt) = catalogue.get(slot.prompt) else {
            continue;
        };
        let answer = r.scored_text(&prompt.score);
        let truncated = is_truncated(r);
        let i = *distinct
            .entry((&prompt.id, answer.clone(), truncated))
            .or_insert_with(|| {
                work.push((prompt, answer, truncated));
                work.len() - 1
            });
        slot_work.push((slot, i));
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(work.len().max(1));
    let next = AtomicUsize::new(0);
    let scored_all: Mutex<Vec<Option<Arc<Score>>>> = Mutex::new(vec![None; work.len()]);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut i = next.fetch_add(1, Ordering::Relaxed);
                while let Some((prompt, answer, truncated)) = work.get(i) {
                    let (answer, truncated) = (&**answer, *truncated);
                    let scored = score_completion(&prompt.score, answer, truncated, ctx);
                    scored_all.lock().unwrap_or_else(|e| e.into_inner())[i] =
                        Some(Arc::new(scored));
                    i = next.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let scored = scored_all.into_inner().unwrap_or_else(|e| e.into_inner());
    slot_work
        .into_iter()
        .filter_map(|(slot, i)| Some((slot, scored[i].clone()?)))
        .collect()
}

/// The recorded repeats of one prompt on one endpoint, each with its score.
struct Repeats<'a> {
    outcomes: Vec<RepeatOutcome>,
    answers: Vec<RepeatAnswer>,
    scores: Vec<Option<Score>>,
    present: Vec<&'a Answered>,
}

fn collect_repeats<'a>(
    recs: &[Option<&'a Answered>],
    scored: &HashMap<&Slot<&str>, Arc<Score>>,
    order: &SendOrder,
) -> Repeats<'a> {
    // Sized once: `answers` is kept in the results, where growth by doubling would leave up to
    // a quarter of every endpoint's repeat list unused (200 repeats in room for 256).
    let n = recs.iter().flatten().count();
    let mut out = Repeats {
        outcomes: Vec::with_capacity(n),
        answers: Vec::with_capacity(n),
        scores: Vec::with_capacity(n),
        present: Vec::with_capacity(n),
    };
    // One copy of each distinct answer among the repeats (mostly the same few).
    let mut shared = Strings::default();
    for (repeat, rec) in recs.iter().enumerate() {
        let Some(r) = rec else { continue };
        let s = scored.get(&Slot::of(*r)).map(|s| Score::clone(s));
        let key = s.as_ref().map(|s| {
            s.extracted.clone().unwrap_or_else(|| {
                r.completion
                    .answer
                    .as_deref()
                    .unwrap_or_default()
                    .to_string()
            })
        });
        let (sent, after) = order
            .get(&(*r as *const Answered))
            .map_or((0, None), |&(sent, after)| (sent, after.cloned()));
        out.answers.push(RepeatAnswer {
            repeat: repeat as u32,
            answer: key.as_deref().map(|k| shared.get(k)),
            as_written: s
                .as_ref()
                .and_then(|s| s.as_written.as_deref())
                .map(|w| shared.get(w)),
            correct: s.as_ref().and_then(|s| s.correct),
            truncated: is_truncated(r),
            sent,
            after,
            text: None,
        });
        out.outcomes.push(RepeatOutcome {
            repeat: repeat as u32,
            key,
            correct: s.as_ref().and_then(|s| s.correct),
            completion: r
                .completion
                .content
                .as_deref()
                .unwrap_or_default()
                .to_string(),
            tokens: r.completion.token_texts(),
        });
        out.scores.push(s);
        out.present.push(r);
    }
    out
}

fn endpoint_prompt<'a>(
    recs: &[Option<&'a Answered>],
    planned: u32,
    scored: &HashMap<&Slot<&str>, Arc<Score>>,
    order: &SendOrder,
) -> EndpointPrompt<'a> {
    let Repeats {
        outcomes,
        mut answers,
        scores,
        present,
    } = collect_repeats(recs, scored, order);
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
    let (det, i) = determinism_of(&outcomes);
    let modal = det.modal_answer.clone();
    let rec = present[i];
    for (repeat, r) in answers.iter_mut().zip(&present) {
        if r.completion.answer != rec.completion.answer {
            repeat.text = r.completion.answer.as_deref().map(str::to_string);
        }
    }
    let mut answer = AnswerResult {
        answer: rec.completion.answer.as_deref().map(str::to_string),
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
        repeats_answered: outcomes.iter().filter(|o| o.key.is_some()).count() as u32,
        repeats_planned: planned,
        determinism: (planned > 1).then_some(det),
        repeats: if planned > 1 { answers } else { Vec::new() },
        ..AnswerResult::default()
    };
    match &scores[i] {
        Some(s) => {
            answer.extracted = s.extracted.clone();
            answer.as_written = s.as_written.clone();
            answer.correct = s.correct;
            answer.evidence = Some(s.evidence.clone());
            answer.weak = s.weak.clone();
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

/// The reference and one other endpoint on one prompt: verdict, kind, noise label, divergences.
fn pair_result(
    prompt: &Prompt,
    (reference_name, reference): (&str, &EndpointPrompt),
    (other_name, other): (&str, &EndpointPrompt),
) -> PairResult {
    let (verdict, reason, similarity) = pair_verdict(reference.side(), other.side());
    let kind = (verdict == Verdict::Diff)
        .then(|| kind::classify(&prompt.score, reference.side(), other.side()));
    // The same failure in two renderings is a formatting difference, and no answer on either
    // side is nothing to compare: neither is a different answer.
    let (verdict, reason) = match kind {
        Some(DivergenceKind::Format) => (
            Verdict::Format,
            "both wrong: the same failure, rendered differently".to_string(),
        ),
        Some(DivergenceKind::NoAnswer) => (
            Verdict::NoAnswer,
            "both wrong: neither side gave an answer".to_string(),
        ),
        _ => (verdict, reason),
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
        reference: reference_name.to_string(),
        other: other_name.to_string(),
        verdict,
        reason,
        similarity,
        kind,
        difference,
        first_divergence,
        token_divergence,
    }
}

/// One endpoint alone (`determinism`): `fail` without a usable answer, `diff` when its own
/// repeats gave different answers, else `same`.
fn alone_verdict(answer: &AnswerResult) -> Verdict {
    let unstable = answer
        .determinism
        .as_ref()
        .is_some_and(|d| d.class == Class::Nondeterministic);
    if answer.error.is_some() {
        Verdict::Fail
    } else if unstable {
        Verdict::Diff
    } else {
        Verdict::Same
    }
}

fn prompt_result(
    prompt: &Prompt,
    names: &[String],
    per_endpoint: Vec<EndpointPrompt>,
) -> PromptResult {
    let pairs: Vec<PairResult> = match per_endpoint.first() {
        Some(reference) => names
            .iter()
            .zip(&per_endpoint)
            .skip(1)
            .map(|(name, other)| pair_result(prompt, (&names[0], reference), (name, other)))
            .collect(),
        None => Vec::new(),
    };
    let verdict = match (
        pairs.iter().map(|p| p.verdict).max(),
        per_endpoint.as_slice(),
    ) {
        (Some(worst), _) => worst,
        (None, [alone]) => alone_verdict(&alone.answer),
        (None, _) => Verdict::Same,
    };
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

/// Clip every text an answer quotes (its own and its repeats'), flagging it `clipped`.
fn quote_answer(quoter: &mut Quoter, a: &mut AnswerResult) {
    let mut any = false;
    for text in [
        &mut a.answer,
        &mut a.extracted,
        &mut a.as_written,
        &mut a.evidence,
        &mut a.error,
    ] {
        any |= quoter.option(text);
    }
    for r in &mut a.repeats {
        any |= quoter.shared(&mut r.answer);
        any |= quoter.shared(&mut r.as_written);
        any |= quoter.option(&mut r.text);
    }
    if let Some(d) = &mut a.determinism {
        any |= quoter.option(&mut d.modal_answer);
        any |= quoter.keys(&mut d.histogram);
    }
    a.clipped |= any;
}
