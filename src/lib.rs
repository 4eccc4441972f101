//! coherence: prove whether two deployments of the same LLM behave like the same model.
//!
//! Data flow: `catalogue` (prompts) → `run` (plan, requests through `endpoint`, journal) →
//! `score` → `analysis` (verdicts) → `report` (Markdown, JSON).

pub mod analysis;
pub mod bench;
pub mod catalogue;
pub mod cli;
mod commands;
pub mod endpoint;
pub mod error;
pub mod report;
pub mod run;
pub mod score;

use clap::Parser;

pub use error::{CliError, Exit};

/// Run one command line; returns the process exit code. Errors are printed to stderr.
pub fn main_with_args(argv: Vec<String>) -> Exit {
    let cli = match cli::Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Coherent
            };
        }
    };
    match run(&cli, argv) {
        Ok(exit) => exit,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit
        }
    }
}

/// Dispatch a parsed command line.
pub fn run(cli: &cli::Cli, argv: Vec<String>) -> Result<Exit, CliError> {
    match &cli.command {
        cli::Command::Compare(args) => commands::compare::compare(args, argv, run::Mode::Compare),
        cli::Command::Determinism(args) => {
            commands::compare::compare(args, argv, run::Mode::Determinism)
        }
        cli::Command::Score(args) => commands::score::score(args),
        cli::Command::Report(args) => commands::score::report(args),
        cli::Command::Prompts { command } => match command {
            cli::PromptsCommand::List(a) => commands::prompts::list(a),
            cli::PromptsCommand::Check(a) => commands::prompts::check(a),
        },
        cli::Command::Bench(args) => commands::bench::bench(args),
        cli::Command::Soak(args) => commands::soak::soak(args),
        cli::Command::Smoke(args) => commands::smoke::smoke(args),
        cli::Command::JsWorker => Ok(if score::js::run_worker() {
            Exit::Coherent
        } else {
            Exit::Usage
        }),
    }
}
