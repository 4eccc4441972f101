//! The names of the files in bench and soak run folders, and their I/O through the shared
//! run-folder module (JSON Lines written and flushed a line at a time, read back skipping torn
//! lines; whole report files).

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::run_folder;

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

pub use crate::run_folder::JsonLines;

/// Write whole files (reports) into `dir`, naming the file in any error.
pub fn write_files(dir: &Path, files: &[(&str, String)]) -> anyhow::Result<()> {
    let files: Vec<(&str, &str)> = files.iter().map(|(n, b)| (*n, b.as_str())).collect();
    run_folder::write_files(dir, &files)
}

/// Every readable line of `path`, plus a `file:line: reason` note for each line skipped.
pub fn read<T: DeserializeOwned>(path: &Path) -> anyhow::Result<(Vec<T>, Vec<String>)> {
    let lines = run_folder::read_json_lines(path)?;
    Ok((lines.values, lines.skipped))
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
