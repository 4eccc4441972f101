//! coherence: prove whether two deployments of the same LLM behave like the same model.
//!
//! See `ARCHITECTURE.md` at the repository root for the layers and the data flow.

pub mod analysis;
pub mod bench;
pub(crate) mod builtin;
pub mod catalogue;
pub(crate) mod cli;
mod commands;
pub(crate) mod compare;
pub(crate) mod contract;
pub mod distribution;
pub(crate) mod doc;
pub mod endpoint;
pub(crate) mod engine;
pub mod error;
pub mod gate;
pub mod history;
pub(crate) mod logprobs;
pub(crate) mod probes;
pub mod project;
pub(crate) mod report;
pub mod run;
pub mod run_folder;
pub mod score;
pub(crate) mod text;
pub(crate) mod watch;

use clap::FromArgMatches;

pub use error::{CliError, Exit};

/// Run one command line; returns the process exit code. Errors are printed to stderr.
pub fn main_with_args(argv: Vec<String>) -> Exit {
    let parsed = cli::command()
        .try_get_matches_from(&argv)
        .and_then(|m| cli::Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Success
            };
        }
    };
    match run(&cli, argv) {
        Ok(exit) => exit,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit()
        }
    }
}

/// Dispatch a parsed command line.
pub fn run(cli: &cli::Cli, argv: Vec<String>) -> Result<Exit, CliError> {
    match &cli.command {
        cli::Command::Compare(args) => {
            commands::compare::compare(args, argv, commands::compare::Mode::Compare)
        }
        cli::Command::Determinism(args) => {
            commands::compare::compare(args, argv, commands::compare::Mode::Determinism)
        }
        cli::Command::Selftest(args) => commands::selftest::selftest(args, argv),
        cli::Command::Score(args) => commands::score::score(args),
        cli::Command::Report(args) => match &args.issue {
            Some(which) => commands::issue::issue(args, which),
            None => commands::score::report(args),
        },
        cli::Command::Diff(args) => commands::diff::diff(args, argv),
        cli::Command::Watch(args) => commands::watch::watch(args, argv),
        cli::Command::Prompts { command } => match command {
            cli::PromptsCommand::List(a) => commands::prompts::list(a),
            cli::PromptsCommand::Check(a) => commands::prompts::check(a),
            cli::PromptsCommand::Export(a) => commands::prompts::export(a),
        },
        cli::Command::Bench(args) => commands::bench::bench(args),
        cli::Command::Soak(args) => commands::soak::soak(args),
        cli::Command::Logprobs(args) => commands::logprobs::logprobs(args),
        cli::Command::Smoke(args) => commands::smoke::smoke(args),
        cli::Command::Contract(args) => commands::contract::contract(args),
        cli::Command::Project(args) => commands::project::project(args, argv),
        cli::Command::Distribution(args) => commands::distribution::distribution(args, argv),
        cli::Command::History(args) => commands::history::history(args),
        cli::Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut cli::command(), "coherence", &mut script);
            commands::stdout::print(&String::from_utf8_lossy(&script))?;
            Ok(Exit::Success)
        }
        cli::Command::JsWorker => Ok(if score::js::run_worker() {
            Exit::Success
        } else {
            Exit::Usage
        }),
    }
}
