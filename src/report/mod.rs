//! Renderers: results to bytes (results.json, report.md, comparison_table.md, junit.xml), and
//! writing and reading the run folder's reports.

mod diff;
#[cfg(test)]
mod fixture;
mod html;
mod junit;
mod markdown;
mod table;

use std::path::Path;

use anyhow::Context;

pub(crate) use junit::render_junit;
pub(crate) use markdown::render_report;
pub use table::markdown_table;
pub(crate) use table::render_table;

use crate::analysis::Results;

pub const RESULTS_FILE: &str = "results.json";
pub const REPORT_FILE: &str = "report.md";
pub const HTML_FILE: &str = "report.html";
pub const TABLE_FILE: &str = "comparison_table.md";
pub const JUNIT_FILE: &str = "junit.xml";

pub fn render_json(results: &Results) -> String {
    serde_json::to_string_pretty(results).expect("results serialise") + "\n"
}

/// Write results.json and the rendered reports into the run folder.
pub fn write_all(dir: &Path, results: &Results) -> anyhow::Result<()> {
    write_file(dir, RESULTS_FILE, &render_json(results))?;
    write_rendered(dir, results)
}

/// Write report.md, report.html, comparison_table.md and junit.xml (not results.json).
pub fn write_rendered(dir: &Path, results: &Results) -> anyhow::Result<()> {
    write_file(dir, REPORT_FILE, &render_report(results))?;
    write_file(dir, HTML_FILE, &html::render_html(results))?;
    write_file(dir, TABLE_FILE, &render_table(results))?;
    write_file(dir, JUNIT_FILE, &render_junit(results))
}

fn write_file(dir: &Path, name: &str, body: &str) -> anyhow::Result<()> {
    crate::run_folder::write_files(dir, &[(name, body)])
}

/// Read a run folder's results.json.
pub fn read_results(dir: &Path) -> anyhow::Result<Results> {
    let path = dir.join(RESULTS_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read {}; score the run first with `coherence score {}`",
            path.display(),
            dir.display()
        )
    })?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not a results file of this version", path.display()))
}
