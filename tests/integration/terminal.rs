//! Terminal output: on a terminal (a pseudo-terminal of a set width here) `prompts list` draws
//! aligned tables that fit the width; through a pipe it prints the Markdown it always printed.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use crate::common::*;

/// `coherence ARGS` with stdout on a pseudo-terminal `columns` wide, and what it printed there
/// (None where the machine has no pseudo-terminals to give).
fn on_terminal(args: &[&str], columns: u16) -> Option<String> {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 50,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two new descriptors into the integers given; the name and terminal
    // settings are not asked for (null), the window size is read from a live value.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if opened != 0 {
        return None;
    }
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    let (master, slave) = unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut child = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The child holds the only slave descriptor now: reading ends (EIO) when it exits.
    let mut out = Vec::new();
    let mut master = master;
    let _ = master.read_to_end(&mut out);
    assert!(child.wait().unwrap().success());
    Some(String::from_utf8_lossy(&out).replace("\r\n", "\n"))
}

#[test]
fn prompts_list_draws_aligned_tables_on_a_terminal_and_markdown_into_a_pipe() {
    let Some(shown) = on_terminal(&["prompts", "list"], 100) else {
        eprintln!("no pseudo-terminal on this machine: the terminal half is not checked");
        return;
    };
    let table: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with(['┌', '│', '├', '└']))
        .collect();
    assert!(
        table.len() > 100,
        "a drawn table, one row per prompt: {shown}"
    );
    assert!(
        table
            .iter()
            .any(|l| l.starts_with("│ id") && l.contains("│ category")),
        "{shown}"
    );
    let widths: Vec<usize> = table.iter().map(|l| l.chars().count()).collect();
    assert!(
        widths.iter().all(|w| *w == widths[0] && *w <= 100),
        "every line of the table as wide as the others, within 100 columns: {widths:?}"
    );
    assert!(!shown.contains("| --- |"), "{shown}");

    let dir = tempfile::tempdir().unwrap();
    let piped = stdout(&coherence(&["prompts", "list"], dir.path(), &[]));
    assert!(
        piped.starts_with("| id | category | scorer | expected | prompt |\n| --- |"),
        "{piped}"
    );
    assert!(!piped.contains('│'), "{piped}");
}
