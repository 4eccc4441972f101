//! One file per subcommand: each wires a validated plan to the library and maps its results to
//! an exit code (errors map through `error::Failure`); stdout is written only through `stdout`.

mod baseline_plan;
pub mod bench;
pub mod bench_plan;
pub mod compare;
mod compare_plan;
pub mod config;
pub mod contract;
pub mod diff;
pub mod distribution;
mod dry_run;
pub(crate) mod flags;
pub mod history;
pub mod issue;
mod load_plan;
pub mod logprobs;
mod long_plan;
pub mod project;
pub mod prompts;
mod saved_run;
pub mod score;
pub mod selftest;
pub mod smoke;
pub mod soak;
pub(crate) mod stdout;
pub mod watch;

/// A multi-threaded runtime for the commands that talk to endpoints (none: a usage failure,
/// nothing was sent).
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, crate::error::CliError> {
    crate::compare::runtime().map_err(crate::error::CliError::usage)
}
