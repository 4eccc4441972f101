//! The errors and warnings sections: every answer that failed, and what the analysis warned about.

use std::fmt::Write;

use crate::analysis::Results;
use crate::report::table::markdown_table;
use crate::text::clip;

pub(super) fn render(results: &Results, out: &mut String) {
    let errors: Vec<Vec<String>> = results
        .prompts
        .iter()
        .flat_map(|p| {
            p.answers.iter().filter_map(move |(n, a)| {
                a.error
                    .clone()
                    .map(|e| vec![format!("`{}`", p.id), n.clone(), clip(&e, 200)])
            })
        })
        .collect();
    if !errors.is_empty() {
        out.push_str("\n## Errors\n\n");
        out.push_str(&markdown_table(&["prompt", "endpoint", "error"], &errors));
    }
    if !results.warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in &results.warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
}
