//! The Markdown report of `coherence logprobs`, with the published priors to read figures against.

use std::fmt::Write;

use super::consistency::Alignment;
use super::metrics::Summary;
use super::run::{Evidence, PairFigures};

/// Published expectations: (change, mean KLD, same top token %, RMS Δp %, source).
/// Full-vocabulary figures on LLaMA 3 8B over Wikitext-2, from llama.cpp's documentation.
pub const PRIORS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "BF16 → FP16 weights",
        "0.000025",
        "99.74",
        "0.150",
        "llama.cpp tools/perplexity/README.md, LLaMA 3 BF16 vs. FP16",
    ),
    (
        "q8_0 weights",
        "0.001355",
        "97.67",
        "1.198",
        "llama.cpp tools/perplexity/README.md, LLaMA 3 8b scoreboard",
    ),
    ("q6_K weights", "0.005452", "96.03", "2.295", "same"),
    ("q4_K_M weights", "0.031273", "91.90", "5.519", "same"),
    ("q4_0 weights", "0.071940", "—", "8.434", "same"),
    ("q2_K weights", "0.445132", "71.14", "21.421", "same"),
    (
        "q8_0 V cache (f16 weights, f16 K)",
        "0.000743",
        "—",
        "0.905",
        "llama.cpp PR #7412 (quantized KV cache), first results",
    ),
    (
        "q8_0 K and V cache (f16 weights)",
        "0.000980",
        "—",
        "1.032",
        "same",
    ),
];

const PRIORS_NOTE: &str = "Those are full-vocabulary KL figures from `llama-perplexity --kl-divergence` on a \
512-token Wikitext-2 context; the figures above are top-k estimates on a short mixed corpus, so read them for \
order of magnitude, not digits. A q4_0 KV cache costs more than q8_0 (PR #7412 measures its rows in the same \
table); a negative control (the same deployment twice) should read KL ≈ 0 and ~100% same top token.";

/// A figure to `digits` decimals, `—` when there is none.
pub fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or("—".into(), |v| format!("{v:.digits$}"))
}

fn pct(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{:.2}%", v * 100.0))
}

/// A probability difference in percentage points.
fn pct_points(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{:.3} %", v * 100.0))
}

fn row(label: &str, s: &Summary) -> String {
    format!(
        "| {label} | {} | {} | {} | {} | {} | {} |\n",
        s.tokens,
        num(s.mean_kld, 6),
        num(s.p99_kld, 6),
        pct(s.top1_agreement),
        pct_points(s.mean_delta_p),
        pct_points(s.rms_delta_p),
    )
}

const HEAD: &str = "| | tokens | mean KLD | p99 KLD | same top token | mean Δp | RMS Δp |\n|---|---:|---:|---:|---:|---:|---:|\n";

/// One pair's figures: overall and per category, then the five items (passages, or a compare
/// run's prompts) with the largest mean KLD.
pub fn pair_tables(p: &PairFigures, items: &str) -> String {
    let mut md = String::new();
    for n in &p.notes {
        let _ = writeln!(md, "{n}\n");
    }
    md.push_str(HEAD);
    md.push_str(&row("**overall**", &p.summary));
    for c in &p.categories {
        md.push_str(&row(&c.category, &c.summary));
    }
    let worst = p.worst(5);
    if !worst.is_empty() {
        let _ = writeln!(md, "\n{items} with the largest mean KLD:\n");
        md.push_str(HEAD);
        for x in worst {
            md.push_str(&row(&format!("`{}` ({})", x.id, x.category), &x.summary));
        }
    }
    md
}

/// The priors table and how to read it.
pub fn priors() -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| change | mean KLD | same top token | RMS Δp | source |\n|---|---:|---:|---:|---|"
    );
    for (change, kld, top, rms, source) in PRIORS {
        let top = if *top == "—" {
            "—".to_string()
        } else {
            format!("{top}%")
        };
        let _ = writeln!(md, "| {change} | {kld} | {top} | {rms} % | {source} |");
    }
    let _ = writeln!(md, "\n{PRIORS_NOTE}");
    md
}

/// The whole report.
pub fn markdown(e: &Evidence) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Token-level evidence\n");
    let _ = writeln!(
        md,
        "{} passages, top-{} logprobs. KL is KL(reference ‖ other) in nats over the reference's top-k plus one tail bucket; Δp is p_other − p_reference of the text's token.\n",
        e.passages, e.top_k
    );
    let _ = writeln!(md, "## Endpoints\n");
    for ep in &e.endpoints {
        let mode = ep.mode.map_or("none", |m| m.label());
        let offset = ep.offset.map_or("unknown".into(), |o| o.to_string());
        let _ = writeln!(
            md,
            "- **{}** (`{}`): mode {mode}, offset {offset}{}",
            ep.name,
            ep.model,
            if ep.usable { "" } else { ", **not used**" }
        );
        for n in &ep.notes {
            let _ = writeln!(md, "  - {n}");
        }
    }
    let _ = writeln!(md, "\n## Self-consistency (decode vs prefill)\n");
    if e.self_consistency.is_empty() {
        let _ = writeln!(md, "No endpoint could be checked.");
    } else {
        let _ = writeln!(md, "| endpoint | tokens | offset | alignment | max abs diff | mean abs diff |\n|---|---:|---:|---|---:|---:|");
        for s in &e.self_consistency {
            let alignment = match s.alignment {
                Alignment::Aligned => "aligned",
                Alignment::Offset => "offset, compensated",
                Alignment::Undetermined => "undetermined (refused)",
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {alignment} | {} | {} |",
                s.endpoint,
                s.tokens,
                s.offset.map_or("—".into(), |o| o.to_string()),
                num(s.max_abs_diff, 4),
                num(s.mean_abs_diff, 4)
            );
        }
        for s in &e.self_consistency {
            for n in &s.notes {
                let _ = writeln!(md, "- {}: {n}", s.endpoint);
            }
        }
    }
    for p in &e.pairs {
        let _ = writeln!(md, "\n## {} vs {}\n", p.reference, p.other);
        md.push_str(&pair_tables(p, "Passages"));
    }
    if !e.problems.is_empty() {
        let _ = writeln!(md, "\n## Not compared\n");
        for p in &e.problems {
            let _ = writeln!(
                md,
                "- {} `{}` ({}): {}",
                p.endpoint,
                p.passage.as_deref().unwrap_or("-"),
                p.kind,
                p.reason
            );
        }
    }
    let _ = writeln!(md, "\n## Priors\n");
    md.push_str(&priors());
    md
}
