//! The "All prompts" section: the same per-prompt table as comparison_table.md, each prompt
//! linked to its details.

use crate::analysis::Results;
use crate::report::table::prompt_table;

pub(super) fn render(results: &Results, out: &mut String) {
    out.push_str("\n## All prompts\n\n");
    out.push_str(&prompt_table(results, true));
}
