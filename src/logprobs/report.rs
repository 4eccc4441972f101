//! The Markdown report of `coherence logprobs`, with the published priors to read figures against.

use super::consistency::Alignment;
use super::metrics::Summary;
use super::run::{Evidence, PairFigures};
use crate::doc::{code, link, para, strong, t, text, to_markdown, Block, Line, Part, Table};

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

/// The columns of a figures table.
fn figures_table() -> Table {
    Table::new(&[
        "",
        "tokens",
        "mean KLD",
        "p99 KLD",
        "same top token",
        "mean Δp",
        "RMS Δp",
    ])
    .right(&[1, 2, 3, 4, 5, 6])
}

fn row(table: &mut Table, label: Line, s: &Summary) {
    let mut cells = vec![label];
    cells.extend(
        [
            s.tokens.to_string(),
            num(s.mean_kld, 6),
            num(s.p99_kld, 6),
            pct(s.top1_agreement),
            pct_points(s.mean_delta_p),
            pct_points(s.rms_delta_p),
        ]
        .map(|c| vec![text(c)]),
    );
    table.row(cells);
}

/// One pair's figures: overall and per category, then the five items (passages, or a compare
/// run's prompts) with the largest mean KLD, each linked to `anchor(id)` when it has one.
pub fn pair_blocks(
    p: &PairFigures,
    items: &str,
    anchor: &dyn Fn(&str) -> Option<String>,
) -> Vec<Block> {
    let mut blocks: Vec<Block> = p.notes.iter().map(|n| para(vec![text(n)])).collect();
    let mut table = figures_table();
    row(&mut table, vec![strong(vec![text("overall")])], &p.summary);
    for c in &p.categories {
        row(&mut table, vec![text(&c.category)], &c.summary);
    }
    blocks.push(table.into());
    let worst = p.worst(5);
    if !worst.is_empty() {
        blocks.push(para(vec![text(format!(
            "{items} with the largest mean KLD:"
        ))]));
        let mut table = figures_table();
        for x in worst {
            let id = match anchor(&x.id) {
                Some(a) => link(a, vec![code(&x.id)]),
                None => code(&x.id),
            };
            row(
                &mut table,
                vec![id, text(format!(" ({})", x.category))],
                &x.summary,
            );
        }
        blocks.push(table.into());
    }
    blocks
}

/// The priors table and how to read it.
pub fn priors() -> Vec<Block> {
    let mut table =
        Table::new(&["change", "mean KLD", "same top token", "RMS Δp", "source"]).right(&[1, 2, 3]);
    for (change, kld, top, rms, source) in PRIORS {
        let top = if *top == "—" {
            "—".to_string()
        } else {
            format!("{top}%")
        };
        table.text_row(&[*change, kld, &top, &format!("{rms} %"), source]);
    }
    vec![table.into(), para(t(PRIORS_NOTE, &[]))]
}

/// The whole report.
pub fn markdown(e: &Evidence) -> String {
    let mut body = vec![para(vec![text(format!(
        "{} passages, top-{} logprobs. KL is KL(reference ‖ other) in nats over the reference's top-k plus one tail bucket; Δp is p_other − p_reference of the text's token.",
        e.passages, e.top_k
    ))])];
    let endpoints: Vec<Line> = e
        .endpoints
        .iter()
        .map(|ep| {
            let mode = ep.mode.map_or("none", |m| m.label());
            let offset = ep.offset.map_or("unknown".into(), |o| o.to_string());
            let mut line = vec![
                strong(vec![text(&ep.name)]),
                text(" ("),
                code(&ep.model),
                text(format!("): mode {mode}, offset {offset}")),
            ];
            if !ep.usable {
                line.extend(t(", **not used**", &[]));
            }
            for n in &ep.notes {
                line.push(text(format!("; {n}")));
            }
            line
        })
        .collect();
    body.push(part("Endpoints", vec![Block::List(endpoints)]));
    body.push(part(
        "Self-consistency (decode vs prefill)",
        self_consistency(e),
    ));
    for p in &e.pairs {
        let title = format!("{} vs {}", p.reference, p.other);
        body.push(part(&title, pair_blocks(p, "Passages", &|_| None)));
    }
    if !e.problems.is_empty() {
        let problems = e
            .problems
            .iter()
            .map(|p| {
                vec![
                    text(format!("{} ", p.endpoint)),
                    code(p.passage.as_deref().unwrap_or("-")),
                    text(format!(" ({}): {}", p.kind, p.reason)),
                ]
            })
            .collect();
        body.push(part("Not compared", vec![Block::List(problems)]));
    }
    body.push(part("Priors", priors()));
    to_markdown(&[Part::new(1, None, vec![text("Token-level evidence")], body).into()])
}

fn part(title: &str, body: Vec<Block>) -> Block {
    Part::new(2, None, vec![text(title)], body).into()
}

fn self_consistency(e: &Evidence) -> Vec<Block> {
    if e.self_consistency.is_empty() {
        return vec![para(vec![text("No endpoint could be checked.")])];
    }
    let mut table = Table::new(&[
        "endpoint",
        "tokens",
        "offset",
        "alignment",
        "max abs diff",
        "mean abs diff",
    ])
    .right(&[1, 2, 4, 5]);
    for s in &e.self_consistency {
        let alignment = match s.alignment {
            Alignment::Aligned => "aligned",
            Alignment::Offset => "offset, compensated",
            Alignment::Undetermined => "undetermined (refused)",
        };
        table.text_row(&[
            s.endpoint.clone(),
            s.tokens.to_string(),
            s.offset.map_or("—".into(), |o| o.to_string()),
            alignment.to_string(),
            num(s.max_abs_diff, 4),
            num(s.mean_abs_diff, 4),
        ]);
    }
    let notes: Vec<Line> = e
        .self_consistency
        .iter()
        .flat_map(|s| {
            s.notes
                .iter()
                .map(move |n| vec![text(format!("{}: {n}", s.endpoint))])
        })
        .collect();
    let mut blocks = vec![table.into()];
    if !notes.is_empty() {
        blocks.push(Block::List(notes));
    }
    blocks
}
