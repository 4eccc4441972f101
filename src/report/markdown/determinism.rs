//! The determinism section (runs with repeats): every prompt and endpoint whose repeats differed,
//! with the answer histogram, its class and where the repeats first diverge.

use std::fmt::Write;

use super::cells::{histogram_cell, names, truncated_keys};
use crate::analysis::{Class, Results};
use crate::report::table::markdown_table;
use crate::text::clip;

pub(super) fn render(results: &Results, out: &mut String) {
    if results.sampling.repeats < 2 {
        return;
    }
    let _ = writeln!(
        out,
        "\n## Determinism ({} repeats at temperature 0)\n",
        results.sampling.repeats
    );
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
            let histogram = histogram_cell(&d.histogram, &truncated_keys(a));
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
                format!("`{}`", p.id),
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
        out.push_str(
            "Every endpoint returned the same completion on every repeat of every prompt.\n",
        );
    } else {
        out.push_str("Prompts whose repeats differed in any way (every other prompt returned a byte-identical completion on every repeat). A different answer is non-determinism; the same answer in other words is only a different completion.\n\n");
        out.push_str(&markdown_table(
            &[
                "prompt",
                "endpoint",
                "answers",
                "unique completions",
                "modal share",
                "class",
                "first divergence",
            ],
            &rows,
        ));
    }
}
