//! The categories section: verdict counts (diff split by kind) and correct answers per endpoint,
//! one row per category.

use super::cells::names;
use crate::analysis::Results;
use crate::report::table::markdown_table;

pub(super) fn render(results: &Results, out: &mut String) {
    let names = names(results);
    out.push_str("\n## Categories\n\n");
    let mut headers = vec![
        "category",
        "prompts",
        "same",
        "diff (flip/answer/format)",
        "review",
        "fail",
    ];
    let correct_headers: Vec<String> = names.iter().map(|n| format!("{n} correct")).collect();
    headers.extend(correct_headers.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = results
        .categories
        .iter()
        .map(|c| {
            let mut row = vec![
                c.category.clone(),
                c.prompts.to_string(),
                c.summary.same.to_string(),
                if c.summary.diff > 0 {
                    let k = &c.summary.kinds;
                    format!("{} ({}/{}/{})", c.summary.diff, k.flip, k.answer, k.format)
                } else {
                    "0".into()
                },
                c.summary.review.to_string(),
                c.summary.fail.to_string(),
            ];
            row.extend(
                names
                    .iter()
                    .map(|n| c.correct.get(*n).copied().unwrap_or(0).to_string()),
            );
            row
        })
        .collect();
    out.push_str(&markdown_table(&headers, &rows));
}
