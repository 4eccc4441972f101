//! Latency and completion-token distributions per endpoint over the prompts it answered: box
//! plots (quartiles, whiskers at the extremes) over every answer as a point, and the quartiles
//! in a table. Latency varies from run to run, so its figures are in report.html only.

use super::cells::names;
use crate::analysis::{AnswerResult, Results};
use crate::doc::{code, fmt_num, quartiles, text, Block, Figure, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    let names = names(results);
    let series = |f: fn(&AnswerResult) -> Option<f64>| -> Vec<(String, Vec<f64>)> {
        names
            .iter()
            .map(|n| {
                let values = results
                    .prompts
                    .iter()
                    .filter_map(|p| p.answers.get(*n))
                    .filter(|a| a.error.is_none())
                    .filter_map(f)
                    .collect();
                (n.to_string(), values)
            })
            .collect()
    };
    let latency = series(|a| a.latency_ms);
    let tokens = series(|a| a.completion_tokens.map(|t| t as f64));
    if latency.iter().chain(&tokens).all(|(_, v)| v.is_empty()) {
        return Vec::new();
    }
    let mut body = Vec::new();
    for (caption, unit, data, html_only) in [
        ("Latency per answer (ms)", "ms", latency, true),
        ("Completion tokens per answer", "tokens", tokens, false),
    ] {
        let mut table =
            Table::new(&["endpoint", "answers", "median", "q1–q3", "max"]).right(&[1, 2, 3, 4]);
        for c in &mut table.columns {
            c.html_only = html_only;
        }
        table.class = Some("compact".into());
        for (name, values) in &data {
            let Some(q) = quartiles(values) else { continue };
            table.row(vec![
                vec![code(name)],
                vec![text(values.len().to_string())],
                vec![text(fmt_num(q.median))],
                vec![text(format!("{}–{}", fmt_num(q.q1), fmt_num(q.q3)))],
                vec![text(fmt_num(q.max))],
            ]);
        }
        if !html_only {
            body.push(crate::doc::para(vec![text(caption)]));
        }
        body.push(
            Figure::BoxPlots {
                caption: caption.into(),
                unit: unit.into(),
                series: data,
            }
            .into(),
        );
        body.push(table.into());
    }
    let title = vec![text("Latency and completion tokens")];
    vec![Part::section("distributions", title, body).into()]
}
