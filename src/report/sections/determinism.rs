//! The determinism section (runs with repeats): every prompt and endpoint whose repeats differed,
//! with the answer histogram (in HTML also drawn, for the prompts whose answers differed), its
//! class and where the repeats first diverge.

use super::cells::{anchor, histogram_cell, names, written_histogram};
use crate::analysis::{Class, PromptResult, Results};
use crate::doc::{code, link, para, span, text, Block, Figure, Part, Table};
use crate::text::clip;

pub(super) fn render(results: &Results) -> Vec<Block> {
    if results.sampling.repeats < 2 {
        return Vec::new();
    }
    let title = vec![text(format!(
        "Determinism ({} repeats at temperature {})",
        results.sampling.repeats, results.sampling.temperature
    ))];
    let mut body = Vec::new();
    let mut rows = Vec::new();
    for p in &results.prompts {
        for n in names(results) {
            let Some(a) = p.answers.get(n) else {
                continue;
            };
            let Some(d) = a.determinism.as_ref() else {
                continue;
            };
            if d.class != Class::Nondeterministic && d.unique_completions < 2 {
                continue;
            }
            let (written, cut) = written_histogram(a, &d.histogram);
            let histogram = histogram_cell(&written, &cut);
            let divergence = d
                .first_divergence
                .as_ref()
                .map(|x| {
                    let token =
                        x.at.token_index
                            .map(|t| format!(", token {t}"))
                            .unwrap_or_default();
                    format!(
                        "repeats {} and {} at char {}{token}: …{}⟨{} | {}⟩",
                        x.repeats[0],
                        x.repeats[1],
                        x.at.char_offset,
                        clip(&x.at.before, 30),
                        clip(&x.at.left, 20),
                        clip(&x.at.right, 20)
                    )
                })
                .unwrap_or_default();
            rows.push(vec![
                p.id.clone(),
                n.to_string(),
                histogram,
                d.unique_completions.to_string(),
                format!("{:.0}%", d.modal_share * 100.0),
                d.class.label().to_string(),
                divergence,
            ]);
        }
    }
    if rows.is_empty() {
        body.push(para(vec![text(
            "Every endpoint returned the same completion on every repeat of every prompt.",
        )]));
    } else {
        body.push(para(vec![text("Prompts whose repeats differed in any way (every other prompt returned a byte-identical completion on every repeat). A different answer is non-determinism; the same answer in other words is only a different completion.")]));
        let mut table = Table::new(&[
            "prompt",
            "endpoint",
            "answers",
            "unique completions",
            "modal share",
            "class",
            "first divergence",
        ]);
        for row in rows {
            let mut cells = vec![vec![code(&row[0])]];
            cells.extend(row[1..].iter().map(|c| vec![text(c)]));
            table.row(cells);
        }
        body.push(table.into());
    }
    body.extend(histograms(results));
    vec![Part::section("determinism", title, body).into()]
}

/// For each prompt whose repeats gave different answers on some endpoint, every endpoint's
/// answers as bars (HTML).
fn histograms(results: &Results) -> Vec<Block> {
    let unstable = results.prompts.iter().filter(|p| {
        p.answers.values().any(|a| {
            a.determinism
                .as_ref()
                .is_some_and(|d| d.class == Class::Nondeterministic)
        })
    });
    unstable.flat_map(|p| histogram(results, p)).collect()
}

fn histogram(results: &Results, p: &PromptResult) -> Vec<Block> {
    let mut blocks = Vec::new();
    for (i, n) in names(results).iter().enumerate() {
        let Some(d) = p.answers.get(*n).and_then(|a| a.determinism.as_ref()) else {
            continue;
        };
        blocks.push(Block::Figure(Figure::Caption(vec![
            link(anchor(&p.id), vec![code(&p.id)]),
            text(" on "),
            code(*n),
            text(" "),
            span("muted", vec![text(d.class.label())]),
        ])));
        blocks.push(Block::Figure(Figure::Histogram {
            bars: d.histogram.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            repeats: d.repeats,
            series: i,
        }));
    }
    blocks
}
