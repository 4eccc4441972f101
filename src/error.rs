//! Exit codes, and the one place where each layer's errors become one.

use std::fmt;

use crate::run::RunError;

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
    /// reached, or the run was interrupted.
    Incomplete = 3,
}

/// The exit-code table shown by `--help`; the README's table says the same.
pub const EXIT_CODES_HELP: &str = "Exit codes: 0 success (no gate failed), 1 a gate failed (--fail-on, \
a wrong smoke reply, a soak with bad replies), 2 usage or configuration error, 3 incomplete or \
interrupted run, or an endpoint that cannot be reached. A closed stdout (`| head`) ends quietly with 0.";

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// An error that ends the command with a specific exit code.
#[derive(Debug)]
pub struct CliError {
    pub exit: Exit,
    pub error: anyhow::Error,
}

impl CliError {
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        CliError {
            exit: Exit::Usage,
            error: error.into(),
        }
    }

    pub fn incomplete(error: impl Into<anyhow::Error>) -> Self {
        CliError {
            exit: Exit::Incomplete,
            error: error.into(),
        }
    }

    /// Whether the error is a closed stdout (the reader went away, as `| head` does): not a
    /// failure of the command, so it ends quietly with exit 0.
    pub fn is_broken_pipe(&self) -> bool {
        self.error.chain().any(|e| {
            e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        })
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
        let exit = match &e {
            RunError::Folder(_) | RunError::Config(_) => Exit::Usage,
            RunError::Endpoint(_) | RunError::Send(_) => Exit::Incomplete,
        };
        CliError {
            exit,
            error: e.into(),
        }
    }
}

impl From<crate::pipeline::PipelineError> for CliError {
    fn from(e: crate::pipeline::PipelineError) -> Self {
        use crate::pipeline::PipelineError;
        match e {
            PipelineError::Input(error) => CliError::usage(error),
            PipelineError::Incomplete(error) => CliError::incomplete(error),
            PipelineError::Run(e) => e.into(),
        }
    }
}

/// Shorthand: turn any error into a usage error (exit 2).
pub trait UsageContext<T> {
    fn usage_err(self) -> Result<T, CliError>;
}

impl<T, E: Into<anyhow::Error>> UsageContext<T> for Result<T, E> {
    fn usage_err(self) -> Result<T, CliError> {
        self.map_err(CliError::usage)
    }
}

impl From<crate::bench::BenchError> for CliError {
    /// The one place a bench or soak failure becomes an exit code: 2 when nothing could be sent
    /// (a usage or configuration problem), 3 when the endpoint could not be resolved or the
    /// measured results could not all be written.
    fn from(e: crate::bench::BenchError) -> Self {
        use crate::bench::BenchError;
        let (exit, error) = match e {
            BenchError::Setup(error) => (Exit::Usage, error),
            BenchError::Endpoint(error) | BenchError::Output(error) => (Exit::Incomplete, error),
        };
        CliError { exit, error }
    }
}
