//! The bench and soak run folders: each type owns its file names, creates its journal (JSON Lines
//! written and flushed a line at a time, read back skipping torn lines) and writes its reports
//! atomically, through the shared run-folder module.

use std::path::{Path, PathBuf};

use super::render;
use super::schema::BenchReport;
use super::soak_report::{SoakMeta, SoakRecord, SoakReport};
use crate::run_folder::{self, read_json_lines, read_run_file, write_atomic};

pub use crate::run_folder::JsonLines;

/// `bench`: one line per request, as it completes.
const BENCH_REQUESTS: &str = "bench.jsonl";
/// `bench`: the report (also printed by `--json`).
const BENCH_JSON: &str = "bench.json";
/// `bench`: the Markdown summary (of one endpoint, or side by side for several).
const BENCH_MD: &str = "bench.md";
/// `soak`: one flushed line per answer, the journal `soak --report` re-renders from.
const SOAK_RECORDS: &str = "soak.jsonl";
/// `soak`: the settings and how the soak ended.
const SOAK_META: &str = "soak-run.json";
/// `soak`: the report (also printed by `--json`).
const SOAK_JSON: &str = "soak.json";
/// `soak`: the Markdown summary.
const SOAK_MD: &str = "soak.md";

/// A `coherence bench` run folder (one per endpoint; several endpoints share a parent folder
/// holding the side-by-side summary).
#[derive(Debug, Clone)]
pub struct BenchFolder {
    dir: PathBuf,
}

impl BenchFolder {
    pub fn new(dir: &Path) -> Self {
        BenchFolder {
            dir: dir.to_path_buf(),
        }
    }

    /// Whether the folder already holds a bench report.
    pub fn holds_report(&self) -> bool {
        self.dir.join(BENCH_JSON).exists()
    }

    /// Whether the folder already holds a Markdown summary (a side-by-side one, for a parent).
    pub fn holds_summary(&self) -> bool {
        self.dir.join(BENCH_MD).exists()
    }

    /// The Markdown summary.
    pub fn summary_path(&self) -> PathBuf {
        self.dir.join(BENCH_MD)
    }

    /// Create the folder and its request journal.
    pub fn create_journal(&self) -> anyhow::Result<JsonLines> {
        run_folder::create_run_dir(&self.dir)?;
        JsonLines::create(&self.dir.join(BENCH_REQUESTS))
    }

    /// Write bench.json and bench.md, each atomically.
    pub fn write_report(&self, report: &BenchReport) -> anyhow::Result<()> {
        write_atomic(
            &self.dir.join(BENCH_JSON),
            render::bench_json(report).as_bytes(),
        )?;
        write_atomic(
            &self.summary_path(),
            render::bench_markdown(report).as_bytes(),
        )
    }

    /// Write the side-by-side summary of several endpoints (a parent folder's bench.md).
    pub fn write_side_by_side(&self, markdown: &str) -> anyhow::Result<()> {
        write_atomic(&self.summary_path(), markdown.as_bytes())
    }
}

/// A `coherence soak` run folder: its settings, its journal and its reports.
#[derive(Debug, Clone)]
pub struct SoakFolder {
    dir: PathBuf,
}

impl SoakFolder {
    pub fn new(dir: &Path) -> Self {
        SoakFolder {
            dir: dir.to_path_buf(),
        }
    }

    /// Whether the folder already holds a soak journal.
    pub fn holds_journal(&self) -> bool {
        self.journal_path().exists()
    }

    /// The journal, one line per answer.
    pub fn journal_path(&self) -> PathBuf {
        self.dir.join(SOAK_RECORDS)
    }

    /// The Markdown summary.
    pub fn summary_path(&self) -> PathBuf {
        self.dir.join(SOAK_MD)
    }

    /// Create the folder.
    pub fn create(&self) -> anyhow::Result<()> {
        run_folder::create_run_dir(&self.dir)
    }

    /// Create (or truncate) the journal.
    pub fn create_journal(&self) -> anyhow::Result<JsonLines> {
        JsonLines::create(&self.journal_path())
    }

    /// The settings and how the soak ended; an error says the folder is not a soak run.
    pub fn read_meta(&self) -> anyhow::Result<SoakMeta> {
        read_run_file(&self.dir, SOAK_META, "soak run", "soak settings")
    }

    /// Write soak-run.json atomically, so a kill never leaves half a file.
    pub fn write_meta(&self, meta: &SoakMeta) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(meta)? + "\n";
        write_atomic(&self.dir.join(SOAK_META), text.as_bytes())
    }

    /// Every readable journal line (none without a journal), plus a `file:line: reason` note for
    /// each line skipped.
    pub fn read_records(&self) -> anyhow::Result<(Vec<SoakRecord>, Vec<String>)> {
        let lines = read_json_lines(&self.journal_path())?;
        Ok((lines.values, lines.skipped))
    }

    /// Write soak.json and soak.md, each atomically.
    pub fn write_report(&self, report: &SoakReport) -> anyhow::Result<()> {
        write_atomic(
            &self.dir.join(SOAK_JSON),
            render::soak_json(report).as_bytes(),
        )?;
        write_atomic(
            &self.summary_path(),
            render::soak_markdown(report).as_bytes(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_soak_folder_reads_back_its_journal_skipping_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let folder = SoakFolder::new(dir.path());
        assert!(!folder.holds_journal());
        let (records, skipped) = folder.read_records().unwrap();
        assert!(records.is_empty() && skipped.is_empty());
        folder.create_journal().unwrap();
        assert!(folder.holds_journal());
        std::fs::write(folder.journal_path(), b"{\"seq\": 3").unwrap();
        let (records, skipped) = folder.read_records().unwrap();
        assert!(records.is_empty());
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].contains("soak.jsonl:1:"), "{}", skipped[0]);
    }

    #[test]
    fn a_folder_without_soak_settings_is_named_as_not_a_soak_run() {
        let dir = tempfile::tempdir().unwrap();
        let e = SoakFolder::new(dir.path()).read_meta().unwrap_err();
        assert!(
            format!("{e:#}").contains("is not a soak run folder"),
            "{e:#}"
        );
        assert!(format!("{e:#}").contains("soak-run.json"), "{e:#}");
    }

    #[test]
    fn a_bench_folder_knows_its_report_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let folder = BenchFolder::new(dir.path());
        assert!(!folder.holds_report() && !folder.holds_summary());
        folder.write_side_by_side("# side by side\n").unwrap();
        assert!(folder.holds_summary() && !folder.holds_report());
        assert_eq!(folder.summary_path(), dir.path().join("bench.md"));
        std::fs::write(dir.path().join("bench.json"), "{}").unwrap();
        assert!(folder.holds_report());
    }
}
