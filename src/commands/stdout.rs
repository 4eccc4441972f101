//! Writing to stdout without panicking: a closed pipe (`coherence prompts list | head -1`) comes
//! back as an error that the face turns into a quiet exit 0, as ripgrep does.

use std::io::Write;

use crate::error::CliError;

/// Write `text` to stdout and flush it.
pub fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::output)
}
