//! The scorer caveats section: what a reader should keep in mind about how answers were scored.

use std::collections::BTreeSet;

use crate::analysis::{Results, SAME_SIMILARITY};
use crate::doc::{code, t, text, Block, Line, Part};

pub(super) fn render(results: &Results) -> Vec<Block> {
    let scorers: BTreeSet<&str> = results.prompts.iter().map(|p| p.scorer.as_str()).collect();
    let mut used: Line = Vec::new();
    if !scorers.is_empty() {
        used.push(text("Scorers in this run: "));
        for (i, s) in scorers.iter().enumerate() {
            if i > 0 {
                used.push(text(", "));
            }
            used.push(code(*s));
        }
        used.push(text(". "));
    }
    // The rules themselves live with the scorers (`src/score/`) and the catalogue docs; the
    // report points there rather than restating them.
    used.extend(t("Each scorer reads the final answer out of free text by fixed rules, described in the catalogue docs (`prompts/README.md`, Scorers; `scorers/README.md` for `js`). An answer that states the right value and then keeps writing others can be misread; the evidence column shows what was taken.", &[]));
    let mut items = vec![
        used,
        t(&format!(
            "Open-ended prompts (creative, summarization, translation) have no single right answer: they pass when the sanity checks pass, and two endpoints are `same` when their texts are at least {:.0}% similar word by word, else `review`.",
            SAME_SIMILARITY * 100.0
        ), &[]),
        t("`same` for two wrong answers means both gave the same wrong answer: the deployments agree, the model is wrong.", &[]),
        t("Code is scored by running the model's function against unit tests in a sandboxed JavaScript engine with time and memory limits; a crash or timeout is a failed test.", &[]),
    ];
    if results.sampling.repeats < 2 {
        items.push(t("One repeat per prompt: a single difference cannot be told apart from sampler noise. Run with `--repeats 3` or more.", &[]));
    }
    let body = vec![Block::List(items)];
    vec![Part::section("caveats", vec![text("Scorer caveats")], body).into()]
}
