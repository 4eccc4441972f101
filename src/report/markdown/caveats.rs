//! The scorer caveats section: what a reader should keep in mind about how answers were scored.

use std::fmt::Write;

use crate::analysis::{Results, SAME_SIMILARITY};

pub(super) fn render(results: &Results, out: &mut String) {
    out.push_str("\n## Scorer caveats\n\n");
    out.push_str("- Numbers are extracted from free text with a fixed precedence: the last `\\boxed{}`, then the last \"answer is X\", then the last bold number, then the last number (digits, fractions, `\\frac`, number words). An answer that states the right number and then keeps writing other numbers can be misread; the evidence column shows what was taken.\n");
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
