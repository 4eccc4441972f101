//! The divergences section: one row per prompt whose verdict is not `same`, with the kind of each
//! diff (flip, answer, format), every endpoint's answer, why the pairs differ, and whether that is
//! sampler noise or a deployment difference.

use super::cells::{
    anchor, answer_cell, difference_label, flagged, names, token_cell, verdict_cell,
};
use crate::analysis::{PairResult, PromptResult, Results, Verdict};
use crate::report::table::markdown_table;
use crate::text::clip;

pub(super) fn render(results: &Results, out: &mut String) {
    out.push_str("\n## Divergences\n\n");
    let flagged = flagged(results);
    if flagged.is_empty() {
        out.push_str("None: every prompt got the same verdict on every endpoint.\n");
        return;
    }
    let names = names(results);
    let mut headers = vec!["prompt", "category", "verdict", "kind", "expected"];
    headers.extend(names.iter().copied());
    headers.extend(["why", "difference"]);
    let rows: Vec<Vec<String>> = flagged
        .iter()
        .map(|p| {
            let mut row = vec![
                format!("[`{}`](#{})", p.id, anchor(&p.id)),
                p.category.clone(),
                verdict_cell(p.verdict),
                per_pair(p, |x| x.kind.map(|k| k.as_str().to_string())),
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
            row.push(per_pair(p, |x| {
                let label = Some(difference_label(x.difference))
                    .filter(|s| !s.is_empty())
                    .map(str::to_string);
                match (label, x.token_divergence.as_ref().map(token_cell)) {
                    (Some(l), Some(t)) => Some(format!("{l}; {t}")),
                    (l, t) => l.or(t),
                }
            }));
            row
        })
        .collect();
    out.push_str(&markdown_table(&headers, &rows));
}

/// One label per pair that has one, prefixed with the other endpoint when there are several pairs.
fn per_pair(p: &PromptResult, label: impl Fn(&PairResult) -> Option<String>) -> String {
    let many = p.pairs.len() > 1;
    p.pairs
        .iter()
        .filter_map(|x| {
            let l = label(x)?;
            Some(if many { format!("{}: {l}", x.other) } else { l })
        })
        .collect::<Vec<_>>()
        .join("; ")
}
