//! The `coherence logprobs --out DIR` folder: its file names (logprobs.json, logprobs.md) and
//! writing them, each atomically.

use std::path::{Path, PathBuf};

use crate::run_folder::{create_run_dir, write_atomic};

/// The evidence as JSON (also printed by `--json`).
const EVIDENCE_JSON: &str = "logprobs.json";
/// The Markdown report.
const EVIDENCE_MD: &str = "logprobs.md";

/// A logprobs run folder.
#[derive(Debug, Clone)]
pub struct LogprobsFolder {
    dir: PathBuf,
}

impl LogprobsFolder {
    pub fn new(dir: &Path) -> Self {
        LogprobsFolder {
            dir: dir.to_path_buf(),
        }
    }

    /// Create the folder (and its parents).
    pub fn create(&self) -> anyhow::Result<()> {
        create_run_dir(&self.dir)
    }

    /// Write logprobs.json and logprobs.md, each atomically.
    pub fn write(&self, json: &str, markdown: &str) -> anyhow::Result<()> {
        write_atomic(&self.dir.join(EVIDENCE_JSON), json.as_bytes())?;
        write_atomic(&self.dir.join(EVIDENCE_MD), markdown.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_evidence_under_its_names() {
        let dir = tempfile::tempdir().unwrap();
        let folder = LogprobsFolder::new(&dir.path().join("out"));
        folder.create().unwrap();
        folder.write("{}\n", "# logprobs\n").unwrap();
        let read = |n: &str| std::fs::read_to_string(dir.path().join("out").join(n)).unwrap();
        assert_eq!(read("logprobs.json"), "{}\n");
        assert_eq!(read("logprobs.md"), "# logprobs\n");
    }
}
