//! The assembly of results: run-wide figures and roll-ups, tool-call faults, deployment
//! fingerprints, the `--fail-on` gate, and the types of results.json.

pub mod fingerprint;
pub(super) mod gate_check;
pub(super) mod results;
pub(super) mod rollup;
pub(super) mod run_figures;
pub mod tool_calls;
