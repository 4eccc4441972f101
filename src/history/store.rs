//! The history database: one SQLite file with one row per check, its schema versioned so a later
//! coherence can migrate it, written by one process at a time and read by any number.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, Row, TransactionBehavior};

use super::{Check, CheckStatus};
use crate::run_folder::{hold_file, HeldByAnotherProcess, Hold};

/// Marks the file as a coherence history (SQLite's `PRAGMA application_id`: "Cohr").
const APPLICATION_ID: i32 = 0x436F_6872;

/// The schema this coherence writes and reads (`PRAGMA user_version`); a later one that changes
/// the table migrates from it.
pub const SCHEMA_VERSION: i32 = 1;

/// The columns after `id`, in the order [`History::insert`] binds them and [`check_from_row`]
/// reads them: one per field of [`Check`].
const COLUMNS: [(&str, &str); 22] = [
    ("name", "TEXT NOT NULL"),
    ("started_at", "TEXT NOT NULL"),
    ("endpoint", "TEXT NOT NULL"),
    ("baseline", "TEXT NOT NULL"),
    ("status", "TEXT NOT NULL"),
    ("identity", "TEXT NOT NULL"),
    ("behaviour", "TEXT NOT NULL"),
    ("because", "TEXT NOT NULL"),
    // Nullable: SQLite stores a NaN as NULL, and a check is kept even then (read back as NaN).
    ("e_value", "REAL"),
    ("pair_further", "INTEGER NOT NULL"),
    ("control_further", "INTEGER NOT NULL"),
    ("ties", "INTEGER NOT NULL"),
    ("substituted_share", "REAL"),
    ("substituted_low", "REAL"),
    ("substituted_high", "REAL"),
    ("quality_difference", "REAL"),
    ("quality_low", "REAL"),
    ("quality_high", "REAL"),
    ("graded", "INTEGER NOT NULL"),
    ("requests", "INTEGER NOT NULL"),
    ("failed", "INTEGER NOT NULL"),
    ("run_dir", "TEXT NOT NULL"),
];

/// The history database at `$COHERENCE_DATA_DIR/history.sqlite`, else
/// `$XDG_DATA_HOME/coherence/history.sqlite`, else `~/.local/share/coherence/history.sqlite`
/// (`./history.sqlite` where not even `HOME` is set).
pub fn default_db() -> PathBuf {
    default_db_in(|name| std::env::var_os(name))
}

/// [`default_db`] with the environment read through `var` (empty values count as unset).
fn default_db_in(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("COHERENCE_DATA_DIR") {
        return dir.join("history.sqlite");
    }
    // The XDG spec ignores a relative XDG_DATA_HOME.
    let data_home = var("XDG_DATA_HOME")
        .filter(|d| d.is_absolute())
        .or_else(|| var("HOME").map(|home| home.join(".local").join("share")));
    match data_home {
        Some(dir) => dir.join("coherence").join("history.sqlite"),
        None => PathBuf::from("history.sqlite"),
    }
}

/// The lock file a writer holds: `PATH.lock` beside the database.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// `path` as an SQLite `file:` URI (`?` and `#` escaped, so the caller may add parameters).
fn sqlite_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            '%' => uri.push_str("%25"),
            c => uri.push(c),
        }
    }
    uri
}

/// Create the folder `path` is in, when missing.
fn create_folder_of(path: &Path) -> anyhow::Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the folder {}", dir.display())),
        None => Ok(()),
    }
}

/// Checks as the history lists them: each with its id, oldest first.
pub type Listed = Vec<(i64, Check)>;

/// An open history database.
pub struct History {
    path: PathBuf,
    db: Connection,
    /// Opened for reading, an empty file (no table yet): no checks, nothing to read.
    empty: bool,
}

impl History {
    /// Open the history at `path`, creating it (and its folder) when missing. A file that is not
    /// a coherence history, or one written by a newer coherence, is refused naming the file.
    pub fn open(path: &Path) -> anyhow::Result<History> {
        create_folder_of(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db = Connection::open_with_flags(path, flags)
            .with_context(|| format!("cannot open the history {}", path.display()))?;
        let mut history = History {
            path: path.to_path_buf(),
            db,
            empty: false,
        };
        history.prepare()?;
        Ok(history)
    }

    /// Open the history at `path` for reading only, as `coherence history` does: nothing is
    /// created or written, so a database on read-only storage (or one beside which SQLite can
    /// make no file) is read too, as an immutable file when the shared-memory file of its
    /// journal cannot be made. A file that is not a coherence history is refused as by
    /// [`History::open`].
    pub fn open_for_reading(path: &Path) -> anyhow::Result<History> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let open = |uri: &str| -> anyhow::Result<History> {
            let db = Connection::open_with_flags(uri, flags)
                .with_context(|| format!("cannot open the history {}", path.display()))?;
            let mut history = History {
                path: path.to_path_buf(),
                db,
                empty: false,
            };
            history
                .db
                .busy_timeout(std::time::Duration::from_secs(10))
                .with_context(|| format!("cannot open the history {}", path.display()))?;
            history.empty = history.identify()? == Identity::Empty;
            Ok(history)
        };
        let uri = sqlite_uri(path);
        open(&uri).or_else(|first| open(&format!("{uri}?immutable=1")).map_err(|_| first))
    }

    /// [`History::open`] for the one process that writes: holds `PATH.lock` for the rest of the
    /// process first, and is refused ([`HeldByAnotherProcess`], naming the database and the
    /// holder's pid) while another process holds it, and ([`crate::run_folder::UnsafeLockFile`])
    /// when `PATH.lock` is a link, a directory or another file. Readers need no lock.
    pub fn open_for_writing(path: &Path) -> anyhow::Result<History> {
        create_folder_of(path)?;
        if let Hold::Busy(pid) = hold_file(&lock_path(path))? {
            return Err(HeldByAnotherProcess {
                what: "the history database",
                path: path.to_path_buf(),
                pid,
            }
            .into());
        }
        History::open(path)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Check that the file is a coherence history of a schema this coherence reads, create the
    /// schema in a new (empty) file, and set the journal: WAL, every commit synced to disk.
    fn prepare(&mut self) -> anyhow::Result<()> {
        let path = self.path.clone();
        let failed = || format!("cannot open the history {}", path.display());
        // A wait for another connection's write (a writer's commit, a concurrent creation)
        // rather than an immediate "database is locked".
        self.db
            .busy_timeout(std::time::Duration::from_secs(10))
            .with_context(failed)?;
        if self.identify()? == Identity::Empty {
            let tx = self
                .db
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .with_context(failed)?;
            let columns: Vec<String> = COLUMNS.iter().map(|(n, t)| format!("{n} {t}")).collect();
            tx.execute_batch(&format!(
                "CREATE TABLE IF NOT EXISTS checks (id INTEGER PRIMARY KEY AUTOINCREMENT, {});
                 CREATE INDEX IF NOT EXISTS checks_by_name ON checks (name, started_at, id);
                 PRAGMA application_id = {APPLICATION_ID};
                 PRAGMA user_version = {SCHEMA_VERSION};",
                columns.join(", ")
            ))
            .with_context(failed)?;
            tx.commit().with_context(failed)?;
        }
        self.identify()?;
        let mode: String = self
            .db
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .with_context(failed)?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!(
                "{}: SQLite kept the journal mode {mode} instead of WAL",
                path.display()
            );
        }
        self.db
            .pragma_update(None, "synchronous", "FULL")
            .with_context(failed)?;
        Ok(())
    }

    /// What the file is: an empty database (new), or a coherence history of this schema; an
    /// error otherwise.
    fn identify(&self) -> anyhow::Result<Identity> {
        let header = |pragma: &str| -> rusqlite::Result<i32> {
            self.db
                .query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0))
        };
        let not_history = || format!("{} is not a coherence history", self.path.display());
        let failed = || format!("cannot read the history {}", self.path.display());
        let application_id = header("application_id").map_err(|e| match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => {
                anyhow!("{} (not an SQLite database)", not_history())
            }
            _ => anyhow::Error::new(e).context(failed()),
        })?;
        let version = header("user_version").with_context(failed)?;
        let objects: i64 = self
            .db
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .with_context(failed)?;
        match (application_id, version) {
            (0, 0) if objects == 0 => Ok(Identity::Empty),
            (APPLICATION_ID, SCHEMA_VERSION) => Ok(Identity::Current),
            (APPLICATION_ID, newer) if newer > SCHEMA_VERSION => bail!(
                "{} was written by a newer coherence (history schema {newer}; this one reads \
                 schema {SCHEMA_VERSION}): upgrade coherence to read it",
                self.path.display()
            ),
            (APPLICATION_ID, other) => bail!(
                "{} has history schema {other}, which this coherence does not know",
                self.path.display()
            ),
            _ => bail!("{} (an SQLite database of something else)", not_history()),
        }
    }

    /// Record one check (one transaction, synced before it returns); its id.
    pub fn insert(&mut self, check: &Check) -> anyhow::Result<i64> {
        let names: Vec<&str> = COLUMNS.iter().map(|(n, _)| *n).collect();
        let placeholders: Vec<String> = (1..=COLUMNS.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO checks ({}) VALUES ({})",
            names.join(", "),
            placeholders.join(", ")
        );
        let c = check;
        let tx = self.db.transaction()?;
        tx.execute(
            &sql,
            params![
                c.name,
                c.started_at,
                c.endpoint,
                c.baseline,
                c.status.as_str(),
                c.identity,
                c.behaviour,
                c.because,
                c.e_value,
                c.pair_further,
                c.control_further,
                c.ties,
                c.substituted_share,
                c.substituted_low,
                c.substituted_high,
                c.quality_difference,
                c.quality_low,
                c.quality_high,
                c.graded,
                c.requests,
                c.failed,
                c.run_dir,
            ],
        )
        .with_context(|| format!("cannot record the check in {}", self.path.display()))?;
        let id = tx.last_insert_rowid();
        tx.commit()
            .with_context(|| format!("cannot record the check in {}", self.path.display()))?;
        Ok(id)
    }

    /// Every check, or those of the watch `name`, oldest first, each with its id; a row that
    /// cannot be read as a check is left out ([`History::checks_and_skipped`] says which).
    pub fn checks(&self, name: Option<&str>) -> anyhow::Result<Vec<(i64, Check)>> {
        Ok(self.checks_and_skipped(name)?.0)
    }

    /// [`History::checks`], and a warning for each row that cannot be read as a check (a
    /// tampered or damaged one, naming its id and what is wrong), so one bad row does not hide
    /// every other check.
    pub fn checks_and_skipped(&self, name: Option<&str>) -> anyhow::Result<(Listed, Vec<String>)> {
        let names: Vec<&str> = COLUMNS.iter().map(|(n, _)| *n).collect();
        let sql = format!(
            "SELECT id, {} FROM checks WHERE ?1 IS NULL OR name = ?1 ORDER BY started_at, id",
            names.join(", ")
        );
        if self.empty {
            return Ok((Vec::new(), Vec::new()));
        }
        let read = || -> rusqlite::Result<(Listed, Vec<String>)> {
            let mut statement = self.db.prepare(&sql)?;
            let mut rows = statement.query([name])?;
            let (mut checks, mut skipped) = (Vec::new(), Vec::new());
            while let Some(row) = rows.next()? {
                match check_from_row(row) {
                    Ok(check) => checks.push(check),
                    Err(e) => skipped.push(format!(
                        "{}: check {} skipped, it cannot be read: {e}",
                        self.path.display(),
                        row.get::<_, i64>(0).map_or("?".into(), |id| id.to_string())
                    )),
                }
            }
            Ok((checks, skipped))
        };
        read().with_context(|| format!("cannot read the checks in {}", self.path.display()))
    }

    /// The latest check of every watch (the last one stored under its name), by name.
    pub fn latest(&self) -> anyhow::Result<Vec<Check>> {
        let names: Vec<&str> = COLUMNS.iter().map(|(n, _)| *n).collect();
        let sql = format!(
            "SELECT id, {} FROM checks WHERE id IN (SELECT MAX(id) FROM checks GROUP BY name) \
             ORDER BY name",
            names.join(", ")
        );
        let read = || -> rusqlite::Result<Vec<(i64, Check)>> {
            let mut statement = self.db.prepare(&sql)?;
            let rows = statement.query_map([], check_from_row)?;
            rows.collect()
        };
        let rows =
            read().with_context(|| format!("cannot read the checks in {}", self.path.display()))?;
        Ok(rows.into_iter().map(|(_, c)| c).collect())
    }

    /// The names of the watches with checks, in alphabetical order.
    pub fn names(&self) -> anyhow::Result<Vec<String>> {
        if self.empty {
            return Ok(Vec::new());
        }
        let read = || -> rusqlite::Result<Vec<String>> {
            let mut statement = self
                .db
                .prepare("SELECT DISTINCT name FROM checks ORDER BY name")?;
            let rows = statement.query_map([], |r| r.get(0))?;
            rows.collect()
        };
        read().with_context(|| format!("cannot read the checks in {}", self.path.display()))
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Identity {
    Empty,
    Current,
}

/// The check status in column `i`; a word that names none is an error saying so.
fn status_in(r: &Row, i: usize) -> rusqlite::Result<CheckStatus> {
    let word: String = r.get(i)?;
    CheckStatus::parse(&word).ok_or_else(|| {
        let why = format!("`{word}` is not a check status (unchanged, flagged, incomplete)");
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, why.into())
    })
}

/// One row of `SELECT id, COLUMNS…`.
fn check_from_row(r: &Row) -> rusqlite::Result<(i64, Check)> {
    let check = Check {
        name: r.get(1)?,
        started_at: r.get(2)?,
        endpoint: r.get(3)?,
        baseline: r.get(4)?,
        status: status_in(r, 5)?,
        identity: r.get(6)?,
        behaviour: r.get(7)?,
        because: r.get(8)?,
        e_value: r.get::<_, Option<f64>>(9)?.unwrap_or(f64::NAN),
        pair_further: r.get(10)?,
        control_further: r.get(11)?,
        ties: r.get(12)?,
        substituted_share: r.get(13)?,
        substituted_low: r.get(14)?,
        substituted_high: r.get(15)?,
        quality_difference: r.get(16)?,
        quality_low: r.get(17)?,
        quality_high: r.get(18)?,
        graded: r.get(19)?,
        requests: r.get(20)?,
        failed: r.get(21)?,
        run_dir: r.get(22)?,
    };
    Ok((r.get(0)?, check))
}

#[cfg(test)]
mod tests;
