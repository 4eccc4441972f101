//! The flips on a weak read, after the divergences: per pair, each flip whose either side was
//! scored from a cut-off completion, a number with no answer phrase (or not stated as the answer)
//! or code that did not run, with the side and the reason, so a reader checks those first.

use super::cells::{anchor, plural};
use crate::analysis::{PairWeakReads, Results};
use crate::doc::{code, link, para, text, Block, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    if results.weak_reads.is_empty() {
        return Vec::new();
    }
    let mut body = vec![para(vec![text(
        "Flips whose verdict rests on a weak read on either side: a completion cut off at the \
         token limit, a number read with no answer phrase or not stated as the answer, code that \
         did not run. Check these first.",
    )])];
    for pair in &results.weak_reads {
        body.push(para(vec![text(format!(
            "{} vs {}: {} on a weak read.",
            pair.reference,
            pair.other,
            plural(pair.flips.len(), "side")
        ))]));
        body.push(table(pair));
    }
    vec![Part::section("weak-reads", vec![text("Flips on a weak read")], body).into()]
}

fn table(pair: &PairWeakReads) -> Block {
    let mut table = Table::new(&["prompt", "side", "reason"]);
    for f in &pair.flips {
        table.row(vec![
            vec![link(anchor(&f.prompt), vec![code(&f.prompt)])],
            vec![text(&f.endpoint)],
            vec![text(&f.reason)],
        ]);
    }
    table.into()
}
