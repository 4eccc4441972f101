//! The compare report as a document: a list of sections, each a pure function of the results in
//! its own file, rendered once into the document model (`crate::doc`) from which both report.md
//! and report.html are written.
//!
//! A new section is one file here and one line in [`SECTIONS`].

pub(super) mod answer;
mod categories;
mod caveats;
pub(super) mod cells;
mod details;
mod determinism;
mod distributions;
mod divergences;
mod endpoints;
mod errors;
mod families;
mod headline;
mod load;
mod long_context;
mod long_tokens;
mod look;
mod prompts;
mod statistics;
#[cfg(test)]
mod tests;
mod token_agreement;
mod tool_calls;

use crate::analysis::Results;
use crate::doc::Block;

/// A section: its blocks, or none when it has nothing to say.
type Section = fn(&Results) -> Vec<Block>;

/// The report's sections, in order.
const SECTIONS: &[Section] = &[
    headline::render,
    endpoints::render,
    categories::render,
    divergences::render,
    token_agreement::render,
    look::render,
    determinism::render,
    distributions::render,
    load::render,
    statistics::render,
    families::render,
    tool_calls::render,
    long_context::render,
    details::render,
    prompts::render,
    errors::render,
    caveats::render,
];

/// The whole report as a document.
pub(super) fn document(results: &Results) -> Vec<Block> {
    SECTIONS.iter().flat_map(|s| s(results)).collect()
}

/// The report's sections handed to `write` one at a time, each dropped before the next is
/// rendered: a long run's report never holds the whole document.
pub(super) fn each(results: &Results, mut write: impl FnMut(&[Block])) {
    for section in SECTIONS {
        write(&section(results));
    }
}
