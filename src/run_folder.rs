//! Run-folder I/O, for every command that writes one: the folder's name and creation, atomic
//! whole-file writes, JSON Lines journals (appended and flushed a line at a time, read back
//! skipping torn or unreadable lines), and reading a run file with an error that names it; and
//! the compare run folder ([`CompareFolder`]), which owns the names of its files. (bench, soak,
//! project and logprobs folders are typed beside their schemas: `bench::folder`,
//! `project::folder`, `logprobs::folder`.) Every write into a folder first holds it for this
//! process ([`lock`]), and every failed write is a [`WriteFailed`].

mod lock;

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use lock::{FolderInUse, LOCK_FILE};

/// A run folder or one of its files could not be written (a full disk, no permission, a path
/// that is a file): the results are not all out, whichever file it was (exit 3, `crate::error`).
#[derive(Debug, thiserror::Error)]
#[error("{what} {}", path.display())]
pub struct WriteFailed {
    /// What could not be done: `cannot write`, `cannot create`, ….
    what: &'static str,
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

impl WriteFailed {
    fn new<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Self + 'a {
        move |source| WriteFailed {
            what,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Hold the folder `path` is in for this process before writing it (see [`lock`]).
fn hold_folder_of(path: &Path) -> anyhow::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => lock::hold(dir),
        _ => lock::hold(Path::new(".")),
    }
}

/// `coherence <version>`: the `tool` field of every file a run writes.
pub fn tool_version() -> String {
    format!("coherence {}", env!("CARGO_PKG_VERSION"))
}

/// `runs/[<command>-]<UTC stamp>-<a>-vs-<b>...`, with `-2`, `-3`... appended when that folder
/// already exists. `compare` passes no command; `bench` and `soak` pass their name.
pub fn new_run_dir(command: Option<&str>, names: &[&str]) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let prefix = command.map(|c| format!("{c}-")).unwrap_or_default();
    first_free(PathBuf::from("runs").join(format!("{prefix}{stamp}-{}", names.join("-vs-"))))
}

/// `base`, or `base-2`, `base-3`... whichever is the first that does not exist.
fn first_free(base: PathBuf) -> PathBuf {
    let mut dir = base.clone();
    let mut n = 2;
    while dir.exists() {
        dir = PathBuf::from(format!("{}-{n}", base.display()));
        n += 1;
    }
    dir
}

/// Create the run folder (and its parents) and hold it for this process: refused with
/// [`FolderInUse`] while another process holds it.
pub fn create_run_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(WriteFailed::new("cannot create run folder", dir))?;
    lock::hold(dir)
}

/// Hold the existing run folder `dir` for this process now (a resume), so that a second process
/// is refused ([`FolderInUse`]) before it asks an endpoint anything; a new folder is held when
/// [`create_run_dir`] makes it, and any folder at its first write.
pub fn hold_run_dir(dir: &Path) -> anyhow::Result<()> {
    lock::hold(dir)
}

/// Write `bytes` to a temp file next to `path` (`.NAME.PID.tmp`, swept by the next process that
/// holds the folder when a kill leaves it), then rename it over `path`, so a kill never leaves
/// half a file. Errors name the file that could not be written.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// [`write_atomic`] for a file written piece by piece: `write` streams it into a buffered temp
/// file, so the whole text is never held in memory (a long run's results.json and reports).
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .with_context(|| format!("cannot write {}: not a file path", path.display()))?;
    hold_folder_of(path)?;
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = File::create(&tmp)
        .and_then(|file| {
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)?;
            out.flush()
        })
        .map_err(WriteFailed::new("cannot write", &tmp))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(WriteFailed::new("cannot write", path)));
    if written.is_err() {
        // Best effort: a temp file left by a failed write is litter, not data.
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(written?)
}

/// Read and parse `dir/name`; `what` names the kind of folder (`run`, `soak run`) and file
/// (`manifest`, `soak settings`) in the errors.
pub fn read_run_file<T: DeserializeOwned>(
    dir: &Path,
    name: &str,
    folder: &str,
    what: &str,
) -> anyhow::Result<T> {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "{} is not a {folder} folder (cannot read {})",
            dir.display(),
            path.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("{}: invalid {what}", path.display()))
}

/// A run file whose values serde cannot check (a range, a list that must not be empty), checked
/// once read back: the error names the field.
pub trait Checked {
    fn check(&self) -> Result<(), String>;
}

/// [`read_run_file`], then [`Checked::check`]: a value out of bounds is an error naming the file
/// and the field (`DIR/manifest.json: invalid manifest: `repeats` is 0; …`).
pub fn read_checked_run_file<T: DeserializeOwned + Checked>(
    dir: &Path,
    name: &str,
    folder: &str,
    what: &str,
) -> anyhow::Result<T> {
    let value: T = read_run_file(dir, name, folder, what)?;
    value
        .check()
        .map_err(|e| anyhow::anyhow!("{}: invalid {what}: {e}", dir.join(name).display()))?;
    Ok(value)
}

/// A `coherence compare` run folder (also what `score`, `report`, `determinism` and `selftest`
/// read and write): the one place its file names are written down. The schemas live with their
/// modules (`run::Manifest`, `run::Record`, `load::LoadRecord`, `logprobs::forced::ForcedLine`,
/// `analysis::Results`); this type names, reads and writes the files, whole files atomically.
#[derive(Debug, Clone)]
pub struct CompareFolder {
    dir: PathBuf,
}

impl CompareFolder {
    /// What the run was asked to do (`run::Manifest`).
    pub const MANIFEST: &'static str = "manifest.json";
    /// Every answer, one flushed line each (`run::Record`).
    pub const RECORDS: &'static str = "records.jsonl";
    /// Every probe of the load, cache-state and samples phases (`load::LoadRecord`).
    pub const LOAD: &'static str = "load.jsonl";
    /// The settings of the probe phases, so that `--resume` continues them (`load::LoadPlan`).
    pub const LOAD_PLAN: &'static str = "load-plan.json";
    /// Teacher forcing of the reference's completions (`logprobs::forced::ForcedLine`).
    pub const TEACHER_FORCING: &'static str = "teacher_forcing.jsonl";
    /// The chat template the run was teacher-forced with, kept so `--resume` needs no flag.
    pub const CHAT_TEMPLATE: &'static str = "chat_template.json";
    /// The results contract (`analysis::Results`).
    pub const RESULTS: &'static str = "results.json";
    /// The Markdown report.
    pub const REPORT_MD: &'static str = "report.md";
    /// The HTML report.
    pub const REPORT_HTML: &'static str = "report.html";
    /// The one-table summary.
    pub const TABLE: &'static str = "comparison_table.md";
    /// The JUnit view of the verdicts.
    pub const JUNIT: &'static str = "junit.xml";

    pub fn new(dir: &Path) -> Self {
        CompareFolder {
            dir: dir.to_path_buf(),
        }
    }

    /// The path of one of the folder's files (one of the names above).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Whether the folder holds a run (a manifest).
    pub fn holds_run(&self) -> bool {
        self.file(Self::MANIFEST).exists()
    }

    /// Parse the manifest; an error says the folder is not a run folder.
    pub fn read_manifest<T: DeserializeOwned>(&self) -> anyhow::Result<T> {
        self.read(Self::MANIFEST, "manifest")
    }

    /// Parse the manifest and check what serde cannot ([`Checked`]).
    pub fn read_checked_manifest<T: DeserializeOwned + Checked>(&self) -> anyhow::Result<T> {
        read_checked_run_file(&self.dir, Self::MANIFEST, "run", "manifest")
    }

    /// Parse one whole file of the folder; `what` names it in errors.
    pub fn read<T: DeserializeOwned>(&self, name: &str, what: &str) -> anyhow::Result<T> {
        read_run_file(&self.dir, name, "run", what)
    }

    /// Write one whole file of the folder atomically ([`write_atomic`]).
    pub fn write(&self, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
        write_atomic(&self.file(name), bytes)
    }

    /// Write one of the folder's files atomically, streamed by `write` (see [`write_atomic_with`]).
    pub fn write_with(
        &self,
        name: &str,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        write_atomic_with(&self.file(name), write)
    }

    /// Open one of the folder's journals for appending (mending a torn last line).
    pub fn append_to(&self, journal: &str) -> anyhow::Result<JsonLines> {
        JsonLines::append_to(&self.file(journal))
    }

    /// Every readable line of one of the folder's journals (none when it does not exist).
    pub fn read_lines<T: DeserializeOwned>(&self, journal: &str) -> anyhow::Result<Lines<T>> {
        read_json_lines(&self.file(journal))
    }
}

/// A JSON Lines file written one value per line, each line one write followed by a flush, so a
/// killed process keeps every line before the kill.
pub struct JsonLines {
    path: PathBuf,
    file: File,
}

impl JsonLines {
    /// Create (or truncate) `path`.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        hold_folder_of(path)?;
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(WriteFailed::new("cannot create", path))?;
        Ok(JsonLines {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Open `path` for appending (creating it), first mending a last line that lacks its
    /// newline so the next line starts on a line of its own: a complete line (one that parses)
    /// gets its newline, a torn one left by a killed writer is cut off.
    pub fn append_to(path: &Path) -> anyhow::Result<Self> {
        hold_folder_of(path)?;
        if path.exists() {
            mend_tail(path)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(WriteFailed::new("cannot open for appending", path))?;
        Ok(JsonLines {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Append one value as one line (a single write) and flush it.
    pub fn append<T: Serialize>(&mut self, value: &T) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(value)?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|_| self.file.flush())
            .map_err(WriteFailed::new("cannot write to", &self.path))?;
        Ok(())
    }
}

/// Make a file that does not end in a newline end in one: keep a last line that is a whole JSON
/// object or array (only its newline was lost), cut one that is not (torn mid-write).
fn mend_tail(path: &Path) -> anyhow::Result<()> {
    let failed = |e| WriteFailed::new("cannot mend", path)(e);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(failed)?;
    let start = last_line_start(&mut file).map_err(failed)?;
    let Some(start) = start else {
        return Ok(());
    };
    let mut last = Vec::new();
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.read_to_end(&mut last))
        .map_err(failed)?;
    let whole = serde_json::from_slice::<serde_json::Value>(&last)
        .is_ok_and(|v| v.is_object() || v.is_array());
    if whole {
        file.seek(SeekFrom::End(0))
            .and_then(|_| file.write_all(b"\n"))
            .and_then(|()| file.flush())
    } else {
        file.set_len(start)
    }
    .map_err(WriteFailed::new("cannot write", path))?;
    Ok(())
}

/// Where the last line of `file` starts when it lacks its newline (None: the file is empty or
/// ends in one), read backwards a block at a time: a journal of gigabytes is never read whole.
fn last_line_start(file: &mut File) -> std::io::Result<Option<u64>> {
    const BLOCK: u64 = 64 * 1024;
    let len = file.metadata()?.len();
    let mut end = len;
    let mut block = Vec::new();
    while end > 0 {
        let from = end.saturating_sub(BLOCK);
        block.resize((end - from) as usize, 0);
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut block)?;
        if end == len && block.last() == Some(&b'\n') {
            return Ok(None);
        }
        if let Some(i) = block.iter().rposition(|b| *b == b'\n') {
            return Ok(Some(from + i as u64 + 1));
        }
        end = from;
    }
    Ok((len > 0).then_some(0))
}

/// What a JSON Lines file held.
#[derive(Debug)]
pub struct Lines<T> {
    /// The readable lines, in file order.
    pub values: Vec<T>,
    /// One `file:line: unreadable line skipped: reason` note per line that could not be read
    /// (a torn last line is one of them).
    pub skipped: Vec<String>,
}

/// Every readable line of `path` (none when it does not exist); unreadable lines are skipped and
/// reported, never fatal.
pub fn read_json_lines<T: DeserializeOwned>(path: &Path) -> anyhow::Result<Lines<T>> {
    read_json_lines_as(path, |value: T| value)
}

/// Every readable line of `path`, each passed through `keep` as it is read, so that what a reader
/// does not need (a raw response body) is dropped line by line instead of after the whole file.
pub fn read_json_lines_as<T: DeserializeOwned, U>(
    path: &Path,
    mut keep: impl FnMut(T) -> U,
) -> anyhow::Result<Lines<U>> {
    let mut lines = Lines {
        values: Vec::new(),
        skipped: Vec::new(),
    };
    if !path.exists() {
        return Ok(lines);
    }
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    // Sized once from a first pass that counts lines: growing by doubling would hold up to twice
    // the records' size while it copies, the peak of reading a long journal.
    lines.values.reserve_exact(count_lines(path)?);
    for (i, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(&line) {
            Ok(v) => lines.values.push(keep(v)),
            Err(e) => lines.skipped.push(format!(
                "{}:{}: unreadable line skipped: {e}",
                path.display(),
                i + 1
            )),
        }
    }
    Ok(lines)
}

/// How many lines `path` has (a last line without a line break counts).
fn count_lines(path: &Path) -> anyhow::Result<usize> {
    let mut reader = BufReader::new(
        File::open(path).with_context(|| format!("cannot read {}", path.display()))?,
    );
    let (mut lines, mut last) = (0, b'\n');
    loop {
        let buf = reader
            .fill_buf()
            .with_context(|| format!("cannot read {}", path.display()))?;
        let Some(&end) = buf.last() else { break };
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        last = end;
        let n = buf.len();
        reader.consume(n);
    }
    Ok(lines + usize::from(last != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in `dir`, sorted.
    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn every_failed_write_is_a_write_failure_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where a file should be: no write to it can succeed.
        for name in ["results.json", "records.jsonl"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        std::fs::write(dir.path().join("report.md"), "a file, not a folder").unwrap();
        let errors = [
            write_atomic(&dir.path().join("results.json"), b"{}").unwrap_err(),
            JsonLines::append_to(&dir.path().join("records.jsonl"))
                .err()
                .unwrap(),
            JsonLines::create(&dir.path().join("records.jsonl"))
                .err()
                .unwrap(),
            create_run_dir(&dir.path().join("report.md/run")).unwrap_err(),
        ];
        for e in errors {
            assert!(e.is::<WriteFailed>(), "{e:#}");
            let text = format!("{e:#}");
            assert!(
                ["results.json", "records.jsonl", "report.md"]
                    .iter()
                    .any(|name| text.contains(name)),
                "{text}"
            );
        }
    }

    #[test]
    fn the_name_holds_command_stamp_and_endpoints() {
        // Digits masked: the stamp is the current UTC time.
        let masked = |p: PathBuf| -> String {
            let name = p.strip_prefix("runs").unwrap().display().to_string();
            name.chars()
                .map(|c| if c.is_ascii_digit() { '0' } else { c })
                .collect()
        };
        let single = masked(new_run_dir(Some("bench"), &["a"]));
        assert_eq!(single, "bench-00000000T000000Z-a");
        assert_eq!(
            masked(new_run_dir(None, &["a", "b"])),
            "00000000T000000Z-a-vs-b"
        );
    }

    #[test]
    fn a_taken_name_gets_the_next_number() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("run");
        assert_eq!(first_free(base.clone()), base);
        std::fs::create_dir(&base).unwrap();
        std::fs::create_dir(dir.path().join("run-2")).unwrap();
        assert_eq!(first_free(base), dir.path().join("run-3"));
    }

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        write_atomic(&path, b"one\n").unwrap();
        write_atomic(&path, b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
        assert_eq!(names_in(dir.path()), [LOCK_FILE, "manifest.json"]);
        let err = write_atomic(&dir.path().join("missing/x.json"), b"").unwrap_err();
        assert!(
            format!("{err:#}").contains(".x.json."),
            "the error names the file: {err:#}"
        );
    }

    #[test]
    fn a_streamed_write_that_fails_keeps_the_old_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        write_atomic_with(&path, |out| out.write_all(b"{\"whole\": true}\n")).unwrap();
        let err = write_atomic_with(&path, |out| {
            out.write_all(b"{\"half")?;
            Err(std::io::Error::other("killed half-way"))
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("killed half-way"), "{err:#}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"whole\": true}\n"
        );
        assert_eq!(names_in(dir.path()), [LOCK_FILE, "results.json"]);
    }

    #[test]
    fn whole_files_replace_the_old_file_instead_of_rewriting_it_in_place() {
        // A reader holding the old file (here: a second link to it) never sees a half-written
        // one: the new file is renamed over the old, which stays whole.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.md");
        std::fs::write(&path, "old report\n").unwrap();
        let reader = dir.path().join("held-by-a-reader");
        std::fs::hard_link(&path, &reader).unwrap();
        write_atomic(&path, b"new report\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new report\n");
        assert_eq!(std::fs::read_to_string(&reader).unwrap(), "old report\n");
        let temps = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(temps, 0);
    }

    #[test]
    fn lines_round_trip_and_a_torn_tail_is_skipped_then_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let mut log = JsonLines::create(&path).unwrap();
        log.append(&serde_json::json!({"n": 1})).unwrap();
        log.append(&serde_json::json!({"n": 2})).unwrap();
        drop(log);
        let mut raw = std::fs::read(&path).unwrap();
        raw.extend_from_slice(b"{\"n\": 3");
        std::fs::write(&path, raw).unwrap();
        let read: Lines<serde_json::Value> = read_json_lines(&path).unwrap();
        assert_eq!(read.values.len(), 2);
        assert_eq!(read.skipped.len(), 1);
        assert!(read.skipped[0].contains(":3:"), "{}", read.skipped[0]);

        let mut log = JsonLines::append_to(&path).unwrap();
        log.append(&serde_json::json!({"n": 4})).unwrap();
        let read: Lines<serde_json::Value> = read_json_lines(&path).unwrap();
        assert_eq!(read.values.len(), 3);
        assert!(
            read.skipped.is_empty(),
            "the torn line was cut before appending"
        );
    }

    #[test]
    fn a_whole_last_line_without_its_newline_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, b"{\"n\": 1}\n{\"n\": 2}").unwrap();
        let mut log = JsonLines::append_to(&path).unwrap();
        log.append(&serde_json::json!({"n": 3})).unwrap();
        let read: Lines<serde_json::Value> = read_json_lines(&path).unwrap();
        let ns: Vec<_> = read.values.iter().map(|v| v["n"].as_i64()).collect();
        assert_eq!(ns, vec![Some(1), Some(2), Some(3)]);
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);

        // A file of one whole line, no newline at all.
        std::fs::write(&path, b"{\"n\": 1}").unwrap();
        drop(JsonLines::append_to(&path).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"n\": 1}\n");
    }

    #[test]
    fn a_last_line_longer_than_a_block_is_mended_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let long = "x".repeat(200 * 1024);
        let whole = format!("{{\"n\": 1}}\n{{\"t\": \"{long}\"}}");
        std::fs::write(&path, &whole).unwrap();
        drop(JsonLines::append_to(&path).unwrap());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            format!("{whole}\n").into_bytes()
        );
        let torn = format!("{{\"n\": 1}}\n{{\"t\": \"{long}");
        std::fs::write(&path, &torn).unwrap();
        drop(JsonLines::append_to(&path).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"n\": 1}\n");
        std::fs::write(&path, &long).unwrap();
        drop(JsonLines::append_to(&path).unwrap());
        assert!(
            std::fs::read(&path).unwrap().is_empty(),
            "a torn only line is cut"
        );
    }

    #[test]
    fn a_missing_run_file_says_which_folder_it_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let err =
            read_run_file::<serde_json::Value>(dir.path(), "manifest.json", "run", "manifest")
                .unwrap_err();
        assert!(
            format!("{err:#}").contains("is not a run folder"),
            "{err:#}"
        );
    }

    #[test]
    fn lines_are_counted_with_or_without_a_last_line_break() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        for (text, lines) in [("", 0), ("1\n", 1), ("1\n2", 2), ("1\n\n2\n", 3)] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(count_lines(&path).unwrap(), lines, "{text:?}");
        }
        let long = "{\"a\": 1}\n".repeat(20_000);
        std::fs::write(&path, &long).unwrap();
        assert_eq!(count_lines(&path).unwrap(), 20_000);
        let read: Lines<serde_json::Value> = read_json_lines(&path).unwrap();
        assert_eq!(read.values.len(), 20_000);
    }

    #[test]
    fn a_compare_folder_holds_a_run_once_its_manifest_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let folder = CompareFolder::new(dir.path());
        assert!(!folder.holds_run());
        let e = folder.read_manifest::<serde_json::Value>().unwrap_err();
        assert!(format!("{e:#}").contains("is not a run folder"), "{e:#}");
        folder
            .write(CompareFolder::MANIFEST, b"{\"repeats\": 1}\n")
            .unwrap();
        assert!(folder.holds_run());
        let m: serde_json::Value = folder.read_manifest().unwrap();
        assert_eq!(m["repeats"], 1);
        let mut journal = folder.append_to(CompareFolder::RECORDS).unwrap();
        journal.append(&serde_json::json!({"n": 1})).unwrap();
        let read: Lines<serde_json::Value> = folder.read_lines(CompareFolder::RECORDS).unwrap();
        assert_eq!(read.values.len(), 1);
        assert!(dir.path().join("records.jsonl").is_file());
    }
}
