//! The anytime-valid decision of each endpoint pair over the generated items
//! (`sequential.rs`), taken in item order: the items are drawn independently by the seeded
//! generator, so the confidence sequence's guarantee holds however often the run looks, which is
//! what lets `compare --until-decided` stop as soon as a verdict is reached.

use serde::{Deserialize, Serialize};

use super::results::PromptResult;
use super::sequential::{GradedPair, PairedDifferenceSequence, SequentialDecision};
use crate::catalogue::generator::is_generated;

/// The error rate each sequential verdict is held to.
pub const ALPHA: f64 = 0.05;

/// One pair's sequential decision over the generated items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSequential {
    pub reference: String,
    pub other: String,
    #[serde(flatten)]
    pub decision: SequentialDecision,
}

/// Each (reference, other) pair's decision over the generated items both answered with ground
/// truth, in the order the items were generated; none when the run has no generated item.
pub fn decide_pairs(
    prompts: &[PromptResult],
    names: &[String],
    margin_points: f64,
) -> Vec<PairSequential> {
    let Some((reference, others)) = names.split_first() else {
        return Vec::new();
    };
    let generated: Vec<&PromptResult> = prompts.iter().filter(|p| is_generated(&p.id)).collect();
    if generated.is_empty() {
        return Vec::new();
    }
    others
        .iter()
        .map(|other| {
            let graded = generated.iter().filter_map(|p| {
                let a = p.answers.get(reference)?.correct?;
                let b = p.answers.get(other)?.correct?;
                Some(GradedPair {
                    reference_correct: a,
                    other_correct: b,
                })
            });
            PairSequential {
                reference: reference.clone(),
                other: other.clone(),
                decision: PairedDifferenceSequence::of(ALPHA, graded).decide(margin_points),
            }
        })
        .collect()
}
