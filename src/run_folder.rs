//! Run-folder I/O, for every command that writes one: the folder's name and creation, atomic
//! whole-file writes, JSON Lines journals (appended and flushed a line at a time, read back
//! skipping torn or unreadable lines), and reading a run file with an error that names it. One
//! type, [`RunFolder`], reads and writes every kind of run folder by file name; each kind
//! ([`RunKind`]) and its file names are written down beside its schema ([`compare`] here, the
//! others in `distribution`, `project`, `logprobs` and `bench`), so this module knows names and
//! bytes, never a kind's schema: only the [`RunHeader`] every manifest opens with ([`header`]).
//! Every write into a folder first holds it for this process ([`lock`]),
//! and every failed write is a [`WriteFailed`].

pub mod header;
mod lock;

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use header::{tool_version, RunHeader, RunStatus};
pub use lock::{hold_file, HeldByAnotherProcess, Hold, UnsafeLockFile};

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

/// A run file whose values serde cannot check (a range, a list that must not be empty), checked
/// once read back: the error names the field.
pub trait Checked {
    fn check(&self) -> Result<(), String>;
}

/// What kind of run a folder holds: the names its errors use and the file that says what the
/// run was asked. Each kind is a constant beside its schema, with the names of its files.
#[derive(Debug)]
pub struct RunKind {
    /// The folder in errors: `DIR is not a {name} folder (cannot read FILE)`.
    pub name: &'static str,
    /// The file that says what the run was asked (bench and logprobs, which keep no settings of
    /// their own: the report that holds them).
    pub manifest: &'static str,
    /// The manifest in errors: `FILE: invalid {manifest_what}`.
    pub manifest_what: &'static str,
    /// Whether [`RunFolder::write_manifest`] ends the manifest's pretty JSON with a newline, as
    /// this kind always has.
    pub manifest_ends_in_newline: bool,
}

/// A run folder of one kind: the path of each of its files (named by the kind's module), and the
/// reads and writes every kind shares: whole files atomically, journals a flushed line at a time,
/// each read with an error that names the folder's kind and the file.
#[derive(Debug, Clone)]
pub struct RunFolder {
    dir: PathBuf,
    kind: &'static RunKind,
}

impl RunFolder {
    pub fn new(dir: &Path, kind: &'static RunKind) -> Self {
        RunFolder {
            dir: dir.to_path_buf(),
            kind,
        }
    }

    /// The path of one of the folder's files.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Whether the folder holds the file `name`.
    pub fn holds(&self, name: &str) -> bool {
        self.file(name).exists()
    }

    /// Create the folder (and its parents) and hold it for this process: refused with
    /// [`HeldByAnotherProcess`] while another process holds it.
    pub fn create(&self) -> anyhow::Result<()> {
        std::fs::create_dir_all(&self.dir)
            .map_err(WriteFailed::new("cannot create run folder", &self.dir))?;
        lock::hold(&self.dir)
    }

    /// Hold the existing folder for this process now (a resume), so that a second process is
    /// refused ([`HeldByAnotherProcess`]) before it asks an endpoint anything; a new folder is
    /// held when [`RunFolder::create`] makes it, and any folder at its first write.
    pub fn hold(&self) -> anyhow::Result<()> {
        lock::hold(&self.dir)
    }

    /// Parse the manifest; an error says the folder is not of this kind.
    pub fn read_manifest<T: DeserializeOwned>(&self) -> anyhow::Result<T> {
        self.read(self.kind.manifest, self.kind.manifest_what)
    }

    /// Parse the manifest and check what serde cannot ([`Checked`]): a value out of bounds is an
    /// error naming the file and the field (`DIR/manifest.json: invalid manifest: `repeats` is
    /// 0; …`).
    pub fn read_checked_manifest<T: DeserializeOwned + Checked>(&self) -> anyhow::Result<T> {
        let manifest: T = self.read_manifest()?;
        manifest.check().map_err(|e| {
            let path = self.file(self.kind.manifest);
            anyhow::anyhow!(
                "{}: invalid {}: {e}",
                path.display(),
                self.kind.manifest_what
            )
        })?;
        Ok(manifest)
    }

    /// Write the manifest atomically, as pretty JSON ending as this kind's always has.
    pub fn write_manifest<T: Serialize>(&self, manifest: &T) -> anyhow::Result<()> {
        let mut body = pretty_json(manifest, self.kind.manifest)?;
        if self.kind.manifest_ends_in_newline {
            body.push(b'\n');
        }
        self.write(self.kind.manifest, &body)
    }

    /// Parse one whole file of the folder; `what` names it in errors.
    pub fn read<T: DeserializeOwned>(&self, name: &str, what: &str) -> anyhow::Result<T> {
        let path = self.file(name);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{} is not a {} folder (cannot read {})",
                self.dir.display(),
                self.kind.name,
                path.display()
            )
        })?;
        serde_json::from_str(&text).with_context(|| format!("{}: invalid {what}", path.display()))
    }

    /// Write one whole file of the folder atomically ([`write_atomic`]).
    pub fn write(&self, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
        write_atomic(&self.file(name), bytes)
    }

    /// Write `value` to one of the folder's files atomically, as pretty JSON without a last
    /// newline.
    pub fn write_json<T: Serialize>(&self, name: &str, value: &T) -> anyhow::Result<()> {
        self.write(name, &pretty_json(value, name)?)
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

    /// Create one of the folder's journals, empty (truncating an earlier one).
    pub fn create_journal(&self, journal: &str) -> anyhow::Result<JsonLines> {
        JsonLines::create(&self.file(journal))
    }

    /// Every readable line of one of the folder's journals (none when it does not exist).
    pub fn read_lines<T: DeserializeOwned>(&self, journal: &str) -> anyhow::Result<Lines<T>> {
        read_json_lines(&self.file(journal))
    }
}

/// `value` as pretty JSON; `name` is the file it is for, in the error.
fn pretty_json<T: Serialize>(value: &T, name: &str) -> anyhow::Result<Vec<u8>> {
    serde_json::to_vec_pretty(value).with_context(|| format!("cannot serialise {name}"))
}

/// The `coherence compare` run folder (also what `score`, `report`, `determinism` and `selftest`
/// read and write): the one place its file names are written down. The schemas live with their
/// modules (`run::Manifest`, `run::Record`, `probes::LoadRecord`, `logprobs::forced::ForcedLine`,
/// `analysis::Results`).
pub mod compare {
    use std::path::Path;

    use super::{RunFolder, RunKind};

    const KIND: RunKind = RunKind {
        name: "run",
        manifest: MANIFEST,
        manifest_what: "manifest",
        manifest_ends_in_newline: true,
    };

    /// What the run was asked to do (`run::Manifest`).
    pub const MANIFEST: &str = "manifest.json";
    /// Every answer, one flushed line each (`run::Record`).
    pub const RECORDS: &str = "records.jsonl";
    /// The reference's calibration answers (generated suite, `--difficulty auto`): never
    /// compared, never counted in a verdict; `--resume` continues calibration from them.
    pub const CALIBRATION: &str = "calibration.jsonl";
    /// Every probe of the load, cache-state and samples phases (`probes::LoadRecord`).
    pub const LOAD: &str = "load.jsonl";
    /// The settings of the probe phases, so that `--resume` continues them (`probes::LoadPlan`).
    pub const LOAD_PLAN: &str = "load-plan.json";
    /// Teacher forcing of the reference's completions (`logprobs::forced::ForcedLine`).
    pub const TEACHER_FORCING: &str = "teacher_forcing.jsonl";
    /// The chat template the run was teacher-forced with, kept so `--resume` needs no flag.
    pub const CHAT_TEMPLATE: &str = "chat_template.json";
    /// The results contract (`analysis::Results`).
    pub const RESULTS: &str = "results.json";
    /// The Markdown report.
    pub const REPORT_MD: &str = "report.md";
    /// The HTML report.
    pub const REPORT_HTML: &str = "report.html";
    /// The one-table summary.
    pub const TABLE: &str = "comparison_table.md";
    /// The JUnit view of the verdicts.
    pub const JUNIT: &str = "junit.xml";

    /// The compare run folder `dir`.
    pub fn folder(dir: &Path) -> RunFolder {
        RunFolder::new(dir, &KIND)
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
    use serde_json::{json, Value};

    use super::lock::LOCK_FILE;
    use super::*;
    use crate::bench::{schema, soak_report};
    use crate::{distribution, logprobs, project};

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
            compare::folder(&dir.path().join("report.md/run"))
                .create()
                .unwrap_err(),
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

    /// Every kind of run folder: its constructor, what errors call the folder, its manifest,
    /// what errors call the manifest, and whether the manifest's JSON ends in a newline.
    type Kind = (
        fn(&Path) -> RunFolder,
        &'static str,
        &'static str,
        &'static str,
        bool,
    );

    const EVERY_KIND: [Kind; 6] = [
        (compare::folder, "run", "manifest.json", "manifest", true),
        (
            distribution::folder,
            "distribution run",
            "distribution.json",
            "distribution manifest",
            false,
        ),
        (
            project::folder,
            "project run",
            "project.json",
            "project settings",
            false,
        ),
        (
            soak_report::soak_folder,
            "soak run",
            "soak-run.json",
            "soak settings",
            true,
        ),
        (
            schema::bench_folder,
            "bench run",
            "bench.json",
            "bench report",
            true,
        ),
        (
            logprobs::folder,
            "logprobs run",
            "logprobs.json",
            "logprobs evidence",
            true,
        ),
    ];

    #[test]
    fn each_kind_names_its_folder_and_its_manifest_in_errors() {
        for (folder, name, manifest, what, _) in EVERY_KIND {
            let dir = tempfile::tempdir().unwrap();
            let folder = folder(dir.path());
            let path = dir.path().join(manifest);
            let e = format!("{:#}", folder.read_manifest::<Value>().unwrap_err());
            let missing = format!(
                "{} is not a {name} folder (cannot read {})",
                dir.path().display(),
                path.display()
            );
            assert!(e.starts_with(&missing), "{e}");
            std::fs::write(&path, "{").unwrap();
            let e = format!("{:#}", folder.read_manifest::<Value>().unwrap_err());
            let invalid = format!("{}: invalid {what}: ", path.display());
            assert!(e.starts_with(&invalid), "{e}");
        }
    }

    #[test]
    fn each_kind_writes_its_manifest_as_pretty_json_ending_as_it_always_has() {
        for (folder, _, manifest, _, newline) in EVERY_KIND {
            let dir = tempfile::tempdir().unwrap();
            let folder = folder(&dir.path().join("run"));
            folder.create().unwrap();
            folder.write_manifest(&json!({"samples": 10})).unwrap();
            let written = std::fs::read_to_string(dir.path().join("run").join(manifest)).unwrap();
            let ending = if newline { "\n" } else { "" };
            assert_eq!(
                written,
                format!("{{\n  \"samples\": 10\n}}{ending}"),
                "{manifest}"
            );
            let back: Value = folder.read_manifest().unwrap();
            assert_eq!(back["samples"], 10);
        }
    }

    #[test]
    fn each_kind_keeps_the_names_of_its_files() {
        let dir = Path::new("run");
        let kinds: [(RunFolder, &[(&str, &str)]); 6] = [
            (
                compare::folder(dir),
                &[
                    (compare::MANIFEST, "manifest.json"),
                    (compare::RECORDS, "records.jsonl"),
                    (compare::CALIBRATION, "calibration.jsonl"),
                    (compare::LOAD, "load.jsonl"),
                    (compare::LOAD_PLAN, "load-plan.json"),
                    (compare::TEACHER_FORCING, "teacher_forcing.jsonl"),
                    (compare::CHAT_TEMPLATE, "chat_template.json"),
                    (compare::RESULTS, "results.json"),
                    (compare::REPORT_MD, "report.md"),
                    (compare::REPORT_HTML, "report.html"),
                    (compare::TABLE, "comparison_table.md"),
                    (compare::JUNIT, "junit.xml"),
                ],
            ),
            (
                distribution::folder(dir),
                &[
                    (distribution::MANIFEST, "distribution.json"),
                    (distribution::RESULTS, "results.json"),
                    (distribution::REPORT_MD, "report.md"),
                    (distribution::REPORT_HTML, "report.html"),
                ],
            ),
            (
                project::folder(dir),
                &[
                    (project::SETTINGS, "project.json"),
                    (project::JOURNAL, "records.jsonl"),
                    (project::RESULTS, "results.json"),
                    (project::REPORT, "report.md"),
                ],
            ),
            (
                soak_report::soak_folder(dir),
                &[
                    (soak_report::SOAK_RECORDS, "soak.jsonl"),
                    (soak_report::SOAK_META, "soak-run.json"),
                    (soak_report::SOAK_JSON, "soak.json"),
                    (soak_report::SOAK_MD, "soak.md"),
                ],
            ),
            (
                schema::bench_folder(dir),
                &[
                    (schema::BENCH_REQUESTS, "bench.jsonl"),
                    (schema::BENCH_JSON, "bench.json"),
                    (schema::BENCH_MD, "bench.md"),
                ],
            ),
            (
                logprobs::folder(dir),
                &[
                    (logprobs::EVIDENCE_JSON, "logprobs.json"),
                    (logprobs::EVIDENCE_MD, "logprobs.md"),
                ],
            ),
        ];
        for (folder, names) in kinds {
            for (constant, name) in names {
                assert_eq!(folder.file(constant), dir.join(name));
            }
        }
    }

    #[derive(Debug, serde::Deserialize)]
    struct Samples {
        samples: u32,
    }

    impl Checked for Samples {
        fn check(&self) -> Result<(), String> {
            match self.samples {
                0 => Err("`samples` is 0".into()),
                _ => Ok(()),
            }
        }
    }

    #[test]
    fn a_checked_manifest_out_of_bounds_names_the_file_and_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let folder = distribution::folder(dir.path());
        folder.write_manifest(&json!({"samples": 10})).unwrap();
        let back: Samples = folder.read_checked_manifest().unwrap();
        assert_eq!(back.samples, 10);
        folder.write_manifest(&json!({"samples": 0})).unwrap();
        let e = format!(
            "{:#}",
            folder.read_checked_manifest::<Samples>().unwrap_err()
        );
        assert!(
            e.contains("distribution.json: invalid distribution manifest: `samples` is 0"),
            "{e}"
        );
    }

    #[test]
    fn a_folder_holds_its_files_and_journals_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let folder = compare::folder(dir.path());
        assert!(!folder.holds(compare::MANIFEST));
        folder
            .write(compare::MANIFEST, b"{\"repeats\": 1}\n")
            .unwrap();
        assert!(folder.holds(compare::MANIFEST));
        let read: Lines<Value> = folder.read_lines(compare::RECORDS).unwrap();
        assert!(read.values.is_empty() && read.skipped.is_empty());
        let mut journal = folder.append_to(compare::RECORDS).unwrap();
        journal.append(&json!({"n": 1})).unwrap();
        folder
            .append_to(compare::RECORDS)
            .unwrap()
            .append(&json!({"n": 2}))
            .unwrap();
        let read: Lines<Value> = folder.read_lines(compare::RECORDS).unwrap();
        assert_eq!(read.values, [json!({"n": 1}), json!({"n": 2})]);
        // A JSON file of its own is pretty, without a last newline.
        folder
            .write_json(compare::LOAD_PLAN, &json!({"levels": [1]}))
            .unwrap();
        let written = std::fs::read_to_string(folder.file(compare::LOAD_PLAN)).unwrap();
        assert_eq!(written, "{\n  \"levels\": [\n    1\n  ]\n}");

        // A created journal starts empty; a torn line is noted with the journal's name.
        let soak = soak_report::soak_folder(dir.path());
        std::fs::write(soak.file(soak_report::SOAK_RECORDS), "{\"seq\": 1}\n").unwrap();
        let mut journal = soak.create_journal(soak_report::SOAK_RECORDS).unwrap();
        journal.append(&json!({"seq": 2})).unwrap();
        let read: Lines<Value> = soak.read_lines(soak_report::SOAK_RECORDS).unwrap();
        assert_eq!(read.values, [json!({"seq": 2})]);
        std::fs::write(soak.file(soak_report::SOAK_RECORDS), b"{\"seq\": 3").unwrap();
        let read: Lines<Value> = soak.read_lines(soak_report::SOAK_RECORDS).unwrap();
        assert!(read.values.is_empty());
        assert_eq!(read.skipped.len(), 1, "{:?}", read.skipped);
        assert!(
            read.skipped[0].contains("soak.jsonl:1:"),
            "{}",
            read.skipped[0]
        );
    }
}
