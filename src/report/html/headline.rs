//! The page's opening: title, the verdict counts in words and as one bar, the gate, the run's
//! sampling, non-determinism and deployment differences, and callouts for reasoning retries and
//! an incomplete run.

use std::fmt::Write;

use super::chart::{stacked_bar, verdict_segments};
use super::escape::esc;
use super::names;
use crate::analysis::Results;

/// The id of the element holding the headline sentence (the browser check looks for it).
pub(super) const HEADLINE_ID: &str = "headline";

pub(super) fn render(results: &Results, out: &mut String) {
    let s = &results.summary;
    let _ = write!(
        out,
        "<header>\n<p class=\"eyebrow\">coherence report</p>\n<h1>{}</h1>\n\
         <p class=\"lede\"><strong id=\"{HEADLINE_ID}\">{}</strong> over {} prompts; reference endpoint <code>{}</code>.</p>\n",
        esc(&names(results).join(" vs ")),
        esc(&s.headline()),
        results.prompts.len(),
        esc(&results.reference)
    );
    out.push_str("<div class=\"verdicts\">");
    stacked_bar(out, &verdict_segments(s), results.prompts.len(), 640.0);
    out.push_str(LEGEND);
    out.push_str("</div>\n<ul class=\"facts\">\n");
    let gate = &results.gate;
    if gate.failed.is_empty() {
        let _ = writeln!(
            out,
            "<li>Gate <code>{}</code>: <span class=\"badge ok\">passed</span></li>",
            esc(&gate.expression)
        );
    } else {
        let _ = writeln!(
            out,
            "<li>Gate <code>{}</code>: <span class=\"badge bad\">failed</span> ({})</li>",
            esc(&gate.expression),
            esc(&gate.failed.join(", "))
        );
    }
    let _ = writeln!(
        out,
        "<li>Non-deterministic prompt/endpoint pairs: <b>{}</b>. Deployment differences (beyond the reference's own sampler noise): <b>{}</b>.</li>",
        results.nondeterministic, results.deployment_differences
    );
    let sampling = &results.sampling;
    let _ = writeln!(
        out,
        "<li>Temperature {}, {} repeat{} per prompt, {}{}.</li>\n</ul>",
        sampling.temperature,
        sampling.repeats,
        if sampling.repeats == 1 { "" } else { "s" },
        esc(&sampling.budget_statement()),
        if sampling.stream { ", streamed" } else { "" }
    );
    let retried: Vec<String> = results
        .endpoints
        .iter()
        .filter(|e| e.reasoning_retries > 0)
        .map(|e| {
            format!(
                "<code>{}</code> on {} prompt(s)",
                esc(&e.name),
                e.reasoning_retries
            )
        })
        .collect();
    if !retried.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"callout\"><b>Reasoning retries:</b> the reasoning used the whole token budget and left no answer, so these prompts were re-run automatically at a larger budget and the report uses the re-run: {}. Both attempts are in records.jsonl.</p>",
            retried.join(", ")
        );
    }
    if !results.complete {
        let _ = writeln!(
            out,
            "<p class=\"callout bad\"><b>Incomplete run:</b> {} request failure(s) and {} missing answer(s). Continue it with <code>coherence compare --resume &lt;this run folder&gt;</code>; only what is missing is sent.</p>",
            results.request_failures, results.missing
        );
    }
    out.push_str("</header>\n");
}

/// The verdict colour key, shared by the bars.
pub(super) const LEGEND: &str = "<p class=\"legend\"><span class=\"key v-same\"></span>same \
    <span class=\"key v-diff\"></span>diff <span class=\"key v-review\"></span>review \
    <span class=\"key v-fail\"></span>fail</p>";
