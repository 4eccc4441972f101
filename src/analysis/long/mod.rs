//! Long context: the long suite's items by length and depth, and token agreement along them.

pub mod long_context;
pub(super) mod long_figures;
pub(super) mod long_tokens;
