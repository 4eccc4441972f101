//! Writing to stdout without panicking and without changing the outcome: once the reader has
//! gone (`coherence compare … | head -0`, a closed pipe), what is left to print is skipped and
//! the command ends with its own exit code, so a failed gate (1) or an incomplete run (3) is
//! not turned into a success by a pipe. What goes to a terminal has its Markdown tables drawn
//! aligned to the terminal's width; a pipe or a file gets the Markdown as written.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::doc::{tables_for_terminal, terminal_width};
use crate::error::CliError;

/// Set when a write found stdout closed: later prints are skipped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Write `text` (Markdown, JSON or plain lines) to stdout and flush it; on a terminal, its tables
/// aligned. A closed stdout is not an error (the text is dropped); any other write error is.
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
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other.map_err(CliError::output),
    }
}
