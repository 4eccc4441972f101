//! Running token-level evidence against live endpoints: detect each endpoint's mode, check its
//! self-consistency (which fixes its position offset), teacher-force every passage within the
//! concurrency limit, and compare each endpoint's tokens with the reference's; and the names of
//! the files `--out DIR` writes the evidence to.

use std::path::Path;

use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};

use super::align::{predicted, span_of, Predicted};
use super::consistency::{self, Alignment};
use super::corpus::Passage;
use super::metrics::{compare_texts, summary_of, Summary, TokenFigures};
use super::mode::{self, Mode};
use crate::run::Target;
use crate::run_folder::{RunFolder, RunKind};

/// Prompts whose greedy completions the self-consistency check re-scores.
pub const SELF_CHECK_PROMPTS: &[&str] = &[
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    "The three primary colours are",
];

#[derive(Debug, Clone)]
pub struct LogprobsSettings {
    pub top_k: u32,
    /// Requests in flight per endpoint.
    pub concurrency: usize,
    /// Tokens generated per self-consistency prompt.
    pub self_check_tokens: u32,
    /// The prompts the self-consistency check completes and re-scores, rendered as the scored
    /// texts are (a server's offset can depend on how a text starts, e.g. with its BOS token).
    pub self_check_prompts: Vec<String>,
}

impl LogprobsSettings {
    /// The default check prompts, as plain text.
    pub fn plain_self_check() -> Vec<String> {
        SELF_CHECK_PROMPTS.iter().map(|p| p.to_string()).collect()
    }
}

/// What was established about one endpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndpointInfo {
    pub name: String,
    pub model: String,
    /// What the figures were established for: `plain` text, or `chat` prompts rendered with the
    /// chat template (absent: plain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// The prompt-logprobs mode used, `null` when the server supports none.
    pub mode: Option<Mode>,
    /// The position offset applied to its prompt logprobs (`null`: unknown, nothing computed).
    pub offset: Option<usize>,
    /// Whether figures are computed from this endpoint.
    pub usable: bool,
    pub notes: Vec<String>,
}

/// The self-consistency result of one endpoint, over every check prompt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SelfConsistency {
    pub endpoint: String,
    pub tokens: usize,
    /// Largest |decode − prefill| logprob after alignment (nats), `null` when none was aligned.
    pub max_abs_diff: Option<f64>,
    pub mean_abs_diff: Option<f64>,
    pub offset: Option<usize>,
    pub alignment: Alignment,
    pub prompts_checked: usize,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GroupFigures {
    pub category: String,
    #[serde(flatten)]
    pub summary: Summary,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PassageFigures {
    pub id: String,
    pub category: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// One endpoint's teacher-forced figures against the reference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairFigures {
    pub reference: String,
    pub other: String,
    #[serde(flatten)]
    pub summary: Summary,
    pub passages_compared: usize,
    pub categories: Vec<GroupFigures>,
    pub passages: Vec<PassageFigures>,
    pub notes: Vec<String>,
}

impl PairFigures {
    /// Up to `n` items with the largest mean KLD, largest first.
    pub fn worst(&self, n: usize) -> Vec<&PassageFigures> {
        let mut worst: Vec<&PassageFigures> = self
            .passages
            .iter()
            .filter(|x| x.summary.mean_kld.is_some())
            .collect();
        worst.sort_by(|a, b| {
            b.summary
                .mean_kld
                .unwrap_or(0.0)
                .total_cmp(&a.summary.mean_kld.unwrap_or(0.0))
        });
        worst.truncate(n);
        worst
    }
}

/// A passage that could not be compared, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    pub endpoint: String,
    pub passage: Option<String>,
    /// `request` (the server failed or sent malformed logprobs), `text_mismatch` (its tokens do
    /// not spell the requested text), `tokenization` (its tokens differ from the reference's).
    pub kind: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Evidence {
    pub top_k: u32,
    pub passages: usize,
    pub endpoints: Vec<EndpointInfo>,
    pub pairs: Vec<PairFigures>,
    pub self_consistency: Vec<SelfConsistency>,
    pub problems: Vec<Problem>,
}

impl Evidence {
    /// Whether something could not be measured: a request failed, or an endpoint is unusable.
    pub fn incomplete(&self) -> bool {
        self.endpoints.iter().any(|e| !e.usable)
            || self.problems.iter().any(|p| p.kind == "request")
    }
}

/// The `coherence logprobs --out DIR` folder: the evidence as JSON and as Markdown.
const KIND: RunKind = RunKind {
    name: "logprobs run",
    manifest: EVIDENCE_JSON,
    manifest_what: "logprobs evidence",
    manifest_ends_in_newline: true,
};
/// The [`Evidence`] as JSON (also printed by `--json`).
pub const EVIDENCE_JSON: &str = "logprobs.json";
/// The Markdown report.
pub const EVIDENCE_MD: &str = "logprobs.md";

/// The logprobs folder `dir`.
pub fn folder(dir: &Path) -> RunFolder {
    RunFolder::new(dir, &KIND)
}

/// The problem of a text `other` split into other tokens than `reference` did (`at`: where, as
/// [`compare_texts`] says): it is not compared.
pub fn tokenization_problem(reference: &str, other: &str, passage: &str, at: &str) -> Problem {
    Problem {
        endpoint: other.to_string(),
        passage: Some(passage.to_string()),
        kind: "tokenization".into(),
        reason: format!("tokens differ from {reference}'s {at}; not compared"),
    }
}

/// Complete `prompt` greedily and re-score prompt + completion: the check, or what stopped it.
async fn check_one(
    target: &Target,
    mode: Mode,
    s: &LogprobsSettings,
    prompt: &str,
) -> Result<consistency::Check, String> {
    let decoded = mode::decode(
        &target.client,
        &target.model,
        prompt,
        s.self_check_tokens,
        s.top_k,
    )
    .await
    .map_err(|e| format!("decode {prompt:?}: {e}"))?;
    let generated: String = decoded.iter().map(|p| p.token.as_str()).collect();
    let text = format!("{prompt}{generated}");
    let rescored = mode::score(&target.client, &target.model, mode, &text, s.top_k)
        .await
        .map_err(|e| format!("re-score {prompt:?}: {e}"))?;
    consistency::check(&decoded, &rescored).map_err(|e| format!("{prompt:?}: {e}"))
}

async fn self_check(target: &Target, mode: Mode, s: &LogprobsSettings) -> SelfConsistency {
    // The check prompts at once, within the concurrency limit.
    let outcomes: Vec<Result<consistency::Check, String>> = stream::iter(&s.self_check_prompts)
        .map(|p| check_one(target, mode, s, p))
        .buffered(s.concurrency.max(1))
        .collect()
        .await;
    let mut checks = Vec::new();
    let mut notes = Vec::new();
    for o in outcomes {
        match o {
            Ok(c) => checks.push(c),
            Err(e) => notes.push(e),
        }
    }
    let offsets: Vec<Option<usize>> = checks.iter().map(|c| c.offset).collect();
    let agreed = match offsets.first() {
        Some(Some(o)) if offsets.iter().all(|x| *x == Some(*o)) => Some(*o),
        _ => None,
    };
    if agreed.is_none() && !checks.is_empty() {
        notes.push(format!(
            "the check prompts disagree on the offset or leave it open: {offsets:?}"
        ));
    }
    let tokens: usize = checks.iter().map(|c| c.tokens).sum();
    let (max, mean) = if agreed.is_some() && tokens > 0 {
        let max = checks
            .iter()
            .filter_map(|c| c.max_abs_diff)
            .fold(0.0, f64::max);
        let sum: f64 = checks
            .iter()
            .filter_map(|c| c.mean_abs_diff.map(|m| m * c.tokens as f64))
            .sum();
        (Some(max), Some(sum / tokens as f64))
    } else {
        (None, None)
    };
    SelfConsistency {
        endpoint: target.name.clone(),
        tokens: if agreed.is_some() { tokens } else { 0 },
        max_abs_diff: max,
        mean_abs_diff: mean,
        offset: agreed,
        alignment: match agreed {
            Some(0) => Alignment::Aligned,
            Some(_) => Alignment::Offset,
            None => Alignment::Undetermined,
        },
        prompts_checked: checks.len(),
        notes,
    }
}

/// Detect the mode and fix the offset of one endpoint.
pub async fn establish(
    target: &Target,
    s: &LogprobsSettings,
) -> (EndpointInfo, Option<SelfConsistency>) {
    let detection = mode::detect(&target.client, &target.model, s.top_k).await;
    let mut info = EndpointInfo {
        name: target.name.clone(),
        model: target.model.clone(),
        condition: None,
        mode: detection.mode,
        offset: None,
        usable: false,
        notes: detection.notes,
    };
    let Some(mode) = detection.mode else {
        info.notes.push(
            "supports neither completions echo nor prompt_logprobs: no token-level figures for this endpoint \
             (llama-cpp-python needs --logits_all true)"
                .into(),
        );
        return (info, None);
    };
    let sc = self_check(target, mode, s).await;
    match (sc.offset, mode) {
        (Some(0), _) => info.notes.push(format!("{}: aligned (checked against decode)", mode.label())),
        (Some(o), _) => info.notes.push(format!(
            "{}: position i carries the distribution of token i + {o} (checked against decode); compensated by reading token i from position i − {o}",
            mode.label()
        )),
        (None, Mode::PromptLogprobs) => info.notes.push(
            "prompt_logprobs: offset not checked against decode; taken as aligned, as vLLM defines it".into(),
        ),
        (None, Mode::Echo) => info.notes.push(
            "completions echo: the self-consistency check could not establish the position offset, so no figures are computed from it (never from possibly misaligned tokens)".into(),
        ),
    }
    info.offset = sc.offset.or((mode == Mode::PromptLogprobs).then_some(0));
    info.usable = info.offset.is_some();
    (info, Some(sc))
}

/// One text's scored tokens, or what kind of problem stopped it and why.
pub type Scored = Result<Vec<Predicted>, (&'static str, String)>;

async fn score_all(
    target: &Target,
    mode: Mode,
    offset: usize,
    passages: &[Passage],
    s: &LogprobsSettings,
) -> Vec<Scored> {
    stream::iter(passages.iter())
        .map(|p| async move {
            let positions = mode::score(&target.client, &target.model, mode, &p.text, s.top_k)
                .await
                .map_err(|e| ("request", e))?;
            let span =
                span_of(&positions, &p.text).map_err(|m| ("text_mismatch", m.to_string()))?;
            Ok(predicted(&positions, span, offset))
        })
        .buffered(s.concurrency.max(1))
        .collect()
        .await
}

/// Run everything against `targets` (the first is the reference) on `passages`.
pub async fn run(targets: &[Target], passages: &[Passage], s: &LogprobsSettings) -> Evidence {
    let established = futures::future::join_all(targets.iter().map(|t| establish(t, s))).await;
    let scored = futures::future::join_all(targets.iter().zip(&established).map(
        |(t, (info, _))| async move {
            match (info.mode, info.offset, info.usable) {
                (Some(mode), Some(offset), true) => {
                    Some(score_all(t, mode, offset, passages, s).await)
                }
                _ => None,
            }
        },
    ))
    .await;
    let mut problems = Vec::new();
    for (t, results) in targets.iter().zip(&scored) {
        for (p, r) in passages.iter().zip(results.iter().flatten()) {
            if let Err((kind, reason)) = r {
                problems.push(Problem {
                    endpoint: t.name.clone(),
                    passage: Some(p.id.clone()),
                    kind: kind.to_string(),
                    reason: reason.clone(),
                });
            }
        }
    }
    let mut pairs = Vec::new();
    if let Some(reference) = targets.first() {
        for (i, other) in targets.iter().enumerate().skip(1) {
            pairs.push(pair(
                &reference.name,
                &other.name,
                passages,
                scored[0].as_deref(),
                scored[i].as_deref(),
                &mut problems,
            ));
        }
    }
    let (endpoints, self_consistency) = established.into_iter().unzip::<_, _, Vec<_>, Vec<_>>();
    Evidence {
        top_k: s.top_k,
        passages: passages.len(),
        endpoints,
        pairs,
        self_consistency: self_consistency.into_iter().flatten().collect(),
        problems,
    }
}

/// Compare `other`'s scored texts with `reference`'s, text by text (`None`: an endpoint of the
/// pair has no usable prompt logprobs); texts whose tokens differ go to `problems`.
pub fn pair(
    reference: &str,
    other: &str,
    passages: &[Passage],
    ref_scored: Option<&[Scored]>,
    other_scored: Option<&[Scored]>,
    problems: &mut Vec<Problem>,
) -> PairFigures {
    let mut out = PairFigures {
        reference: reference.to_string(),
        other: other.to_string(),
        summary: Summary::default(),
        passages_compared: 0,
        categories: Vec::new(),
        passages: Vec::new(),
        notes: Vec::new(),
    };
    let (Some(rs), Some(os)) = (ref_scored, other_scored) else {
        out.notes
            .push("not compared: an endpoint of the pair has no usable prompt logprobs".into());
        return out;
    };
    let mut all: Vec<TokenFigures> = Vec::new();
    let mut by_category: Vec<(String, Vec<TokenFigures>)> = Vec::new();
    for ((p, r), o) in passages.iter().zip(rs).zip(os) {
        let (Ok(r), Ok(o)) = (r, o) else { continue };
        let figures: Vec<TokenFigures> = match compare_texts(r, o) {
            Ok(f) => f.into_iter().flatten().collect(),
            Err(at) => {
                problems.push(tokenization_problem(reference, other, &p.id, &at));
                continue;
            }
        };
        out.passages.push(PassageFigures {
            id: p.id.clone(),
            category: p.category.clone(),
            summary: summary_of(&figures),
        });
        out.passages_compared += 1;
        match by_category.iter_mut().find(|(c, _)| *c == p.category) {
            Some((_, v)) => v.extend_from_slice(&figures),
            None => by_category.push((p.category.clone(), figures.clone())),
        }
        all.extend(figures);
    }
    out.summary = summary_of(&all);
    out.categories = by_category
        .into_iter()
        .map(|(category, f)| GroupFigures {
            category,
            summary: summary_of(&f),
        })
        .collect();
    out
}
