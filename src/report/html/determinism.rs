//! Answer histograms: for each prompt whose repeats gave different answers on some endpoint,
//! every endpoint's answers and how often each came back, as bars.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::chart::{clip, fmt};
use super::escape::esc;
use super::{names, open_section, prompt_anchor};
use crate::analysis::{Class, PromptResult, Results};

/// Answers shown per histogram; the rest are summed into one bar.
const MAX_BARS: usize = 8;

pub(super) fn render(results: &Results, out: &mut String) {
    if results.sampling.repeats < 2 {
        return;
    }
    let unstable: Vec<&PromptResult> = results
        .prompts
        .iter()
        .filter(|p| {
            p.answers.values().any(|a| {
                a.determinism
                    .as_ref()
                    .is_some_and(|d| d.class == Class::Nondeterministic)
            })
        })
        .collect();
    open_section(
        out,
        "determinism",
        &format!(
            "Determinism ({} repeats at temperature {})",
            results.sampling.repeats, results.sampling.temperature
        ),
    );
    if unstable.is_empty() {
        out.push_str("<p>Every endpoint gave the same answer on every repeat of every prompt.</p>\n</section>\n");
        return;
    }
    let _ = writeln!(
        out,
        "<p>{} prompt(s) where an endpoint's repeats gave different answers. Each bar is one answer; its length, how many repeats gave it.</p>\n<div class=\"hist-grid\">",
        unstable.len()
    );
    let names = names(results);
    for p in unstable {
        let _ = writeln!(
            out,
            "<article class=\"hist\"><h3><a href=\"#{}\"><code>{}</code></a> <span class=\"muted\">{}</span></h3>",
            esc(&prompt_anchor(&p.id)),
            esc(&p.id),
            esc(&p.category)
        );
        for (i, n) in names.iter().enumerate() {
            let Some(d) = p.answers.get(*n).and_then(|a| a.determinism.as_ref()) else {
                continue;
            };
            let _ = write!(
                out,
                "<p class=\"hist-name\"><code>{}</code> <span class=\"muted\">{}</span></p>",
                esc(n),
                esc(d.class.label())
            );
            histogram(out, &d.histogram, d.repeats, i);
        }
        out.push_str("</article>\n");
    }
    out.push_str("</div>\n</section>\n");
}

/// One endpoint's answers as horizontal bars, most frequent first.
fn histogram(out: &mut String, histogram: &BTreeMap<String, u32>, repeats: u32, series: usize) {
    const LABEL: f64 = 210.0;
    const PLOT: f64 = 150.0;
    const ROW: f64 = 20.0;
    let mut bars: Vec<(String, u32)> = histogram.iter().map(|(k, n)| (k.clone(), *n)).collect();
    bars.sort_by_key(|b| std::cmp::Reverse(b.1));
    if bars.len() > MAX_BARS {
        let rest: u32 = bars[MAX_BARS - 1..].iter().map(|b| b.1).sum();
        let others = bars.len() - (MAX_BARS - 1);
        bars.truncate(MAX_BARS - 1);
        bars.push((format!("({others} other answers)"), rest));
    }
    let height = ROW * bars.len() as f64;
    let width = LABEL + PLOT + 30.0;
    let _ = write!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" role=\"img\">"
    );
    for (row, (answer, n)) in bars.iter().enumerate() {
        let y = ROW * row as f64;
        let w = PLOT * f64::from(*n) / f64::from(repeats.max(1));
        let shown = answer.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = write!(
            out,
            "<g><title>{}: {n} of {repeats}</title>\
             <text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect class=\"s{}\" x=\"{LABEL}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\"/>\
             <text class=\"tick\" x=\"{}\" y=\"{}\">{n}</text></g>",
            esc(answer),
            fmt(LABEL - 8.0),
            fmt(y + 14.0),
            esc(&clip(&shown, 30)),
            series % 6,
            fmt(y + 3.0),
            fmt(w),
            fmt(ROW - 6.0),
            fmt(LABEL + w + 5.0),
            fmt(y + 14.0),
        );
    }
    out.push_str("</svg>");
}
