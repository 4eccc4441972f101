//! One process per run folder (and per history database): the first write takes an exclusive
//! advisory lock (`flock`) on a lock file (a folder's `.coherence.lock`), held until the process
//! ends. The kernel drops it with the process, so a killed run leaves no stale lock; the file
//! holds the holder's pid, which a refused process names. Once a folder is held, the temp files
//! of killed writes are swept.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The lock file's name in every run folder.
pub const LOCK_FILE: &str = ".coherence.lock";

/// Another process holds the run folder (or the database): nothing was written to it. Exit 2
/// (`crate::error`).
#[derive(Debug, thiserror::Error)]
#[error("{}: {what} is in use by {}; wait for it to end or stop it, then run again", path.display(), holder(*pid))]
pub struct HeldByAnotherProcess {
    /// What is held, as the message names it: `the run folder`, `the history database`.
    pub what: &'static str,
    /// The run folder or the file that is held.
    pub path: PathBuf,
    /// The holder's pid, as it wrote it in the lock file (None while it had not yet).
    pub pid: Option<u32>,
}

fn holder(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("pid {pid}"),
        None => "another coherence process".into(),
    }
}

/// The lock files this process holds, each kept open (closing it would release the lock).
static HELD: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

/// What asking for a lock file came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Hold {
    /// This call took it: held until the process ends.
    Taken,
    /// This process held it already.
    AlreadyHeld,
    /// Another process holds it; the pid it wrote, if it had yet.
    Busy(Option<u32>),
    /// The lock file cannot be opened, or its file system takes no locks: not held (the write
    /// that follows says what is wrong, if anything is).
    Unavailable,
}

/// Hold the lock file `path` (created when missing) for the rest of the process.
pub fn hold_file(path: &Path) -> Hold {
    hold_file_then(path, || {})
}

/// [`hold_file`], running `on_taking` once this call has taken the lock, before any other thread
/// of this process can ask for it.
fn hold_file_then(path: &Path, on_taking: impl FnOnce()) -> Hold {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Hold::Unavailable;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(key) = dir.canonicalize().map(|d| d.join(name)) else {
        return Hold::Unavailable;
    };
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if held.iter().any(|(p, _)| *p == key) {
        return Hold::AlreadyHeld;
    }
    let Ok(mut file) = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&key)
    else {
        return Hold::Unavailable;
    };
    match try_lock(&file) {
        Locked::Taken => {}
        Locked::Busy => return Hold::Busy(pid_in(&mut file)),
        Locked::Unsupported => return Hold::Unavailable,
    }
    // Best effort: the pid only helps the message of a refused process.
    let _ = file
        .set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{}", std::process::id()))
        .and_then(|()| file.flush());
    on_taking();
    held.push((key, file));
    Hold::Taken
}

/// Hold `dir` for the rest of the process, unless this process already does; refused with
/// [`HeldByAnotherProcess`] when another process holds it. Best effort otherwise: a folder that
/// does not exist, cannot take a lock file or lives where locks are not supported is left
/// unlocked (the write that follows says what is wrong with it).
pub fn hold(dir: &Path) -> anyhow::Result<()> {
    match hold_file_then(&dir.join(LOCK_FILE), || sweep_temps(dir)) {
        Hold::Taken | Hold::AlreadyHeld | Hold::Unavailable => Ok(()),
        Hold::Busy(pid) => Err(HeldByAnotherProcess {
            what: "the run folder",
            path: dir.to_path_buf(),
            pid,
        }
        .into()),
    }
}

/// The pid the holder wrote in the lock file.
fn pid_in(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(64).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

enum Locked {
    Taken,
    Busy,
    /// The file system takes no locks (or refused for another reason): run unlocked.
    Unsupported,
}

#[cfg(unix)]
fn try_lock(file: &File) -> Locked {
    use std::os::fd::AsRawFd;
    // SAFETY: flock(2) on a descriptor this File owns and keeps open for the call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        Locked::Taken
    } else if std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock {
        Locked::Busy
    } else {
        Locked::Unsupported
    }
}

#[cfg(not(unix))]
fn try_lock(_: &File) -> Locked {
    Locked::Unsupported
}

/// Whether `name` is a temp file of an atomic write (`.NAME.PID.tmp`, see
/// `run_folder::write_atomic_with`).
pub fn is_temp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// Remove the temp files a killed write left in `dir`: with the folder held, no other process
/// is writing one there.
fn sweep_temps(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let stale: BTreeSet<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| is_temp(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    for path in stale {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid() {
        let dir = tempfile::tempdir().unwrap();
        hold(dir.path()).unwrap();
        hold(dir.path()).unwrap(); // this process already holds it
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
        // A second open file description is a second holder to flock, as another process is.
        let mut other = File::options()
            .read(true)
            .write(true)
            .open(dir.path().join(LOCK_FILE))
            .unwrap();
        assert!(matches!(try_lock(&other), Locked::Busy));
        assert_eq!(pid_in(&mut other), Some(std::process::id()));
        let e = HeldByAnotherProcess {
            what: "the run folder",
            path: dir.path().to_path_buf(),
            pid: Some(42),
        };
        assert!(
            e.to_string().contains("the run folder is in use by pid 42"),
            "{e}"
        );
    }

    #[test]
    fn holding_a_folder_sweeps_the_temp_files_of_killed_writes() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            ".results.json.123.tmp",
            ".report.md.9.tmp",
            "keep.tmp",
            "a.json",
        ] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        hold(dir.path()).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [LOCK_FILE, "a.json", "keep.tmp"]);
    }

    #[test]
    fn a_folder_that_does_not_exist_is_left_to_the_write() {
        let dir = tempfile::tempdir().unwrap();
        hold(&dir.path().join("missing")).unwrap();
        assert!(!dir.path().join("missing").exists());
    }
}
