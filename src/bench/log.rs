//! Files of a bench or soak run: JSON Lines (one line per request, written and flushed as each
//! arrives so a killed run keeps everything before the kill; read back skipping torn lines) and
//! whole report files; and the names of the files in those run folders.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// `bench`: one line per request, as it completes.
pub const BENCH_REQUESTS: &str = "bench.jsonl";
/// `bench`: the report (also printed by `--json`).
pub const BENCH_JSON: &str = "bench.json";
/// `bench`: the Markdown summary.
pub const BENCH_MD: &str = "bench.md";
/// `soak`: one flushed line per answer, the journal `soak --report` re-renders from.
pub const SOAK_RECORDS: &str = "soak.jsonl";
/// `soak`: the settings and how the soak ended.
pub const SOAK_META: &str = "soak-run.json";
/// `soak`: the report (also printed by `--json`).
pub const SOAK_JSON: &str = "soak.json";
/// `soak`: the Markdown summary.
pub const SOAK_MD: &str = "soak.md";

/// An append-only JSON Lines file.
pub struct JsonLines {
    path: PathBuf,
    file: File,
}

impl JsonLines {
    /// Create (or truncate) `path`.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
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
            .with_context(|| format!("cannot write to {}", self.path.display()))
    }
}

/// Write whole files (reports) into `dir`, naming the file in any error.
pub fn write_files(dir: &Path, files: &[(&str, String)]) -> anyhow::Result<()> {
    for (name, body) in files {
        let path = dir.join(name);
        std::fs::write(&path, body).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Every readable line of `path`, plus a `file:line: reason` note for each line skipped.
pub fn read<T: DeserializeOwned>(path: &Path) -> anyhow::Result<(Vec<T>, Vec<String>)> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut values = Vec::new();
    let mut skipped = Vec::new();
    for (i, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(&line) {
            Ok(v) => values.push(v),
            Err(e) => skipped.push(format!("{}:{}: skipped: {e}", path.display(), i + 1)),
        }
    }
    Ok((values, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_a_torn_tail_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let mut log = JsonLines::create(&path).unwrap();
        log.append(&serde_json::json!({"n": 1})).unwrap();
        log.append(&serde_json::json!({"n": 2})).unwrap();
        drop(log);
        let mut raw = std::fs::read(&path).unwrap();
        raw.extend_from_slice(b"{\"n\": 3");
        std::fs::write(&path, raw).unwrap();
        let (values, skipped): (Vec<serde_json::Value>, _) = read(&path).unwrap();
        assert_eq!(values.len(), 2);
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].contains(":3:"), "{}", skipped[0]);
    }
}
