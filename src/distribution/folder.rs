//! The `coherence distribution` run folder: its file names (distribution.json, the manifest;
//! records.jsonl, the answers, written and read by `run::journal`; results.json with this
//! command's own schema; report.md and report.html), reading the manifest back and writing the
//! reports, each whole file atomically.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::run_folder::{create_run_dir, read_checked_run_file, write_atomic, Checked};

/// What the run was started with (endpoints, sampling parameters, prompts, test, gate); read back
/// by `--resume`.
const MANIFEST: &str = "distribution.json";
/// `distribution::DistributionResults`.
const RESULTS: &str = "results.json";
const REPORT_MD: &str = "report.md";
const REPORT_HTML: &str = "report.html";

/// A distribution run folder.
#[derive(Debug, Clone)]
pub struct DistributionFolder {
    dir: PathBuf,
}

impl DistributionFolder {
    pub fn new(dir: &Path) -> Self {
        DistributionFolder {
            dir: dir.to_path_buf(),
        }
    }

    /// Create the folder (and its parents).
    pub fn create(&self) -> anyhow::Result<()> {
        create_run_dir(&self.dir)
    }

    /// The manifest, checked ([`Checked`]); an error says the folder is not a distribution run,
    /// or names the file and the field out of bounds.
    pub fn read_manifest<T: DeserializeOwned + Checked>(&self) -> anyhow::Result<T> {
        read_checked_run_file(
            &self.dir,
            MANIFEST,
            "distribution run",
            "distribution manifest",
        )
    }

    pub fn write_manifest<T: Serialize>(&self, manifest: &T) -> anyhow::Result<()> {
        let body = serde_json::to_vec_pretty(manifest).context("cannot serialise the manifest")?;
        write_atomic(&self.dir.join(MANIFEST), &body)
    }

    /// The Markdown report.
    pub fn report_path(&self) -> PathBuf {
        self.dir.join(REPORT_MD)
    }

    /// Write results.json, report.md and report.html.
    pub fn write_reports<T: Serialize>(
        &self,
        results: &T,
        markdown: &str,
        html: &str,
    ) -> anyhow::Result<()> {
        let json = serde_json::to_vec_pretty(results).context("cannot serialise results.json")?;
        write_atomic(&self.dir.join(RESULTS), &json)?;
        write_atomic(&self.report_path(), markdown.as_bytes())?;
        write_atomic(&self.dir.join(REPORT_HTML), html.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Settings {
        samples: u32,
    }

    impl Checked for Settings {
        fn check(&self) -> Result<(), String> {
            match self.samples {
                0 => Err("`samples` is 0".into()),
                _ => Ok(()),
            }
        }
    }

    #[test]
    fn writes_under_its_names_and_reads_the_manifest_back_checked() {
        let dir = tempfile::tempdir().unwrap();
        let folder = DistributionFolder::new(&dir.path().join("run"));
        folder.create().unwrap();
        folder
            .write_manifest(&serde_json::json!({"samples": 10}))
            .unwrap();
        let back: Settings = folder.read_manifest().unwrap();
        assert_eq!(back.samples, 10);
        folder
            .write_manifest(&serde_json::json!({"samples": 0}))
            .unwrap();
        let e = format!("{:#}", folder.read_manifest::<Settings>().unwrap_err());
        assert!(
            e.contains("distribution.json: invalid distribution manifest: `samples` is 0"),
            "{e}"
        );
        folder
            .write_reports(
                &serde_json::json!({"complete": true}),
                "# md\n",
                "<p>html</p>",
            )
            .unwrap();
        let read = |n: &str| std::fs::read_to_string(dir.path().join("run").join(n)).unwrap();
        assert!(read("results.json").contains("\"complete\": true"));
        assert_eq!(read("report.md"), "# md\n");
        assert_eq!(read("report.html"), "<p>html</p>");
        let e = DistributionFolder::new(dir.path())
            .read_manifest::<Settings>()
            .unwrap_err();
        assert!(
            format!("{e:#}").contains("is not a distribution run folder"),
            "{e:#}"
        );
    }
}
