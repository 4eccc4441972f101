//! The statistics section: each compared endpoint against the reference, paired over graded
//! prompts, in sentences and a table per category with the exact McNemar p-value.

use std::fmt::Write;

use crate::analysis::{format_p, Results};
use crate::report::table::markdown_table;

pub(super) fn render(results: &Results, out: &mut String) {
    if results.statistics.is_empty() {
        return;
    }
    out.push_str("\n## Statistics\n\n");
    out.push_str("Paired over prompts with ground truth that both endpoints answered; p is the exact McNemar test.\n\n");
    for s in &results.statistics {
        let _ = writeln!(out, "- **{}**", s.overall.statement);
        for c in &s.categories {
            if c.reference_only + c.other_only > 0 {
                let _ = writeln!(out, "- {}", c.statement);
            }
        }
        let rows: Vec<Vec<String>> = s
            .categories
            .iter()
            .filter(|c| c.graded > 0)
            .map(|c| {
                vec![
                    c.category.clone().unwrap_or_default(),
                    c.graded.to_string(),
                    c.both_correct.to_string(),
                    c.reference_only.to_string(),
                    c.other_only.to_string(),
                    c.both_wrong.to_string(),
                    format_p(c.p_value),
                ]
            })
            .collect();
        out.push('\n');
        let only_ref = format!("{} only", s.reference);
        let only_other = format!("{} only", s.other);
        out.push_str(&markdown_table(
            &[
                "category",
                "graded",
                "both right",
                &only_ref,
                &only_other,
                "both wrong",
                "p",
            ],
            &rows,
        ));
        out.push('\n');
    }
}
