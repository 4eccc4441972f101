//! comparison_table.md (the quality lines of the headline, the verdict counts, one row per
//! prompt), and the Markdown table writer every report uses, with cells escaped so
//! that answers cannot break the layout.

use std::fmt::Write;

use super::markdown::answer::quality_lines;
use super::markdown::cells::{anchor, answer_cell, names, verdict_cell};
use crate::analysis::Results;
use crate::text::clip;

/// comparison_table.md: the headline and one row per prompt.
pub fn render_table(results: &Results) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Comparison table: {}\n", names(results).join(" vs "));
    out.push_str(&quality_lines(results));
    if !results.quality.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(out, "**{}**\n", results.summary.headline());
    out.push_str(&prompt_table(results, false));
    out
}

/// One row per prompt: expected answer, every endpoint's answer, the verdict; with `linked`, each
/// prompt links to its details (inside report.md).
pub(super) fn prompt_table(results: &Results, linked: bool) -> String {
    let names = names(results);
    let mut headers = vec!["prompt", "category", "expected"];
    headers.extend(names.iter().copied());
    headers.push("verdict");
    let rows: Vec<Vec<String>> = results
        .prompts
        .iter()
        .map(|p| {
            let mut row = vec![
                if linked {
                    format!("[`{}`](#{})", p.id, anchor(&p.id))
                } else {
                    format!("`{}`", p.id)
                },
                p.category.clone(),
                clip(&p.expected, 40),
            ];
            row.extend(names.iter().map(|n| answer_cell(p.answers.get(*n))));
            row.push(verdict_cell(p.verdict));
            row
        })
        .collect();
    markdown_table(&headers, &rows)
}

/// Render a Markdown table. Pipes and newlines inside cells are escaped.
pub fn markdown_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    out.push_str(&row_line(headers.iter().map(|h| h.to_string())));
    out.push_str(&row_line(headers.iter().map(|_| "---".to_string())));
    for r in rows {
        out.push_str(&row_line(r.iter().cloned()));
    }
    out
}

fn row_line(cells: impl Iterator<Item = String>) -> String {
    let cells: Vec<String> = cells.map(|c| escape(&c)).collect();
    format!("| {} |\n", cells.join(" | "))
}

fn escape(cell: &str) -> String {
    cell.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace("\r\n", " ")
        .replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table() {
        let t = markdown_table(&["a", "b"], &[vec!["x|y".into(), "two\nlines".into()]]);
        assert_eq!(t, "| a | b |\n| --- | --- |\n| x\\|y | two lines |\n");
    }

    #[test]
    fn comparison_table_has_the_headline_and_every_prompt() {
        insta::assert_snapshot!(render_table(&crate::report::fixture::results()));
    }
}
