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
mod difficulty;
mod distributions;
mod divergences;
mod endpoints;
mod errors;
mod families;
mod headline;
mod identity;
mod load;
mod long_context;
mod long_tokens;
mod look;
mod prompts;
mod rounds;
mod statistics;
#[cfg(test)]
mod tests;
mod token_agreement;
mod tool_calls;
mod weak_reads;

use crate::analysis::Results;
use crate::doc::{Block, Sink};

/// A section: its blocks, or none when it has nothing to say.
type Section = fn(&Results) -> Vec<Block>;

/// A section long enough to be handed on a piece at a time (one per prompt).
type Streamed = fn(&Results, &mut dyn Sink);

/// The report's sections, in order.
const SECTIONS: &[Renders] = &[
    Renders::Whole(headline::render),
    Renders::Whole(identity::render),
    Renders::Whole(endpoints::render),
    Renders::Whole(categories::render),
    Renders::Whole(divergences::render),
    Renders::Whole(weak_reads::render),
    Renders::Whole(token_agreement::render),
    Renders::Whole(look::render),
    Renders::Whole(determinism::render),
    Renders::Whole(distributions::render),
    Renders::Whole(load::render),
    Renders::Whole(statistics::render),
    Renders::Whole(difficulty::render),
    Renders::Whole(rounds::render),
    Renders::Whole(families::render),
    Renders::Whole(tool_calls::render),
    Renders::Whole(long_context::render),
    Renders::InPieces(details::render),
    Renders::Whole(prompts::render),
    Renders::Whole(errors::render),
    Renders::Whole(caveats::render),
];

/// How a section is rendered.
enum Renders {
    Whole(Section),
    InPieces(Streamed),
}

/// The report handed to `sink` a section (or, for the longest, a prompt) at a time, each piece
/// dropped before the next is rendered: a long run's report never holds the whole document.
pub(super) fn each(results: &Results, sink: &mut dyn Sink) {
    for section in SECTIONS {
        match section {
            Renders::Whole(render) => sink.blocks(render(results)),
            Renders::InPieces(render) => render(results, sink),
        }
    }
}
