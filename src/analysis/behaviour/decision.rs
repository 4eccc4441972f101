//! The anytime-valid decision of each endpoint pair over the generated items
//! (`sequential.rs`), taken in item order: the items are drawn independently by the seeded
//! generator, so the confidence sequence's guarantee holds however often the run looks, which is
//! what lets `compare --until-decided` stop as soon as a verdict is reached.

use serde::{Deserialize, Serialize};

use super::sequential::{
    GradedPair, PairedDifferenceSequence, SequentialDecision, SequentialVerdict,
};
use crate::analysis::answers::figures::{Parity, PromptResult};
use crate::run::Manifest;
use crate::run_folder::RunStatus;

/// The error rate each sequential verdict is held to.
pub const ALPHA: f64 = 0.05;

/// One pair's sequential decision over the generated items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSequential {
    pub reference: String,
    pub other: String,
    #[serde(flatten)]
    pub decision: SequentialDecision,
    /// `--until-decided`: the decision at each look the run took, on the items sent by then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<SequentialLook>,
}

/// The decision of one pair at one look of `--until-decided`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialLook {
    /// Generated items sent by this look.
    pub generated_items: usize,
    pub graded_items: u64,
    pub verdict: SequentialVerdict,
    pub difference_points: f64,
    pub lower_points: f64,
    pub upper_points: f64,
    pub equivalence_lower_points: f64,
    pub equivalence_upper_points: f64,
}

/// Each (reference, other) pair's decision over the generated items (those `generated` says are)
/// both answered with ground truth, in the order the items were generated, and at each of
/// `looks` (the generated items sent at each look of `--until-decided`); none when the run has
/// no generated item.
pub fn decide_pairs(
    prompts: &[PromptResult],
    generated: &dyn Fn(&str) -> bool,
    names: &[String],
    margin_points: f64,
    looks: &[usize],
) -> Vec<PairSequential> {
    let Some((reference, others)) = names.split_first() else {
        return Vec::new();
    };
    let generated: Vec<&PromptResult> = prompts.iter().filter(|p| generated(&p.id)).collect();
    if generated.is_empty() {
        return Vec::new();
    }
    others
        .iter()
        .map(|other| {
            // Each graded item with its position among the generated items.
            let graded: Vec<(usize, GradedPair)> = generated
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let a = p.answers.get(reference)?.correct?;
                    let b = p.answers.get(other)?.correct?;
                    let pair = GradedPair {
                        reference_correct: a,
                        other_correct: b,
                    };
                    Some((i, pair))
                })
                .collect();
            let decide = |sent: usize| {
                let before = graded.iter().filter(|(i, _)| *i < sent).map(|(_, g)| *g);
                PairedDifferenceSequence::of(ALPHA, before).decide(margin_points)
            };
            PairSequential {
                reference: reference.clone(),
                other: other.clone(),
                decision: decide(usize::MAX),
                looks: looks
                    .iter()
                    .map(|&sent| SequentialLook::of(sent, decide(sent)))
                    .collect(),
            }
        })
        .collect()
}

impl SequentialLook {
    fn of(generated_items: usize, d: SequentialDecision) -> Self {
        SequentialLook {
            generated_items,
            graded_items: d.graded_items,
            verdict: d.verdict,
            difference_points: d.difference_points,
            lower_points: d.lower_points,
            upper_points: d.upper_points,
            equivalence_lower_points: d.equivalence_lower_points,
            equivalence_upper_points: d.equivalence_upper_points,
        }
    }
}

/// How a `--until-decided` run went: its rule, how many looks it took and why it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntilDecided {
    pub round_items: usize,
    pub max_items: usize,
    pub looks: usize,
    pub stopped_because: String,
}

/// The rounds of `manifest`'s `--until-decided` run (None for any other run), from its pairs'
/// decisions, their prompt-token parity and whether the run is complete.
pub fn until_decided(
    manifest: &Manifest,
    generated: &dyn Fn(&str) -> bool,
    sequential: &[PairSequential],
    parity: &[Parity],
    complete: bool,
) -> Option<UntilDecided> {
    let rule = manifest.until_decided?;
    // A run made before looks were recorded: the generated items its scope holds.
    let sent = manifest
        .looks
        .last()
        .copied()
        .unwrap_or_else(|| manifest.prompts.iter().filter(|id| generated(id)).count());
    let other_tokens = |s: &PairSequential| {
        parity.iter().any(|p| {
            p.reference == s.reference && p.other == s.other && p.prompt_tokens_mismatches > 0
        })
    };
    // The verdict at the last look (the run's own for one made before looks were recorded).
    let last = |s: &PairSequential| Some(s.looks.last().map_or(s.decision.verdict, |l| l.verdict));
    let stopped_because = if manifest.header.status == RunStatus::Interrupted {
        match manifest.looks.last() {
            Some(n) => format!("interrupted while sending the round after the look at {n} generated items; --resume goes on from there"),
            None => "interrupted while sending; --resume goes on from there".to_string(),
        }
    } else if !complete {
        format!("stopped after {sent} generated items: a request failed or an answer is missing (see the errors); --resume sends them again")
    } else if !sequential.is_empty()
        && sequential
            .iter()
            .all(|s| last(s).is_some_and(|v| v != SequentialVerdict::Undecided))
    {
        format!("every pair decided after {sent} generated items")
    } else if sequential
        .iter()
        .all(|s| last(s) != Some(SequentialVerdict::Undecided) || other_tokens(s))
    {
        format!("stopped after {sent} generated items: the endpoints count other prompt tokens for the same prompts (another tokenizer or chat template), which more items cannot undo")
    } else if sent >= rule.max_items {
        format!("reached the cap of {} generated items (--max-items) undecided; a larger --max-items, or a wider --margin, would decide", rule.max_items)
    } else {
        format!("stopped after {sent} generated items undecided")
    };
    Some(UntilDecided {
        round_items: rule.round_items,
        max_items: rule.max_items,
        looks: manifest.looks.len(),
        stopped_because,
    })
}
