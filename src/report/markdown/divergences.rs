//! The divergences section: one row per prompt whose verdict is not `same`, with every endpoint's
//! answer, why the pairs differ, and whether that is sampler noise or a deployment difference.

use super::cells::{anchor, answer_cell, difference_label, flagged, names, verdict_cell};
use crate::analysis::{Results, Verdict};
use crate::report::table::markdown_table;
use crate::score::clip;

pub(super) fn render(results: &Results, out: &mut String) {
    out.push_str("\n## Divergences\n\n");
    let flagged = flagged(results);
    if flagged.is_empty() {
        out.push_str("None: every prompt got the same verdict on every endpoint.\n");
        return;
    }
    let names = names(results);
    let mut headers = vec!["prompt", "category", "verdict", "expected"];
    headers.extend(names.iter().copied());
    headers.extend(["why", "difference"]);
    let rows: Vec<Vec<String>> = flagged
        .iter()
        .map(|p| {
            let mut row = vec![
                format!("[`{}`](#{})", p.id, anchor(&p.id)),
                p.category.clone(),
                verdict_cell(p.verdict),
                clip(&p.expected, 30),
            ];
            row.extend(names.iter().map(|n| answer_cell(p.answers.get(*n))));
            row.push(
                p.pairs
                    .iter()
                    .filter(|x| x.verdict != Verdict::Same)
                    .map(|x| format!("{}: {}", x.other, x.reason))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            row.push(
                p.pairs
                    .iter()
                    .map(|x| difference_label(x.difference))
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            row
        })
        .collect();
    out.push_str(&markdown_table(&headers, &rows));
}
