//! The errors and warnings sections: every answer that failed (linked to its prompt), and what
//! the analysis warned about.

use super::cells::anchor;
use crate::analysis::Results;
use crate::doc::{code, link, text, Block, Line, Part, Table};
use crate::text::clip;

pub(super) fn render(results: &Results) -> Vec<Block> {
    let mut parts = Vec::new();
    let mut errors = Table::new(&["prompt", "endpoint", "error"]);
    for p in &results.prompts {
        for (n, a) in &p.answers {
            if let Some(e) = &a.error {
                errors.row(vec![
                    vec![link(anchor(&p.id), vec![code(&p.id)])],
                    vec![text(n)],
                    vec![text(clip(e, 200))],
                ]);
            }
        }
    }
    if !errors.rows.is_empty() {
        parts.push(Part::section("errors", vec![text("Errors")], vec![errors.into()]).into());
    }
    if !results.warnings.is_empty() {
        let items: Vec<Line> = results.warnings.iter().map(|w| vec![text(w)]).collect();
        let body = vec![Block::List(items)];
        parts.push(Part::section("warnings", vec![text("Warnings")], body).into());
    }
    parts
}
