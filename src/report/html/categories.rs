//! Category bars: per category, the verdict counts as one stacked bar (same, diff, review, fail)
//! and the correct answers of each endpoint.

use std::fmt::Write;

use super::chart::{proportion_bar, stacked_bar, verdict_segments};
use super::escape::esc;
use super::headline::LEGEND;
use super::{names, open_section};
use crate::analysis::Results;

pub(super) fn render(results: &Results, out: &mut String) {
    if results.categories.is_empty() {
        return;
    }
    open_section(out, "categories", "Categories");
    out.push_str(LEGEND);
    let names = names(results);
    let widest = results
        .categories
        .iter()
        .map(|c| c.prompts)
        .max()
        .unwrap_or(1);
    out.push_str("<div class=\"scroll\"><table class=\"categories\">\n<thead><tr><th>category</th><th>prompts</th><th>verdicts</th>");
    for n in &names {
        let _ = write!(out, "<th>correct: <code>{}</code></th>", esc(n));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for c in &results.categories {
        let s = &c.summary;
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td>",
            esc(&c.category),
            c.prompts
        );
        stacked_bar(
            out,
            &verdict_segments(s),
            c.prompts,
            280.0 * c.prompts as f64 / widest.max(1) as f64,
        );
        out.push_str("</td>");
        for (i, n) in names.iter().enumerate() {
            out.push_str("<td>");
            let correct = c.correct.get(*n).copied().unwrap_or(0);
            proportion_bar(out, correct, c.prompts, &format!("s{}", i % 6));
            out.push_str("</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n</section>\n");
}
