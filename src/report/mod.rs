//! Renderers: results to bytes (Markdown report, comparison table, JSON), and writing the run folder's reports.

mod markdown;
mod table;

use std::path::Path;

use anyhow::Context;

pub use markdown::{render_report, render_table};
pub use table::markdown_table;

use crate::analysis::Results;

pub const RESULTS_FILE: &str = "results.json";
pub const REPORT_FILE: &str = "report.md";
pub const TABLE_FILE: &str = "comparison_table.md";

pub fn render_json(results: &Results) -> String {
    serde_json::to_string_pretty(results).expect("results serialise") + "\n"
}

/// Write results.json, report.md and comparison_table.md into the run folder.
pub fn write_all(dir: &Path, results: &Results) -> anyhow::Result<()> {
    let files = [
        (RESULTS_FILE, render_json(results)),
        (REPORT_FILE, render_report(results)),
        (TABLE_FILE, render_table(results)),
    ];
    for (name, body) in files {
        let path = dir.join(name);
        std::fs::write(&path, body).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
