//! Latency and completion-token distributions per endpoint over the prompts it answered: box
//! plots (quartiles, whiskers at the extremes) over every answer as a point.

use std::fmt::Write;

use super::chart::{box_plots, fmt_num, quartiles};
use super::escape::esc;
use super::{names, open_section};
use crate::analysis::{AnswerResult, Results};

pub(super) fn render(results: &Results, out: &mut String) {
    let names = names(results);
    let series = |f: fn(&AnswerResult) -> Option<f64>| -> Vec<(&str, Vec<f64>)> {
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
                (*n, values)
            })
            .collect()
    };
    let latency = series(|a| a.latency_ms);
    let tokens = series(|a| a.completion_tokens.map(|t| t as f64));
    if latency.iter().chain(&tokens).all(|(_, v)| v.is_empty()) {
        return;
    }
    open_section(out, "distributions", "Latency and completion tokens");
    out.push_str("<div class=\"pair\">\n");
    for (title, unit, data) in [
        ("Latency per answer (ms)", "ms", &latency),
        ("Completion tokens per answer", "tokens", &tokens),
    ] {
        let mut chart = String::new();
        let log = box_plots(&mut chart, unit, data);
        let _ = write!(
            out,
            "<figure>\n<figcaption>{}{}</figcaption>\n{chart}",
            esc(title),
            if log {
                " <span class=\"muted\">(log scale)</span>"
            } else {
                ""
            }
        );
        out.push_str("<table class=\"compact\"><thead><tr><th>endpoint</th><th>answers</th><th>median</th><th>q1–q3</th><th>max</th></tr></thead><tbody>");
        for (name, values) in data.iter() {
            let Some(q) = quartiles(values) else { continue };
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}–{}</td><td class=\"num\">{}</td></tr>",
                esc(name),
                values.len(),
                fmt_num(q.median),
                fmt_num(q.q1),
                fmt_num(q.q3),
                fmt_num(q.max)
            );
        }
        out.push_str("</tbody></table>\n</figure>\n");
    }
    out.push_str("</div>\n</section>\n");
}
