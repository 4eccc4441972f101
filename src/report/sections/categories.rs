//! The categories section: per category, the verdict counts (format and no answer apart, diff
//! split by kind; in HTML also as one stacked bar) and the correct answers of each endpoint.

use super::cells::{names, verdict_bar};
use crate::analysis::Results;
use crate::doc::{text, Block, Column, Figure, Inline, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    if results.categories.is_empty() {
        return Vec::new();
    }
    let names = names(results);
    let mut headers = vec![
        "category".to_string(),
        "prompts".into(),
        "same".into(),
        "format".into(),
        "no answer".into(),
        "diff (flip/answer)".into(),
        "review".into(),
        "fail".into(),
    ];
    headers.extend(names.iter().map(|n| format!("{n} correct")));
    let mut table = Table::new(&headers);
    table.class = Some("categories".into());
    table.columns.insert(
        2,
        Column {
            html_only: true,
            ..Column::new(vec![text("verdicts")])
        },
    );
    let widest = results
        .categories
        .iter()
        .map(|c| c.prompts)
        .max()
        .unwrap_or(1)
        .max(1);
    for c in &results.categories {
        let s = &c.summary;
        let diff = if s.diff > 0 {
            let k = &s.kinds;
            format!("{} ({}/{})", s.diff, k.flip, k.answer)
        } else {
            "0".into()
        };
        let bar = verdict_bar(s, c.prompts, 280.0 * c.prompts as f64 / widest as f64);
        let mut row = vec![
            vec![text(&c.category)],
            vec![text(c.prompts.to_string())],
            vec![Inline::Figure(bar)],
            vec![text(s.same.to_string())],
            vec![text(s.format.to_string())],
            vec![text(s.no_answer.to_string())],
            vec![text(diff)],
            vec![text(s.review.to_string())],
            vec![text(s.fail.to_string())],
        ];
        row.extend(names.iter().enumerate().map(|(i, n)| {
            vec![Inline::Figure(Figure::Proportion {
                part: c.correct.get(*n).copied().unwrap_or(0),
                whole: c.prompts,
                class: SERIES[i % SERIES.len()],
            })]
        }));
        table.row(row);
    }
    let body = vec![Figure::VerdictLegend.into(), table.into()];
    vec![Part::section("categories", vec![text("Categories")], body).into()]
}

/// The colour class of each endpoint's series.
const SERIES: [&str; 6] = ["s0", "s1", "s2", "s3", "s4", "s5"];
