//! The report's title and opening: the answer to "is this the same model?" (quality, stability,
//! output identity, parity; see `answer.rs`), then the per-prompt verdict counts, the gate,
//! non-determinism and deployment differences, reasoning retries, and a note when the run is
//! incomplete.

use std::fmt::Write;

use super::answer::answer_lines;
use super::cells::names;
use crate::analysis::Results;

pub(super) fn render(results: &Results, out: &mut String) {
    let _ = writeln!(out, "# coherence report: {}\n", names(results).join(" vs "));
    out.push_str(&answer_lines(results));
    let _ = writeln!(
        out,
        "\nPer prompt: **{}** over {} prompts; reference endpoint `{}` (`diff` is a different answer, not necessarily a worse one).\n",
        results.summary.headline(),
        results.prompts.len(),
        results.reference
    );
    let gate = if results.gate.failed.is_empty() {
        format!("Gate `{}`: passed.", results.gate.expression)
    } else {
        format!(
            "Gate `{}`: **failed** ({}).",
            results.gate.expression,
            results.gate.failed.join(", ")
        )
    };
    let _ = writeln!(
        out,
        "{gate} Non-deterministic prompt/endpoint pairs: {}. Deployment differences (beyond the reference's own sampler noise): {}.\n",
        results.nondeterministic, results.deployment_differences
    );
    let retried: Vec<String> = results
        .endpoints
        .iter()
        .filter(|e| e.reasoning_retries > 0)
        .map(|e| format!("`{}` on {} prompt(s)", e.name, e.reasoning_retries))
        .collect();
    if !retried.is_empty() {
        let _ = writeln!(
            out,
            "> **Reasoning retries:** the reasoning used the whole token budget and left no answer, so these prompts were re-run automatically at a larger budget and the report uses the re-run: {}. Both attempts are in records.jsonl.\n",
            retried.join(", ")
        );
    }
    if !results.complete {
        let _ = writeln!(
            out,
            "> **Incomplete run:** {} request failure(s) and {} missing answer(s). Continue it with \
             `coherence compare --resume <this run folder>`; only what is missing is sent.\n",
            results.request_failures, results.missing
        );
    }
}
