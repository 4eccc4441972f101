//! The endpoints section: who was compared (URL, served model, fingerprints, with differing
//! fingerprints flagged), parity (prompt tokens, finish reasons, reasoning length) with every
//! mismatch flagged, the sampling every endpoint got, each endpoint's scores with accuracy and
//! its Wilson 95% interval, and how many of its code answers ran their tests.

use crate::analysis::assembly::fingerprint::{self, FingerprintDifference};
use crate::analysis::{Parity, Results};
use crate::doc::{code, span, t, text, Block, Line, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    let mut body = Vec::new();
    let mut who = Table::new(&[
        "endpoint",
        "role",
        "URL",
        "served model",
        "system_fingerprint",
        "max_model_len",
        "server",
    ]);
    for (i, e) in results.endpoints.iter().enumerate() {
        let served = if e.served_models.is_empty() {
            e.model.clone().unwrap_or_default()
        } else {
            e.served_models.join(", ")
        };
        who.row(vec![
            vec![code(&e.name)],
            vec![if i == 0 {
                span("badge ref", vec![text("reference")])
            } else {
                text("compared")
            }],
            vec![text(&e.base_url)],
            vec![text(served)],
            vec![text(e.system_fingerprints.join(", "))],
            vec![text(
                e.max_model_len.map(|n| n.to_string()).unwrap_or_default(),
            )],
            vec![text(e.servers.join(", "))],
        ]);
    }
    body.push(who.into());
    for d in fingerprint::differences(results) {
        let mut line = t("**Fingerprints differ:** ", &[]);
        line.extend(fingerprint_sentence(&d));
        body.push(Block::Callout {
            bad: false,
            text: line,
        });
    }
    for p in &results.parity {
        parity(&mut body, p);
    }
    let s = &results.sampling;
    let params = if s.params.is_empty() {
        String::new()
    } else {
        format!(
            ", extra fields {}",
            serde_json::Value::Object(s.params.clone())
        )
    };
    body.push(Block::Paragraph(vec![text(format!(
        "Sampling, identical on every endpoint: temperature {}, stream {}, {}, {} repeat(s){params}.",
        s.temperature,
        s.stream,
        s.budget_statement(),
        s.repeats
    ))]));
    let mut scores = Table::new(&[
        "endpoint",
        "correct / wrong / open / failed",
        "accuracy [Wilson 95%]",
        "mean completion tokens",
        "cut at the budget",
        "determinism",
    ]);
    for e in &results.endpoints {
        let det = e
            .determinism
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let a = &e.accuracy;
        scores.row(vec![
            vec![code(&e.name)],
            vec![text(format!(
                "{} / {} / {} / {}",
                e.correct, e.wrong, e.ungraded, e.failed
            ))],
            vec![text(format!(
                "{:.0}% [{:.0}–{:.0}%]",
                a.value * 100.0,
                a.low * 100.0,
                a.high * 100.0
            ))],
            vec![text(
                e.mean_completion_tokens
                    .map(|t| format!("{t:.0}"))
                    .unwrap_or_default(),
            )],
            vec![text(cut_share(e.cut_off, e.answers))],
            vec![text(det)],
        ]);
    }
    body.push(scores.into());
    if let Some(line) = code_answers(results) {
        body.push(Block::Paragraph(line));
    }
    vec![Part::section("endpoints", vec![text("Endpoints")], body).into()]
}

/// "55 of 140 (39%)": the answers cut off at their budget, of the usable ones.
fn cut_share(cut: usize, answers: usize) -> String {
    if answers == 0 {
        return String::new();
    }
    format!(
        "{cut} of {answers} ({:.0}%)",
        cut as f64 / answers as f64 * 100.0
    )
}

/// "Code answers (JavaScript run against unit tests): `a` 12 scored, 10 ran their tests, 1 did
/// not parse or load, 1 without code; `b` …": whether each endpoint's code was executed at all.
fn code_answers(results: &Results) -> Option<Line> {
    let mut line = vec![text("Code answers (JavaScript run against unit tests): ")];
    let mut any = false;
    for e in &results.endpoints {
        let Some(c) = &e.code_answers else { continue };
        if any {
            line.push(text("; "));
        }
        any = true;
        line.push(code(&e.name));
        line.push(text(format!(
            " {} scored, {} ran their tests, {} did not parse or load, {} without code",
            c.scored, c.ran_tests, c.did_not_load, c.no_code_found
        )));
    }
    line.push(text("."));
    any.then_some(line)
}

/// Parity flags of one pair: prompt tokens (a different template or tokenizer), finish reasons,
/// and the mean reasoning-length delta.
fn parity(body: &mut Vec<Block>, p: &Parity) {
    let examples = |e: &[String], n: usize| {
        let more = if n > e.len() { "; …" } else { "" };
        format!("{}{more}", e.join("; "))
    };
    let (r, o) = (p.reference.as_str(), p.other.as_str());
    if p.prompt_tokens_mismatches > 0 {
        body.push(Block::Callout {
            bad: true,
            text: t(
                &format!(
                    "**Prompt tokens differ:** `usage.prompt_tokens` of `$` and `$` differ on {} of {} prompts ($). The same request costs the same prompt tokens on every deployment of one model: this is a different chat template or tokenizer, and it explains everything downstream.",
                    p.prompt_tokens_mismatches, p.prompt_tokens_compared
                ),
                &[
                    r,
                    o,
                    &examples(&p.prompt_tokens_examples, p.prompt_tokens_mismatches),
                ],
            ),
        });
    }
    if p.finish_reason_mismatches > 0 {
        body.push(Block::Callout {
            bad: false,
            text: t(
                &format!(
                    "**finish_reason differs** between `$` and `$` on {} prompt(s): $.",
                    p.finish_reason_mismatches
                ),
                &[
                    r,
                    o,
                    &examples(&p.finish_reason_examples, p.finish_reason_mismatches),
                ],
            ),
        });
    }
    if let Some(delta) = p.mean_reasoning_chars_delta {
        body.push(Block::Paragraph(t(
            &format!(
                "Reasoning length: `$` reasons {:.0} characters {} than `$` on average (a degraded deployment often thinks longer).",
                delta.abs(),
                if delta >= 0.0 { "more" } else { "less" },
            ),
            &[o, r],
        )));
    }
}

/// "served model: a `m1` vs b (not reported)": one fingerprint field that differs.
fn fingerprint_sentence(d: &FingerprintDifference) -> Line {
    let show = |s: &str| {
        if s.is_empty() {
            text("(not reported)")
        } else {
            code(s)
        }
    };
    vec![
        text(format!("{}: {} ", d.field, d.reference)),
        show(&d.reference_value),
        text(format!(" vs {} ", d.other)),
        show(&d.other_value),
    ]
}
