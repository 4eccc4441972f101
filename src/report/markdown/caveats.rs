//! The scorer caveats section: what a reader should keep in mind about how answers were scored.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::analysis::{Results, SAME_SIMILARITY};

pub(super) fn render(results: &Results, out: &mut String) {
    out.push_str("\n## Scorer caveats\n\n");
    let scorers: BTreeSet<&str> = results.prompts.iter().map(|p| p.scorer.as_str()).collect();
    let used = if scorers.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = scorers.iter().map(|s| format!("`{s}`")).collect();
        format!("Scorers in this run: {}. ", names.join(", "))
    };
    // The rules themselves live with the scorers (`src/score/`) and the catalogue docs; the
    // report points there rather than restating them.
    let _ = writeln!(
        out,
        "- {used}Each scorer reads the final answer out of free text by fixed rules, described in the catalogue docs (`prompts/README.md`, Scorers; `scorers/README.md` for `js`). An answer that states the right value and then keeps writing others can be misread; the evidence column shows what was taken."
    );
    let _ = writeln!(
        out,
        "- Open-ended prompts (creative, summarization, translation) have no single right answer: they pass when the sanity checks pass, and two endpoints are `same` when their texts are at least {:.0}% similar word by word, else `review`.",
        SAME_SIMILARITY * 100.0
    );
    out.push_str("- `same` for two wrong answers means both gave the same wrong answer: the deployments agree, the model is wrong.\n");
    out.push_str("- Code is scored by running the model's function against unit tests in a sandboxed JavaScript engine with time and memory limits; a crash or timeout is a failed test.\n");
    if results.sampling.repeats < 2 {
        out.push_str("- One repeat per prompt: a single difference cannot be told apart from sampler noise. Run with `--repeats 3` or more.\n");
    }
}
