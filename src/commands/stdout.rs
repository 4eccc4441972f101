//! Writing to stdout without panicking: a closed pipe (`coherence prompts list | head -1`) comes
//! back as an error that the face turns into a quiet exit 0, as ripgrep does. What goes to a
//! terminal has its Markdown tables drawn aligned to the terminal's width; a pipe or a file gets
//! the Markdown as written.

use std::io::Write;

use crate::doc::{tables_for_terminal, terminal_width};
use crate::error::CliError;

/// Write `text` (Markdown, JSON or plain lines) to stdout and flush it; on a terminal, its tables
/// aligned.
pub fn print(text: &str) -> Result<(), CliError> {
    match terminal_width() {
        Some(width) => write(&tables_for_terminal(text, width)),
        None => write(text),
    }
}

/// Write `text` to stdout as it is, terminal or not: Markdown to be copied elsewhere (an issue
/// report).
pub fn print_verbatim(text: &str) -> Result<(), CliError> {
    write(text)
}

fn write(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::output)
}
