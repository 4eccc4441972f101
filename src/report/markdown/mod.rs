//! report.md: a list of sections, each a pure function of the results in its own file.
//!
//! A new section is one file here and one line in [`SECTIONS`].

pub(super) mod answer;
mod categories;
mod caveats;
pub(super) mod cells;
mod details;
mod determinism;
mod divergences;
mod endpoints;
mod errors;
mod headline;
mod load;
mod look;
mod prompts;
mod statistics;
#[cfg(test)]
mod tests;
mod token_agreement;

use crate::analysis::Results;

/// A section appends its Markdown to the report, or nothing when it has nothing to say.
type Section = fn(&Results, &mut String);

/// report.md's sections, in order.
const SECTIONS: &[Section] = &[
    headline::render,
    endpoints::render,
    categories::render,
    divergences::render,
    token_agreement::render,
    look::render,
    determinism::render,
    load::render,
    statistics::render,
    details::render,
    prompts::render,
    errors::render,
    caveats::render,
];

/// report.md.
pub fn render_report(results: &Results) -> String {
    let mut out = String::new();
    for section in SECTIONS {
        section(results, &mut out);
    }
    out
}
