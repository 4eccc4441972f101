//! The generated suite: seeded items with exact answers, in families that exercise what
//! deployments break (counting, arithmetic, dates, state tracking, program output, JSON
//! extraction…). Every item is an ordinary catalogue [`Prompt`] scored by the existing
//! deterministic scorers, with a `reference` that scores correct and a `wrong` that does not.
//!
//! Item `i` depends only on the seed, the [`Version`] and `i`: its family is
//! `FAMILIES[i % FAMILIES.len()]` and its random numbers come from an RNG seeded with the seed,
//! the version and `i`, so asking for more items never changes the first ones.

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
mod v1;
mod weekdays;
mod word_count;
mod word_problems;
mod words;

use fastrand::Rng;

use super::spec::{Message, Prompt, PromptRequest, Role, SourceLocation};
use crate::score::ScorerSpec;

pub use programs::confirm_in_engine;

/// A version of the generator: bumped whenever any family's output changes for a given seed and
/// index. A run records the version that made its items and re-scoring makes them again with
/// it; a version this coherence cannot make is refused rather than scored against other items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The first suite, kept to re-score the runs it made: letters, substrings and decimals
    /// mostly expected one answer (issue 34).
    V1,
    /// Every family's expected answers balanced: no answer on more than a quarter of a family's
    /// items, no shortcut that wins a family.
    V2,
}

impl Version {
    /// The version new runs use.
    pub const CURRENT: Version = Version::V2;

    /// The number a run records.
    pub const fn number(self) -> u32 {
        match self {
            Version::V1 => 1,
            Version::V2 => 2,
        }
    }

    /// The version a run recorded, if this coherence can make its items.
    pub fn from_number(number: u32) -> Option<Version> {
        [Version::V1, Version::V2]
            .into_iter()
            .find(|v| v.number() == number)
    }
}

/// The number of the version new runs use.
pub const GENERATOR_VERSION: u32 = Version::CURRENT.number();
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

/// The first `count` items for `seed`, as the current version makes them.
pub fn generate(seed: u64, count: usize) -> Vec<Prompt> {
    generate_by(Version::CURRENT, seed, count)
}

/// The first `count` items for `seed`, as `version` makes them.
pub fn generate_by(version: Version, seed: u64, count: usize) -> Vec<Prompt> {
    (0..count).map(|i| item(version, seed, i)).collect()
}

/// Item `index` for `seed` by `version`: the same whatever else is generated.
pub fn item(version: Version, seed: u64, index: usize) -> Prompt {
    let family = &FAMILIES[index % FAMILIES.len()];
    let mut rng = Rng::with_seed(mix(version, seed, index as u64));
    let make = match version {
        Version::V1 => v1::maker(family.name).unwrap_or(family.make),
        Version::V2 => family.make,
    };
    let item = make(&mut rng);
    Prompt {
        id: format!("{ID_PREFIX}{}.{:04}", family.name, index / FAMILIES.len()),
        suite: crate::catalogue::Suite::Generated,
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
            file: format!("(generated, seed {seed}, version {})", version.number()),
            line: index + 1,
        },
        tool_use: None,
    }
}

/// The per-item RNG seed: splitmix64 chained over the seed, the version and the index, so
/// neighbouring indices and seeds give unrelated streams.
fn mix(version: Version, seed: u64, index: u64) -> u64 {
    let h = splitmix(seed);
    let h = splitmix(h ^ u64::from(version.number()));
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
    exact_among(expected, distractors, false)
}

/// Shared by the families: an exact score among a closed set, `expected` and `others` being
/// every answer there is (a wrong answer reads as the one it names; naming none is no answer).
fn one_of(expected: &str, others: Vec<String>) -> ScorerSpec {
    exact_among(expected, others, true)
}

fn exact_among(expected: &str, distractors: Vec<String>, closed: bool) -> ScorerSpec {
    ScorerSpec::Exact {
        expected: expected.to_string(),
        aliases: Vec::new(),
        distractors,
        closed,
    }
}

/// One element of a non-empty slice, chosen by `rng`.
fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> &'a T {
    &items[rng.usize(..items.len())]
}

#[cfg(test)]
mod tests;
