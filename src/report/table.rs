//! comparison_table.md (the quality lines of the headline, the verdict counts, one row per
//! prompt), and the plain Markdown table writer of stdout listings.

use super::sections::answer::quality_lines;
use super::sections::cells::{anchor, answer_cell, names, verdict_cell};
use crate::analysis::Results;
use crate::doc::{code, link, para, strong, text, to_markdown, Block, Line, Part, Table};
use crate::text::clip;

/// comparison_table.md: the headline and one row per prompt.
pub fn render_table(results: &Results) -> String {
    let mut body = Vec::new();
    let quality = quality_lines(results);
    if !quality.is_empty() {
        body.push(Block::List(quality));
    }
    body.push(para(vec![strong(vec![text(results.summary.headline())])]));
    body.push(prompt_table(results, false).into());
    let title = vec![text(format!(
        "Comparison table: {}",
        names(results).join(" vs ")
    ))];
    to_markdown(&[Part::new(1, None, title, body).into()])
}

/// One row per prompt: expected answer, every endpoint's answer, the verdict; with `linked`, each
/// prompt links to its details (inside the report).
pub(super) fn prompt_table(results: &Results, linked: bool) -> Table {
    let names = names(results);
    let mut headers = vec!["prompt", "category", "expected"];
    headers.extend(names.iter().copied());
    headers.push("verdict");
    let mut table = Table::new(&headers);
    table.sortable = true;
    for p in &results.prompts {
        let id = if linked {
            link(anchor(&p.id), vec![code(&p.id)])
        } else {
            code(&p.id)
        };
        let mut row: Vec<Line> = vec![
            vec![id],
            vec![text(&p.category)],
            vec![text(clip(&p.expected, 40))],
        ];
        row.extend(names.iter().map(|n| answer_cell(p.answers.get(*n))));
        row.push(verdict_cell(p.verdict));
        table.row(row);
    }
    table
}

/// A Markdown table of cells that are Markdown already (stdout listings build their own);
/// pipes and newlines inside cells are escaped so that no cell can break its row, and control
/// and bidi characters shown visible ([`crate::doc::visible`]) so that none drives a terminal.
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
    crate::doc::visible(cell)
        .replace('\\', "\\\\")
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
        // Nor drive the terminal that shows it: ESC, OSC and BEL, a bidi override.
        let t = markdown_table(
            &["a"],
            &[vec!["\u{1b}]0;title\u{7}\u{1b}[2J\u{202e}x".into()]],
        );
        assert_eq!(t, "| a |\n| --- |\n| ␛]0;title␇␛[2J\u{fffd}x |\n");
    }

    #[test]
    fn comparison_table_has_the_headline_and_every_prompt() {
        insta::assert_snapshot!(render_table(&crate::report::fixture::results()));
    }
}
