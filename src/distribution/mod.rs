//! `coherence distribution`: whether two endpoints sample the same distribution at a served
//! temperature, by a kernel two-sample test (MMD) on N samples per prompt and endpoint.
//!
//! `kernel` and `mmd` are the statistic (pure).

pub mod kernel;
pub mod mmd;
