//! Each prompt's answers: every usable answer scored once, its repeats summarised, where two
//! answers part (by character and by token), the per-prompt verdict and its kind, and the
//! per-prompt types of results.json; the paired statistics they rest on.

pub(super) mod determinism;
pub(super) mod divergence;
pub(super) mod figures;
pub(super) mod inputs;
pub(super) mod kind;
pub(super) mod noise;
pub(super) mod per_prompt;
pub mod quote;
pub(super) mod similarity;
pub(crate) mod stats;
pub(super) mod token_divergence;
pub(super) mod verdict;
