//! Performance of endpoints: `bench` (warm-up, decode, concurrency sweep, prefill,
//! speculative-decoding acceptance; several endpoints one after the
//! other, side by side), `soak` (mixed agent-shaped traffic for a fixed time) and
//! `smoke` (is it up, and does it answer exactly?). Every request is `stream: false`: under
//! speculative decoding streamed deltas count steps, not tokens, so rates come from the server's
//! `usage` over wall time.
//!
//! Takes plans (built from the flags by `commands`), never flags, and returns [`BenchError`],
//! never an exit code. From `run` it borrows the model resolution (`resolve_targets`,
//! `PlannedEndpoint`, `Target`); from `run_folder` the run folder (`RunFolder`, whose file names
//! `schema` and `soak_report` keep); from `engine` the request engine, the Ctrl-C/SIGTERM watch
//! and the progress reporter.
//!
//! Imports run one way, bottom up: `stats`, `arrivals`, `sizes`, `sample`, `prompts`, `degenerate`,
//! `metrics`, `error` → `target`, `round`, `baseline`, `traffic` → `plan` → `session` →
//! the phases `warmup`/`decode`/`concurrency`/`prefill` → the schemas `schema`/`soak_report`
//! (with their folders' file names) → `render` → the orchestration `runner` and `soak`. `smoke` needs
//! only `prompts`, `sample` and `stats`.

pub mod arrivals;
pub mod baseline;
pub mod concurrency;
pub mod decode;
pub mod degenerate;
pub mod error;
pub mod metrics;
pub mod plan;
pub mod prefill;
pub mod prompts;
pub mod render;
pub mod round;
pub mod runner;
pub mod sample;
pub mod schema;
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
pub use plan::{BenchPlan, BenchSet, SmokePlan, SoakPlan};
pub use runner::run_benches;

pub use soak::{rerender, run_soak};
pub use soak_report::SoakReport;
