//! The types of results.json `long_context` (computed in `long_context.rs`): per endpoint,
//! length and depth the needle accuracy; per pair and length the paired flips; with `--logprobs`
//! the passages' token-level figures by position (`long_tokens.rs`).

use serde::{Deserialize, Serialize};

use super::long_tokens::LongTokens;
use crate::analysis::answers::stats::McNemarCounts;
use crate::analysis::answers::stats::Proportion;

/// The long suite's figures (empty when the run sent no long item).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LongContext {
    pub cells: Vec<LongCell>,
    pub pairs: Vec<LongPair>,
    /// With `--logprobs`: the passages' token-level figures by position (`long_tokens.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_agreement: Option<LongTokens>,
}

/// One endpoint's answers at one planned length and depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongCell {
    pub endpoint: String,
    /// The planned prompt length of the bucket, in tokens.
    pub context_tokens: u32,
    /// Needle depth in percent.
    pub depth: u8,
    /// Graded items (answered and scored).
    pub items: u64,
    pub correct: u64,
    /// `correct / items` with its Wilson 95% interval.
    pub accuracy: Proportion,
    /// Mean `usage.prompt_tokens` the endpoint reported for the cell's items.
    pub mean_prompt_tokens: Option<f64>,
}

/// One pair over the long items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongPair {
    pub reference: String,
    pub other: String,
    pub buckets: Vec<LongBucket>,
    /// The smallest measured prompt length at which the two answers differ in correctness.
    pub first_difference_tokens: Option<u64>,
    /// The largest measured prompt length among the paired items.
    pub max_prompt_tokens: Option<u64>,
    /// The shortest length whose difference is significant (Holm-adjusted p < 0.05).
    pub different_from_tokens: Option<u32>,
    /// One sentence: where the pair parts, or "no difference up to N tokens".
    pub statement: String,
}

/// A pair's paired counts at one planned length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongBucket {
    pub context_tokens: u32,
    #[serde(flatten)]
    pub counts: McNemarCounts,
    /// Holm-adjusted over the pair's lengths.
    pub holm_p_value: f64,
    pub different: bool,
}

impl LongContext {
    /// Pairs whose long items differ significantly at some length (gate metric `long_different`).
    pub fn different_pairs(&self) -> usize {
        self.pairs
            .iter()
            .filter(|p| p.different_from_tokens.is_some())
            .count()
    }
}
