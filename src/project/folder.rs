//! The `coherence project` run folder: its file names (project.json, records.jsonl, results.json,
//! report.md; the last three with the project's own schemas, not compare's), reading them back and
//! writing them (whole files atomically, the journal a flushed line at a time).

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::run_folder::{
    create_run_dir, read_json_lines, read_run_file, write_atomic, JsonLines, Lines,
};

/// What the run was started with, read back by `--resume`.
const SETTINGS: &str = "project.json";
/// One line per answer (a `run::Record`), appended as each arrives.
const JOURNAL: &str = "records.jsonl";
/// The project results (`project::ProjectResults`).
const RESULTS: &str = "results.json";
/// The Markdown report.
const REPORT: &str = "report.md";

/// A project run folder.
#[derive(Debug, Clone)]
pub struct ProjectFolder {
    dir: PathBuf,
}

impl ProjectFolder {
    pub fn new(dir: &Path) -> Self {
        ProjectFolder {
            dir: dir.to_path_buf(),
        }
    }

    /// Create the folder (and its parents).
    pub fn create(&self) -> anyhow::Result<()> {
        create_run_dir(&self.dir)
    }

    /// The settings of the run; an error says the folder is not a project run.
    pub fn read_settings<T: DeserializeOwned>(&self) -> anyhow::Result<T> {
        read_run_file(&self.dir, SETTINGS, "project run", "project settings")
    }

    /// Write project.json atomically.
    pub fn write_settings<T: Serialize>(&self, settings: &T) -> anyhow::Result<()> {
        let body = serde_json::to_vec_pretty(settings).context("cannot serialise project.json")?;
        write_atomic(&self.dir.join(SETTINGS), &body)
    }

    /// Every readable journal line (none without a journal); unreadable lines are noted.
    pub fn read_journal<T: DeserializeOwned>(&self) -> anyhow::Result<Lines<T>> {
        read_json_lines(&self.dir.join(JOURNAL))
    }

    /// The journal, opened for appending.
    pub fn append_journal(&self) -> anyhow::Result<JsonLines> {
        JsonLines::append_to(&self.dir.join(JOURNAL))
    }

    /// The Markdown report.
    pub fn report_path(&self) -> PathBuf {
        self.dir.join(REPORT)
    }

    /// Write results.json and report.md, each atomically.
    pub fn write_reports<T: Serialize>(&self, results: &T, report: &str) -> anyhow::Result<()> {
        let json = serde_json::to_vec_pretty(results).context("cannot serialise results.json")?;
        write_atomic(&self.dir.join(RESULTS), &json)?;
        write_atomic(&self.report_path(), report.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_written_under_their_names_and_settings_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let folder = ProjectFolder::new(&dir.path().join("run"));
        folder.create().unwrap();
        folder
            .write_settings(&serde_json::json!({"tasks": ["a"]}))
            .unwrap();
        let back: serde_json::Value = folder.read_settings().unwrap();
        assert_eq!(back["tasks"][0], "a");
        folder
            .write_reports(&serde_json::json!({"complete": true}), "# report\n")
            .unwrap();
        let results = std::fs::read_to_string(dir.path().join("run/results.json")).unwrap();
        assert!(results.contains("\"complete\": true"), "{results}");
        assert_eq!(
            std::fs::read_to_string(folder.report_path()).unwrap(),
            "# report\n"
        );
    }

    #[test]
    fn a_folder_without_settings_is_named_as_not_a_project_run() {
        let dir = tempfile::tempdir().unwrap();
        let e = ProjectFolder::new(dir.path())
            .read_settings::<serde_json::Value>()
            .unwrap_err();
        assert!(
            format!("{e:#}").contains("is not a project run folder"),
            "{e:#}"
        );
    }
}
