//! Stability under load and repeats: the probe phases (batch invariance, cache state, samples)
//! and each endpoint's stability against itself.

pub(super) mod cache_state;
pub(super) mod load;
pub(super) mod overview;
pub(super) mod probe;
pub(super) mod samples;
pub(super) mod under_load;
