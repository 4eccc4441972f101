//! Performance of one endpoint: `bench` (warm-up, decode, concurrency sweep, prefill,
//! speculative-decoding acceptance), `soak` (mixed agent-shaped traffic for a fixed time) and
//! `smoke` (is it up, and does it answer exactly?). Every request is `stream: false`: under
//! speculative decoding streamed deltas count steps, not tokens, so rates come from the server's
//! `usage` over wall time. Shares only the endpoint client with `run`.

pub mod baseline;
pub mod concurrency;
pub mod decode;
pub mod degenerate;
pub mod error;
pub mod log;
pub mod metrics;
pub mod plan;
pub mod prefill;
mod progress;
pub mod prompts;
pub mod render;
pub mod report;
pub mod round;
pub mod runner;
pub mod sample;
pub mod session;
pub mod sizes;
pub mod smoke;
pub mod soak;
pub mod soak_report;
pub mod stats;
pub mod target;
pub mod traffic;
pub mod warmup;

pub use error::BenchError;
pub use plan::{BenchPlan, SmokePlan, SoakPlan};
pub use report::BenchReport;
pub use runner::run_bench;
pub use soak::{rerender, run_soak};
pub use soak_report::SoakReport;
