//! The endpoints section: who was compared (URL, served model, fingerprints, with differing
//! fingerprints flagged), parity (prompt tokens, finish reasons, reasoning length) with every
//! mismatch flagged, the sampling every endpoint got, and each endpoint's scores.

use std::fmt::Write;

use crate::analysis::fingerprint::{self, FingerprintDifference};
use crate::analysis::{Parity, Results};
use crate::report::table::markdown_table;

pub(super) fn render(results: &Results, out: &mut String) {
    out.push_str("## Endpoints\n\n");
    let rows: Vec<Vec<String>> = results
        .endpoints
        .iter()
        .enumerate()
        .map(|(i, e)| {
            vec![
                format!("`{}`", e.name),
                if i == 0 {
                    "reference".into()
                } else {
                    "compared".into()
                },
                e.base_url.clone(),
                e.served_models.join(", "),
                e.system_fingerprints.join(", "),
                e.max_model_len.map(|n| n.to_string()).unwrap_or_default(),
                e.servers.join(", "),
            ]
        })
        .collect();
    out.push_str(&markdown_table(
        &[
            "endpoint",
            "role",
            "URL",
            "served model",
            "system_fingerprint",
            "max_model_len",
            "server",
        ],
        &rows,
    ));
    for d in fingerprint::differences(results) {
        let _ = writeln!(
            out,
            "\n> **Fingerprints differ:** {}",
            fingerprint_sentence(&d)
        );
    }
    for p in &results.parity {
        parity(out, p);
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
    let _ = writeln!(
        out,
        "\nSampling, identical on every endpoint: temperature {}, stream {}, {}, {} repeat(s){params}.\n",
        s.temperature, s.stream, s.budget_statement(), s.repeats
    );
    let rows: Vec<Vec<String>> = results
        .endpoints
        .iter()
        .map(|e| {
            let det = e
                .determinism
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                format!("`{}`", e.name),
                format!(
                    "{} / {} / {} / {}",
                    e.correct, e.wrong, e.ungraded, e.failed
                ),
                format!(
                    "{:.0}% [{:.0}–{:.0}%]",
                    e.accuracy.value * 100.0,
                    e.accuracy.low * 100.0,
                    e.accuracy.high * 100.0
                ),
                e.mean_completion_tokens
                    .map(|t| format!("{t:.0}"))
                    .unwrap_or_default(),
                det,
            ]
        })
        .collect();
    out.push_str(&markdown_table(
        &[
            "endpoint",
            "correct / wrong / open / failed",
            "accuracy [Wilson 95%]",
            "mean completion tokens",
            "determinism",
        ],
        &rows,
    ));
}

/// Parity flags of one pair: prompt tokens (a different template or tokenizer), finish reasons,
/// and the mean reasoning-length delta.
fn parity(out: &mut String, p: &Parity) {
    let examples = |e: &[String], n: usize| {
        let more = if n > e.len() { "; …" } else { "" };
        format!("{}{more}", e.join("; "))
    };
    if p.prompt_tokens_mismatches > 0 {
        let _ = writeln!(
            out,
            "\n> **Prompt tokens differ:** `usage.prompt_tokens` of `{}` and `{}` differ on {} of {} prompts ({}). The same request costs the same prompt tokens on every deployment of one model: this is a different chat template or tokenizer, and it explains everything downstream.",
            p.reference,
            p.other,
            p.prompt_tokens_mismatches,
            p.prompt_tokens_compared,
            examples(&p.prompt_tokens_examples, p.prompt_tokens_mismatches)
        );
    }
    if p.finish_reason_mismatches > 0 {
        let _ = writeln!(
            out,
            "\n> **finish_reason differs** between `{}` and `{}` on {} prompt(s): {}.",
            p.reference,
            p.other,
            p.finish_reason_mismatches,
            examples(&p.finish_reason_examples, p.finish_reason_mismatches)
        );
    }
    if let Some(delta) = p.mean_reasoning_chars_delta {
        let _ = writeln!(
            out,
            "\nReasoning length: `{}` reasons {:.0} characters {} than `{}` on average (a degraded deployment often thinks longer).",
            p.other,
            delta.abs(),
            if delta >= 0.0 { "more" } else { "less" },
            p.reference
        );
    }
}

/// "served model: a `m1` vs b (not reported)": one fingerprint field that differs.
fn fingerprint_sentence(d: &FingerprintDifference) -> String {
    let show = |s: &str| {
        if s.is_empty() {
            "(not reported)".to_string()
        } else {
            format!("`{s}`")
        }
    };
    format!(
        "{}: {} {} vs {} {}",
        d.field,
        d.reference,
        show(&d.reference_value),
        d.other,
        show(&d.other_value)
    )
}
