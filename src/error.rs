//! Exit codes and the error type that carries one to `main`.

use std::fmt;

/// The documented process exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Coherent within the thresholds.
    Coherent = 0,
    /// The divergence gate failed (for example a `diff` verdict).
    Diverged = 1,
    /// Usage or configuration error: bad flag, broken catalogue, unreadable run folder.
    Usage = 2,
    /// The run is incomplete: request failures remain after retries, or it was interrupted.
    Incomplete = 3,
}

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
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for CliError {}

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
