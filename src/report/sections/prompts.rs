//! The "All prompts" section: the same per-prompt table as comparison_table.md, each prompt
//! linked to its details.

use crate::analysis::Results;
use crate::doc::{text, Block, Part};
use crate::report::table::prompt_table;

pub(super) fn render(results: &Results) -> Vec<Block> {
    let body = vec![prompt_table(results, true).into()];
    vec![Part::section("all-prompts", vec![text("All prompts")], body).into()]
}
