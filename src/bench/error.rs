//! How a bench or soak fails. The exit code each variant ends with is decided once, by the
//! `From<BenchError> for CliError` in `crate::error`.

/// A bench or soak that could not run or could not keep its results.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Nothing was sent: the client, the run folder or its log could not be set up.
    #[error("{0:#}")]
    Setup(anyhow::Error),
    /// The endpoint's model could not be resolved (`GET /models` failed or listed none).
    #[error("{0:#}")]
    Endpoint(anyhow::Error),
    /// Requests were measured, but the journal or the reports could not all be written.
    #[error("{0:#}")]
    Output(anyhow::Error),
}
