//! One process per run folder (and per history database): the first write takes an exclusive
//! advisory lock (`flock`) on a lock file (a folder's `.coherence.lock`), held until the process
//! ends. The kernel drops it with the process, so a killed run leaves no stale lock; the file
//! holds the holder's pid, which a refused process names. A lock path that is a symbolic link,
//! a directory or any file but a lock file (a run folder from an archive may carry one) is
//! refused, never followed, truncated or used unlocked. Once a folder is held, the temp files of
//! killed writes are swept.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::WriteFailed;

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

/// A lock path this tool will not use: a symbolic link (writing through it would empty the file
/// it points to), a directory, or a file that is not a lock file this tool wrote (a hard link, a
/// file of more than a pid). Nothing was written; exit 2 (`crate::error`).
#[derive(Debug, thiserror::Error)]
#[error("{}: {why}; a lock file is a small regular file that coherence writes itself: remove it and run again", path.display())]
pub struct UnsafeLockFile {
    /// The lock file.
    pub path: PathBuf,
    /// What is wrong with it: `is a symbolic link`, `is a directory`, ….
    pub why: String,
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
    /// The folder it goes in does not exist, or its file system takes no locks: not held (the
    /// write that follows says what is wrong, if anything is).
    Unavailable,
}

/// The most bytes a lock file this tool wrote holds: a pid and a newline.
const MAX_LOCK_BYTES: u64 = 32;

/// Hold the lock file `path` (created when missing) for the rest of the process. A symbolic
/// link, a directory or any file that is not a lock file is refused ([`UnsafeLockFile`]), never
/// followed, truncated or left unlocked; a lock file that cannot be created or opened is a
/// [`super::WriteFailed`].
pub fn hold_file(path: &Path) -> anyhow::Result<Hold> {
    hold_file_then(path, || {})
}

/// [`hold_file`], running `on_taking` once this call has taken the lock, before any other thread
/// of this process can ask for it.
fn hold_file_then(path: &Path, on_taking: impl FnOnce()) -> anyhow::Result<Hold> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(Hold::Unavailable);
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(key) = dir.canonicalize().map(|d| d.join(name)) else {
        return Ok(Hold::Unavailable);
    };
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if held.iter().any(|(p, _)| *p == key) {
        return Ok(Hold::AlreadyHeld);
    }
    let mut file = open_lock_file(&key)?;
    match try_lock(&file) {
        Locked::Taken => {}
        Locked::Busy => return Ok(Hold::Busy(pid_in(&mut file))),
        Locked::Unsupported => return Ok(Hold::Unavailable),
    }
    // Best effort: the pid only helps the message of a refused process. The file is one this
    // tool created or one checked to hold no more than a pid ([`open_lock_file`]).
    let _ = file
        .set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{}", std::process::id()))
        .and_then(|()| file.flush());
    on_taking();
    held.push((key, file));
    Ok(Hold::Taken)
}

/// Open the lock file at `path` for reading and writing without following a symbolic link:
/// created when missing (and then this process's own), else checked to be a lock file (a
/// regular file of one name holding at most a pid) before anything writes it.
fn open_lock_file(path: &Path) -> anyhow::Result<File> {
    let refuse = |why: String| UnsafeLockFile {
        path: path.to_path_buf(),
        why,
    };
    let mut options = OpenOptions::new();
    options.read(true).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // No link followed, and no wait on a FIFO or a device put in the file's place.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match options.clone().create_new(true).open(path) {
                Ok(file) => return Ok(file),
                // Another process created it meanwhile: check it as any existing one.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(WriteFailed::new("cannot create the lock file", path)(e).into())
                }
            }
        }
        Err(e) => return Err(WriteFailed::new("cannot read the lock file", path)(e).into()),
        Ok(meta) => check_lock_kind(&meta).map_err(refuse)?,
    }
    let file = options.open(path).map_err(|e| match e.raw_os_error() {
        #[cfg(unix)]
        Some(libc::ELOOP) => anyhow::Error::from(refuse("is a symbolic link".into())),
        _ => WriteFailed::new("cannot open the lock file", path)(e).into(),
    })?;
    let meta = file
        .metadata()
        .map_err(WriteFailed::new("cannot read the lock file", path))?;
    check_lock_kind(&meta).map_err(refuse)?;
    check_lock_content(&file, &meta).map_err(refuse)?;
    Ok(file)
}

/// Why `meta` (not followed through a link) cannot be a lock file's, if it cannot.
fn check_lock_kind(meta: &std::fs::Metadata) -> Result<(), String> {
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err("is a symbolic link".into());
    }
    if kind.is_dir() {
        return Err("is a directory, so no lock can be taken there".into());
    }
    if !kind.is_file() {
        return Err("is not a regular file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(format!(
                "has {} names (a hard link to another file)",
                meta.nlink()
            ));
        }
    }
    Ok(())
}

/// Why an existing regular file is not a lock file this tool wrote (more than a pid), if not.
fn check_lock_content(file: &File, meta: &std::fs::Metadata) -> Result<(), String> {
    if meta.len() > MAX_LOCK_BYTES {
        return Err(format!("holds {} bytes, more than a pid", meta.len()));
    }
    let mut text = String::new();
    file.take(MAX_LOCK_BYTES)
        .read_to_string(&mut text)
        .map_err(|_| "holds text that is not a pid".to_string())?;
    let pid = text.trim();
    if !pid.chars().all(|c| c.is_ascii_digit()) {
        return Err("holds text that is not a pid".into());
    }
    Ok(())
}

/// Hold `dir` for the rest of the process, unless this process already does; refused with
/// [`HeldByAnotherProcess`] when another process holds it, and with [`UnsafeLockFile`] when its
/// lock path is not a lock file. A folder that does not exist, or lives where locks are not
/// supported, is left unlocked (the write that follows says what is wrong with it).
pub fn hold(dir: &Path) -> anyhow::Result<()> {
    match hold_file_then(&dir.join(LOCK_FILE), || sweep_temps(dir))? {
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

/// The extensions of the files this tool writes whole (`write_atomic_with`): the only temp
/// files swept are theirs.
const WRITTEN_WHOLE: [&str; 5] = ["json", "jsonl", "md", "html", "xml"];

/// Whether `name` is a temp file of an atomic write, as `run_folder::write_atomic_with` names
/// them (`.NAME.EXT.PID.tmp`, EXT one this tool writes, PID digits), so a user's own `.*.tmp`
/// file is never taken for one.
pub fn is_temp(name: &str) -> bool {
    let Some(inner) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    let Some((file, pid)) = inner.rsplit_once('.') else {
        return false;
    };
    let written = file
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && WRITTEN_WHOLE.contains(&ext));
    written && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
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
            // A user's own temp files: not names this tool writes.
            ".draft.tmp",
            ".notes.txt.12.tmp",
            ".json.5.tmp",
            ".x.json.tmp",
            ".x.json.5a.tmp",
        ] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        hold(dir.path()).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                LOCK_FILE,
                ".draft.tmp",
                ".json.5.tmp",
                ".notes.txt.12.tmp",
                ".x.json.5a.tmp",
                ".x.json.tmp",
                "a.json",
                "keep.tmp"
            ]
        );
    }

    /// The message of refusing `dir`'s lock path, which must leave `target` as it was.
    #[cfg(unix)]
    fn refused(dir: &Path) -> String {
        let e = hold(dir).unwrap_err();
        let unsafe_lock = e.downcast_ref::<UnsafeLockFile>().expect("UnsafeLockFile");
        assert_eq!(
            unsafe_lock.path,
            dir.canonicalize().unwrap().join(LOCK_FILE)
        );
        e.to_string()
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_path_that_is_a_link_a_directory_or_another_file_is_refused_untouched() {
        use std::os::unix::fs::symlink;
        let root = tempfile::tempdir().unwrap();
        let precious = root.path().join("passwd");
        std::fs::write(&precious, "root:x:0:0\n").unwrap();
        // A link to a file elsewhere: never opened for writing, never emptied.
        let linked = root.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        symlink(&precious, linked.join(LOCK_FILE)).unwrap();
        assert!(refused(&linked).contains("is a symbolic link"));
        // A dangling link: its target is not created.
        let dangling = root.path().join("dangling");
        std::fs::create_dir(&dangling).unwrap();
        symlink(root.path().join("created"), dangling.join(LOCK_FILE)).unwrap();
        assert!(refused(&dangling).contains("is a symbolic link"));
        assert!(!root.path().join("created").exists());
        // A directory: no lock can be taken, so the folder is not used unlocked.
        let dir = root.path().join("dir");
        std::fs::create_dir_all(dir.join(LOCK_FILE)).unwrap();
        assert!(refused(&dir).contains("is a directory"));
        // A hard link to the file elsewhere, and a file of more than a pid.
        let hard = root.path().join("hard");
        std::fs::create_dir(&hard).unwrap();
        std::fs::hard_link(&precious, hard.join(LOCK_FILE)).unwrap();
        assert!(refused(&hard).contains("hard link"));
        let other = root.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(LOCK_FILE), "notes of mine\n").unwrap();
        assert!(refused(&other).contains("not a pid"));
        assert_eq!(
            std::fs::read_to_string(other.join(LOCK_FILE)).unwrap(),
            "notes of mine\n"
        );
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "root:x:0:0\n");
        // A lock file a killed run left (its pid) is taken over.
        let stale = root.path().join("stale");
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join(LOCK_FILE), "4242\n").unwrap();
        hold(&stale).unwrap();
        let text = std::fs::read_to_string(stale.join(LOCK_FILE)).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
    }

    #[test]
    fn a_folder_that_does_not_exist_is_left_to_the_write() {
        let dir = tempfile::tempdir().unwrap();
        hold(&dir.path().join("missing")).unwrap();
        assert!(!dir.path().join("missing").exists());
    }
}
