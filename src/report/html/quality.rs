//! The quality answer, first after the headline: per pair, equivalent, different or
//! inconclusive, with the accuracy difference and its 90% interval drawn against the margin;
//! then each endpoint's stability against itself, how often the texts are identical, and parity.

use std::fmt::Write;

use super::chart::{fmt_num, fmt_signed, interval, proportion_bar, stacked_bar, Segment};
use super::escape::esc;
use super::open_section;
use crate::analysis::{Identity, Parity, Quality, Results};

pub(super) fn render(results: &Results, out: &mut String) {
    open_section(out, "quality", "Quality");
    if results.quality.is_empty() {
        out.push_str(
            "<p class=\"muted\">No quality comparison in these results (they predate it; \
             <code>coherence score</code> on the run folder adds it).</p>\n",
        );
    }
    out.push_str("<div class=\"cards\">\n");
    for q in &results.quality {
        card(out, q);
    }
    out.push_str("</div>\n");
    stability(results, out);
    identity(&results.identity, out);
    parity(&results.parity, out);
    out.push_str("</section>\n");
}

fn card(out: &mut String, q: &Quality) {
    let verdict = q.verdict.as_str();
    let points = |x: f64| x * 100.0;
    let (d, low, high) = (
        points(q.difference.estimate),
        points(q.difference.low),
        points(q.difference.high),
    );
    let _ = write!(
        out,
        "<article class=\"card q-{verdict}\">\n<h3><code>{}</code> against <code>{}</code>: \
         <span class=\"badge q-{verdict}\">{verdict}</span></h3>\n\
         <p>Accuracy difference <b>{} points</b> (90% interval {} to {}; equivalence margin ±{}). \
         Exact McNemar p = {} over {} graded prompts: only <code>{}</code> right on {}, only <code>{}</code> right on {}.",
        esc(&q.other),
        esc(&q.reference),
        fmt_signed(d),
        fmt_signed(low),
        fmt_signed(high),
        fmt_num(q.margin),
        p_value(q.p_value),
        q.graded,
        esc(&q.reference),
        q.reference_only,
        esc(&q.other),
        q.other_only,
    );
    if let Some(n) = q.decide_with {
        let _ = write!(out, " About {n} graded prompts would decide it.");
    }
    out.push_str("</p>\n");
    interval(out, d, low, high, q.margin);
    let _ = writeln!(
        out,
        "<p class=\"chart-key\"><span class=\"key band\"></span>equivalent when the 90% interval \
         (the bar) stays inside ±{} points; different when p &lt; 0.05</p>\n</article>",
        fmt_num(q.margin)
    );
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        "&lt; 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

fn stability(results: &Results, out: &mut String) {
    if results.stability.iter().all(|s| s.measured == 0) {
        return;
    }
    out.push_str(
        "<h3>Stability across repeats</h3>\n<table class=\"compact\">\n<thead><tr><th>endpoint</th>\
         <th>same answer on every repeat</th><th>unstable at temperature 0</th></tr></thead>\n<tbody>\n",
    );
    for s in &results.stability {
        let _ = write!(out, "<tr><td><code>{}</code></td><td>", esc(&s.endpoint));
        proportion_bar(out, s.stable, s.measured, "v-same");
        let _ = writeln!(out, "</td><td class=\"num\">{}</td></tr>", s.unstable);
    }
    out.push_str("</tbody>\n</table>\n");
}

fn identity(identity: &[Identity], out: &mut String) {
    if identity.is_empty() {
        return;
    }
    out.push_str(
        "<h3>Texts per pair</h3>\n<table class=\"compact\">\n<thead><tr><th>pair</th><th>prompts</th>\
         <th>identical</th><th>same answer, other words</th><th>diverged</th><th>failed</th></tr></thead>\n<tbody>\n",
    );
    for i in identity {
        let total = i.identical + i.same_answer + i.diverged + i.failed;
        let _ = write!(
            out,
            "<tr><td><code>{}</code> → <code>{}</code></td><td>",
            esc(&i.reference),
            esc(&i.other)
        );
        stacked_bar(
            out,
            &[
                Segment {
                    count: i.identical,
                    class: "v-same",
                    label: "identical",
                },
                Segment {
                    count: i.same_answer,
                    class: "v-same-words",
                    label: "same answer, other words",
                },
                Segment {
                    count: i.diverged,
                    class: "v-diff",
                    label: "diverged",
                },
                Segment {
                    count: i.failed,
                    class: "v-fail",
                    label: "failed",
                },
            ],
            total,
            240.0,
        );
        let _ = writeln!(
            out,
            "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            i.identical, i.same_answer, i.diverged, i.failed
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

fn parity(parity: &[Parity], out: &mut String) {
    if parity.is_empty() {
        return;
    }
    out.push_str("<h3>Parity</h3>\n<ul class=\"facts\">\n");
    for p in parity {
        let examples = |v: &[String]| {
            if v.is_empty() {
                String::new()
            } else {
                format!(" (e.g. {})", esc(&v.join(", ")))
            }
        };
        let tokens = if p.prompt_tokens_mismatches == 0 {
            format!(
                "<span class=\"badge ok\">same prompt tokens</span> on all {} compared",
                p.prompt_tokens_compared
            )
        } else {
            format!(
                "<span class=\"badge bad\">prompt tokens differ</span> on {} of {}{}: a different chat template or tokenizer",
                p.prompt_tokens_mismatches,
                p.prompt_tokens_compared,
                examples(&p.prompt_tokens_examples)
            )
        };
        let reasoning = p
            .mean_reasoning_chars_delta
            .map(|d| format!("; reasoning {} characters on average", fmt_signed(d)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<li><code>{}</code> → <code>{}</code>: {tokens}; finish reason differs on {}{}{reasoning}.</li>",
            esc(&p.reference),
            esc(&p.other),
            p.finish_reason_mismatches,
            examples(&p.finish_reason_examples)
        );
    }
    out.push_str("</ul>\n");
}
