//! The generated suite: seeded items with exact answers, in families that exercise what
//! deployments break (counting, arithmetic, dates, state tracking, program output, JSON
//! extraction…). Every item is an ordinary catalogue [`Prompt`] scored by the existing
//! deterministic scorers, with a `reference` that scores correct and a `wrong` that does not.
//!
//! Item `i` depends only on the seed, [`GENERATOR_VERSION`] and `i`: its family is
//! `FAMILIES[i % FAMILIES.len()]` and its random numbers come from an RNG seeded with the seed
//! and `i`, so asking for more items never changes the first ones.

mod arithmetic;
mod decimals;
mod letters;
mod logic;
mod programs;
mod records;
mod reversing;
mod sorting;
mod state;
mod substrings;
mod units;
mod weekdays;
mod word_count;
mod word_problems;
mod words;

use fastrand::Rng;

use super::spec::{Message, Prompt, PromptRequest, Role, SourceLocation};
use crate::score::ScorerSpec;

pub use programs::confirm_in_engine;

/// Bumped whenever any family's output changes for a given seed and index: a run records it,
/// and re-scoring a run made by another version is refused rather than scored against other
/// items.
pub const GENERATOR_VERSION: u32 = 1;
/// The seed when `--seed` is not given.
pub const DEFAULT_SEED: u64 = 1;
/// Every generated id starts with this; catalogue ids cannot (they hold no `.`).
pub const ID_PREFIX: &str = "gen.";
/// The most items one run may ask for.
pub const MAX_ITEMS: usize = 1_000_000;

/// One generated question, before it becomes a [`Prompt`].
struct Item {
    /// The user message, exactly as sent.
    question: String,
    reference: String,
    wrong: String,
    score: ScorerSpec,
}

/// A family: its name (the item's category) and budget, and how to make one item.
struct Family {
    name: &'static str,
    max_tokens: u32,
    make: fn(&mut Rng) -> Item,
}

const FAMILIES: &[Family] = &[
    Family {
        name: "letters",
        max_tokens: 64,
        make: letters::make,
    },
    Family {
        name: "substrings",
        max_tokens: 64,
        make: substrings::make,
    },
    Family {
        name: "word_count",
        max_tokens: 64,
        make: word_count::make,
    },
    Family {
        name: "arithmetic",
        max_tokens: 64,
        make: arithmetic::make,
    },
    Family {
        name: "word_problems",
        max_tokens: 96,
        make: word_problems::make,
    },
    Family {
        name: "weekdays",
        max_tokens: 64,
        make: weekdays::make,
    },
    Family {
        name: "units",
        max_tokens: 64,
        make: units::make,
    },
    Family {
        name: "sorting",
        max_tokens: 128,
        make: sorting::make,
    },
    Family {
        name: "reversing",
        max_tokens: 64,
        make: reversing::make,
    },
    Family {
        name: "state_tracking",
        max_tokens: 64,
        make: state::make,
    },
    Family {
        name: "logic",
        max_tokens: 64,
        make: logic::make,
    },
    Family {
        name: "decimals",
        max_tokens: 64,
        make: decimals::make,
    },
    Family {
        name: "programs",
        max_tokens: 96,
        make: programs::make,
    },
    Family {
        name: "json_extraction",
        max_tokens: 160,
        make: records::make,
    },
];

/// The family names, in the order items cycle through them.
pub fn families() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().map(|f| f.name)
}

/// The first `count` items for `seed`.
pub fn generate(seed: u64, count: usize) -> Vec<Prompt> {
    (0..count).map(|i| item(seed, i)).collect()
}

/// Item `index` for `seed`: the same whatever else is generated.
pub fn item(seed: u64, index: usize) -> Prompt {
    let family = &FAMILIES[index % FAMILIES.len()];
    let mut rng = Rng::with_seed(mix(seed, index as u64));
    let item = (family.make)(&mut rng);
    Prompt {
        id: format!("{ID_PREFIX}{}.{:04}", family.name, index / FAMILIES.len()),
        category: family.name.to_string(),
        request: PromptRequest::Chat {
            messages: vec![Message {
                role: Role::User,
                content: item.question,
            }],
        },
        max_tokens: Some(family.max_tokens),
        tags: vec!["generated".to_string()],
        reference: item.reference,
        wrong: item.wrong,
        score: item.score,
        source: SourceLocation {
            file: format!("(generated, seed {seed}, version {GENERATOR_VERSION})"),
            line: index + 1,
        },
        tool_use: None,
    }
}

/// Whether a prompt id is a generated item's.
pub fn is_generated(id: &str) -> bool {
    id.starts_with(ID_PREFIX)
}

/// The per-item RNG seed: splitmix64 chained over the seed, the version and the index, so
/// neighbouring indices and seeds give unrelated streams.
fn mix(seed: u64, index: u64) -> u64 {
    let h = splitmix(seed);
    let h = splitmix(h ^ u64::from(GENERATOR_VERSION));
    splitmix(h ^ index)
}

/// One splitmix64 step (the long suite mixes its cells with it too).
pub(crate) fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Shared by the families: a numeric score.
fn numeric(expected: impl ToString) -> ScorerSpec {
    ScorerSpec::Numeric {
        expected: expected.to_string(),
        tolerance: None,
        counts: None,
    }
}

/// Shared by the families: an exact score that credits none of `distractors`.
fn exact(expected: &str, distractors: Vec<String>) -> ScorerSpec {
    ScorerSpec::Exact {
        expected: expected.to_string(),
        aliases: Vec::new(),
        distractors,
    }
}

/// One element of a non-empty slice, chosen by `rng`.
fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> &'a T {
    &items[rng.usize(..items.len())]
}

#[cfg(test)]
mod tests;
