//! The report's title and opening: the answer to "is this the same model?" (quality, stability,
//! output identity, parity; see `answer.rs`) with each quality difference drawn against its
//! margin, then the per-prompt verdict counts (in words and as one bar), the gate and where it
//! came from, non-determinism and deployment differences, the probe phases' verdicts (under
//! load, cache state, samples), reasoning retries, and a note when the run is incomplete.

use super::answer::answer_lines;
use super::cells::{names, verdict_bar};
use crate::analysis::Results;
use crate::doc::{t, text, Block, Figure, Inline, Part, Style};

/// The id of the element holding the headline counts (the browser check looks for it).
pub(super) const HEADLINE_ID: &str = "headline";

/// The first line under the title: "Same model: yes — reason; reason".
fn same_model_line(results: &Results) -> Option<Block> {
    let answer = results.summary.same_model?;
    let because = results.summary.same_model_because.join("; ");
    let line = if because.is_empty() {
        t("**Same model: $**", &[answer.as_str()])
    } else {
        t("**Same model: $** — $", &[answer.as_str(), &because])
    };
    Some(Block::Paragraph(line))
}

/// Non-determinism and deployment differences, or "not measured" when each prompt was sent once:
/// a zero then is no finding.
fn noise_sentence(results: &Results) -> String {
    if results.sampling.repeats <= 1 {
        return " Non-deterministic prompt/endpoint pairs and deployment differences beyond the reference's own noise: not measured (1 repeat; `--repeats 3` measures them)."
            .to_string();
    }
    format!(
        " Non-deterministic prompt/endpoint pairs: {}. Deployment differences (beyond the reference's own sampler noise): {}.",
        results.nondeterministic, results.deployment_differences
    )
}

pub(super) fn render(results: &Results) -> Vec<Block> {
    let mut body = same_model_line(results).into_iter().collect::<Vec<_>>();
    body.push(Block::List(answer_lines(results)));
    for q in &results.quality {
        let points = |x: f64| x * 100.0;
        body.push(Block::Figure(Figure::Interval {
            estimate: points(q.difference.estimate),
            low: points(q.difference.low),
            high: points(q.difference.high),
            margin: q.margin,
        }));
    }
    let mut per_prompt = vec![
        text("Per prompt: "),
        Inline::Styled(
            Style::StrongWithId(HEADLINE_ID),
            vec![text(results.summary.headline())],
        ),
    ];
    per_prompt.extend(t(
        &format!(
            " over {} prompts; reference endpoint `$` (`diff` is a different answer, not necessarily a worse one).",
            results.prompts.len()
        ),
        &[&results.reference],
    ));
    body.push(Block::Paragraph(per_prompt));
    body.push(verdict_bar(&results.summary, results.prompts.len(), 640.0).into());
    body.push(Figure::VerdictLegend.into());
    let gate = &results.gate;
    let origin = gate
        .origin
        .map(|o| format!(" ({})", o.describe()))
        .unwrap_or_default();
    let mut facts = if gate.failed.is_empty() {
        t(&format!("Gate `$`{origin}: passed."), &[&gate.expression])
    } else {
        t(
            &format!("Gate `$`{origin}: **failed** ($)."),
            &[&gate.expression, &gate.failed.join(", ")],
        )
    };
    facts.push(text(noise_sentence(results)));
    body.push(Block::Paragraph(facts));
    let probes = results.load.summary_lines();
    if !probes.is_empty() {
        body.push(Block::List(
            probes.into_iter().map(|l| vec![text(l)]).collect(),
        ));
    }
    let retried: Vec<&crate::analysis::EndpointSummary> = results
        .endpoints
        .iter()
        .filter(|e| e.reasoning_retries > 0)
        .collect();
    if !retried.is_empty() {
        let mut line = t("**Reasoning retries:** the reasoning used the whole token budget and left no answer, so these prompts were re-run automatically at a larger budget and the report uses the re-run: ", &[]);
        for (i, e) in retried.iter().enumerate() {
            let sep = if i > 0 { ", " } else { "" };
            line.extend(t(
                &format!("{sep}`$` on {} prompt(s)", e.reasoning_retries),
                &[&e.name],
            ));
        }
        line.push(text(". Both attempts are in records.jsonl."));
        body.push(Block::Callout {
            bad: false,
            text: line,
        });
    }
    if !results.complete {
        body.push(Block::Callout {
            bad: true,
            text: t(
                &format!(
                    "**Incomplete run:** {} request failure(s) and {} missing answer(s). Continue it with `coherence compare --resume <this run folder>`; only what is missing is sent.",
                    results.request_failures, results.missing
                ),
                &[],
            ),
        });
    }
    let title = vec![text(format!(
        "coherence report: {}",
        names(results).join(" vs ")
    ))];
    vec![Part::new(1, None, title, body).into()]
}
