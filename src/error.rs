//! Exit codes, and the one place where errors become them: every error the face returns carries
//! a [`Failure`] (what went wrong), and [`Failure::exit`] is the only mapping to an [`Exit`].
//! The exit-code table ([`Exit::meaning`]) is written here once; `--help` is generated from it
//! and a test holds the exit-code table of `docs/src/exit-codes.md` to it.

use std::fmt;

use crate::run::RunError;
use crate::run_folder::{HeldByAnotherProcess, UnsafeLockFile, WriteFailed};

/// The documented process exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The command did what was asked and no gate failed (for `compare`: coherent within the gate).
    Success = 0,
    /// A gate failed: `--fail-on` for compare/determinism/score/report, a wrong smoke reply, a soak
    /// with failed or degenerate replies.
    GateFailed = 1,
    /// Usage or configuration error: bad flag, broken catalogue, unreadable run folder.
    Usage = 2,
    /// The run is incomplete: request failures remain after retries, an endpoint cannot be
    /// reached, an output could not be written, or the run was interrupted.
    Incomplete = 3,
}

impl Exit {
    /// Every exit code, in order.
    pub const ALL: [Exit; 4] = [
        Exit::Success,
        Exit::GateFailed,
        Exit::Usage,
        Exit::Incomplete,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    /// What the code means, for every command: the row of the exit-code table in
    /// `docs/src/exit-codes.md`.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Success => "success: the command did what was asked and no gate failed",
            Exit::GateFailed => {
                "a gate failed: `--fail-on` (compare, determinism, score, report), the negative \
                 control (selftest), a wrong reply (smoke), bad replies (soak), an unplayable \
                 answer (project), a failed probe (contract), a flagged check (watch)"
            }
            Exit::Usage => {
                "usage or configuration error: a bad flag, catalogue, config file or run folder \
                 (the message names the flag, or the file and line)"
            }
            Exit::Incomplete => {
                "incomplete: request failures remain after retries, an endpoint cannot be \
                 reached, an output file cannot be written, or the run was interrupted"
            }
        }
    }
}

/// The closing line of every exit-code table.
pub const CLOSED_STDOUT: &str =
    "A closed stdout (`| head`) skips what is left to print; the exit code is the command's own.";

/// The exit-code table of `--help`, from [`Exit::meaning`]; `specific` replaces a code's
/// general meaning with what it means for one command.
pub fn exit_codes_help(specific: &[(Exit, &str)]) -> String {
    let mut text = String::from("Exit codes:\n");
    for exit in Exit::ALL {
        let meaning = specific
            .iter()
            .find(|(e, _)| *e == exit)
            .map_or(exit.meaning(), |(_, m)| *m);
        text.push_str(&format!("  {}  {meaning}\n", exit.code()));
    }
    text.push_str(CLOSED_STDOUT);
    text
}

/// What went wrong, as far as the exit code is concerned. Call sites say what happened; only
/// [`Failure::exit`] says which code that is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A flag, a config file, a catalogue or the local setup is wrong: nothing could be done.
    Usage,
    /// A run folder named on the command line cannot be read or holds invalid files.
    UnreadableRunFolder,
    /// A report, run file or stdout could not be written: the results are not all out.
    Output,
    /// An endpoint could not be reached or resolved.
    EndpointUnreachable,
    /// Requests failed after their retries, or a phase could not be measured.
    Incomplete,
    /// Ctrl-C or SIGTERM stopped the run.
    Interrupted,
}

impl Failure {
    /// The failure a run-folder error is wherever it arises, whatever the call site said: a
    /// folder another process holds, or whose lock path is not a lock file, is a usage error
    /// (nothing was written), a file that could not be written is an output failure (a full
    /// disk reads the same for every file).
    fn forced_by(error: &anyhow::Error) -> Option<Failure> {
        error.chain().find_map(|e| {
            if e.is::<HeldByAnotherProcess>() || e.is::<UnsafeLockFile>() {
                Some(Failure::Usage)
            } else if e.is::<WriteFailed>() {
                Some(Failure::Output)
            } else {
                e.downcast_ref::<RunError>()
                    .and_then(|run| Failure::forced_by(run.cause()))
            }
        })
    }

    /// The one mapping from a failure to an exit code.
    pub fn exit(self) -> Exit {
        match self {
            Failure::Usage | Failure::UnreadableRunFolder => Exit::Usage,
            Failure::Output
            | Failure::EndpointUnreachable
            | Failure::Incomplete
            | Failure::Interrupted => Exit::Incomplete,
        }
    }
}

/// An error that ends the command; its [`Failure`] decides the exit code.
#[derive(Debug)]
pub struct CliError {
    pub failure: Failure,
    pub error: anyhow::Error,
}

impl CliError {
    /// An error of `failure`, unless it is a run-folder error, whose failure is always the
    /// same ([`Failure::forced_by`]).
    pub fn new(failure: Failure, error: impl Into<anyhow::Error>) -> Self {
        let error = error.into();
        CliError {
            failure: Failure::forced_by(&error).unwrap_or(failure),
            error,
        }
    }

    /// A bad flag, config file or catalogue.
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        CliError::new(Failure::Usage, error)
    }

    /// A run folder that cannot be read.
    pub fn unreadable(error: impl Into<anyhow::Error>) -> Self {
        CliError::new(Failure::UnreadableRunFolder, error)
    }

    /// A file or stdout that cannot be written.
    pub fn output(error: impl Into<anyhow::Error>) -> Self {
        CliError::new(Failure::Output, error)
    }

    /// Requests failed, or a phase could not be measured.
    pub fn incomplete(error: impl Into<anyhow::Error>) -> Self {
        CliError::new(Failure::Incomplete, error)
    }

    /// The exit code of this error.
    pub fn exit(&self) -> Exit {
        self.failure.exit()
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for CliError {}

impl From<RunError> for CliError {
    fn from(e: RunError) -> Self {
        let failure = match &e {
            RunError::Folder(_) | RunError::Config(_) => Failure::Usage,
            RunError::Endpoint(_) => Failure::EndpointUnreachable,
            RunError::Send(_) => Failure::Incomplete,
        };
        CliError::new(failure, e)
    }
}

impl From<crate::bench::BenchError> for CliError {
    /// Nothing could be sent (a usage or configuration problem), the endpoint could not be
    /// resolved, or the measured results could not all be written.
    fn from(e: crate::bench::BenchError) -> Self {
        use crate::bench::BenchError;
        match e {
            BenchError::Setup(error) => CliError::new(Failure::Usage, error),
            BenchError::Endpoint(error) => CliError::new(Failure::EndpointUnreachable, error),
            BenchError::Output(error) => CliError::new(Failure::Output, error),
        }
    }
}

impl From<crate::compare::PipelineError> for CliError {
    fn from(e: crate::compare::PipelineError) -> Self {
        use crate::compare::PipelineError;
        match e {
            PipelineError::Input(error) => CliError::unreadable(error),
            PipelineError::Incomplete(error) => CliError::incomplete(error),
            PipelineError::Run(e) => e.into(),
        }
    }
}

/// Shorthand: turn any error into a usage error ([`Failure::Usage`]).
pub trait UsageContext<T> {
    fn usage_err(self) -> Result<T, CliError>;
}

impl<T, E: Into<anyhow::Error>> UsageContext<T> for Result<T, E> {
    fn usage_err(self) -> Result<T, CliError> {
        self.map_err(CliError::usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exit-code chapter of the book.
    const CHAPTER: &str = include_str!("../docs/src/exit-codes.md");

    /// The exit-code chapter's table, row by row: `| CODE | MEANING |`.
    fn documented_table() -> Vec<(String, String)> {
        let section = CHAPTER
            .strip_prefix("# Exit codes\n")
            .expect("docs/src/exit-codes.md starts with its heading");
        section
            .lines()
            .take_while(|l| !l.starts_with("## "))
            .filter_map(|l| {
                let cells: Vec<&str> = l.trim().trim_matches('|').split(" | ").collect();
                match cells.as_slice() {
                    [code, meaning] if code.trim().parse::<u8>().is_ok() => {
                        Some((code.trim().to_string(), meaning.trim().to_string()))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    #[test]
    fn the_documented_table_is_the_exit_code_table() {
        let want: Vec<(String, String)> = Exit::ALL
            .iter()
            .map(|e| (e.code().to_string(), e.meaning().to_string()))
            .collect();
        assert_eq!(documented_table(), want);
        assert!(CHAPTER.contains(CLOSED_STDOUT));
    }

    #[test]
    fn every_help_text_lists_every_code_once() {
        let mut cmd = crate::cli::command();
        cmd.build();
        let mut helps = vec![cmd.get_after_help().map(|h| h.to_string())];
        helps.extend(
            cmd.get_subcommands()
                .filter(|c| !c.is_hide_set() && c.get_name() != "help")
                .map(|c| c.get_after_help().map(|h| h.to_string())),
        );
        for help in helps {
            let help = help.unwrap_or_default();
            let table = help.split("Exit codes:\n").nth(1).unwrap_or_default();
            let codes: Vec<&str> = table
                .lines()
                .filter_map(|l| l.trim_start().split("  ").next())
                .filter(|c| c.parse::<u8>().is_ok())
                .collect();
            assert_eq!(codes, ["0", "1", "2", "3"], "{help}");
            assert!(help.ends_with(CLOSED_STDOUT), "{help}");
        }
    }

    #[test]
    fn run_folder_errors_end_the_same_whatever_the_call_site_said() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where results.json goes: the write fails, as on a full disk.
        std::fs::create_dir(dir.path().join("results.json")).unwrap();
        let failed_write = || {
            crate::run_folder::write_atomic(&dir.path().join("results.json"), b"{}").unwrap_err()
        };
        assert_eq!(CliError::usage(failed_write()).exit(), Exit::Incomplete);
        let setup = CliError::from(RunError::Folder(failed_write()));
        assert_eq!(setup.exit(), Exit::Incomplete);
        assert!(setup.to_string().contains("results.json"), "{setup}");
        let busy = HeldByAnotherProcess {
            what: "the run folder",
            path: dir.path().to_path_buf(),
            pid: Some(7),
        };
        assert_eq!(CliError::output(busy).exit(), Exit::Usage);
    }

    #[test]
    fn failures_map_to_the_documented_codes() {
        assert_eq!(Failure::Usage.exit(), Exit::Usage);
        assert_eq!(Failure::UnreadableRunFolder.exit(), Exit::Usage);
        for f in [
            Failure::Output,
            Failure::EndpointUnreachable,
            Failure::Incomplete,
            Failure::Interrupted,
        ] {
            assert_eq!(f.exit(), Exit::Incomplete, "{f:?}");
        }
    }
}
