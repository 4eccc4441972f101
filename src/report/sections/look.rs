//! The "same, but look" section: prompts whose verdict is `same` where a reader should still
//! look: the endpoints finished differently, their completions differ in length class (completion
//! tokens by 2x or more), or an answer was read from a completion cut off at the budget.

use super::cells::{anchor, answer_cell, names};
use crate::analysis::{PromptResult, Results, Verdict};
use crate::doc::{code, link, para, t, text, Block, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    let names = names(results);
    let mut headers = vec!["prompt", "category"];
    headers.extend(names.iter().copied());
    headers.push("look at");
    let mut table = Table::new(&headers);
    for p in results
        .prompts
        .iter()
        .filter(|p| p.verdict == Verdict::Same)
    {
        let why = reasons(p);
        if why.is_empty() {
            continue;
        }
        let mut row = vec![
            vec![link(anchor(&p.id), vec![code(&p.id)])],
            vec![text(&p.category)],
        ];
        row.extend(names.iter().map(|n| answer_cell(p.answers.get(*n))));
        row.push(vec![text(why.join("; "))]);
        table.row(row);
    }
    if table.rows.is_empty() {
        return Vec::new();
    }
    let body = vec![
        para(t("Verdict `same`, but something a reader should check: a different finish, a different length class, or an answer read from a cut-off completion.", &[])),
        table.into(),
    ];
    vec![Part::section("look", vec![text("Same, but look")], body).into()]
}

/// What to look at in a `same` prompt, per pair (nothing: nothing to look at).
fn reasons(p: &PromptResult) -> Vec<String> {
    let mut why = Vec::new();
    for pair in &p.pairs {
        let (Some(a), Some(b)) = (p.answers.get(&pair.reference), p.answers.get(&pair.other))
        else {
            continue;
        };
        if a.finish_reason != b.finish_reason {
            let show = |f: &Option<String>| f.clone().unwrap_or_else(|| "none".into());
            why.push(format!(
                "finish {} {} vs {} {}",
                pair.reference,
                show(&a.finish_reason),
                pair.other,
                show(&b.finish_reason)
            ));
        }
        if let (Some(x), Some(y)) = (a.completion_tokens, b.completion_tokens) {
            let (lo, hi) = (x.min(y), x.max(y));
            if hi > 0 && hi >= 2 * lo {
                why.push(format!(
                    "length {} {x} vs {} {y} completion tokens",
                    pair.reference, pair.other
                ));
            }
        }
    }
    let mut cut: Vec<&str> = p
        .answers
        .iter()
        .filter(|(_, a)| a.truncated)
        .map(|(n, _)| n.as_str())
        .collect();
    cut.sort_unstable();
    if !cut.is_empty() {
        why.push(format!("truncated answer on {}", cut.join(", ")));
    }
    why
}
