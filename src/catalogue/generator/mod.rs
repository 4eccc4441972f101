//! The generated suite: seeded items with exact answers, in families that exercise what
//! deployments break (counting, arithmetic, dates, state tracking, program output, JSON
//! extraction…). Every item is an ordinary catalogue [`Prompt`] scored by the existing
//! deterministic scorers, with a `reference` that scores correct and a `wrong` that does not.
//!
//! Item `i` depends only on the seed, the [`Version`], `i` and (from version 3) its family's
//! level: its family is `FAMILIES[i % FAMILIES.len()]` and its random numbers come from an RNG
//! seeded with the seed, the version, `i` and the level, so asking for more items never changes
//! the first ones. Calibration items ([`calibration_item`]) come from a stream of their own, so
//! none is ever a measured item.

mod arithmetic;
mod decimals;
mod letters;
mod levels;
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

pub use levels::{FamilyLevel, LevelStatus, Levels, DEFAULT_LEVEL, HIGHEST, LOWEST};
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
    /// Levels 1 to 8 in every family (issue 50): item `i` depends on its family's level too.
    V3,
}

impl Version {
    /// The version new runs use.
    pub const CURRENT: Version = Version::V3;

    /// The number a run records.
    pub const fn number(self) -> u32 {
        match self {
            Version::V1 => 1,
            Version::V2 => 2,
            Version::V3 => 3,
        }
    }

    /// The version a run recorded, if this coherence can make its items.
    pub fn from_number(number: u32) -> Option<Version> {
        [Version::V1, Version::V2, Version::V3]
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

/// A family: its name (the item's category) and budget, and how to make one item: `make` as
/// version 2 made it, `at` at a level (version 3).
struct Family {
    name: &'static str,
    max_tokens: u32,
    make: fn(&mut Rng) -> Item,
    at: fn(&mut Rng, u8) -> Item,
}

const FAMILIES: &[Family] = &[
    Family {
        name: "letters",
        max_tokens: 64,
        make: letters::make,
        at: letters::at,
    },
    Family {
        name: "substrings",
        max_tokens: 64,
        make: substrings::make,
        at: substrings::at,
    },
    Family {
        name: "word_count",
        max_tokens: 64,
        make: word_count::make,
        at: word_count::at,
    },
    Family {
        name: "arithmetic",
        max_tokens: 64,
        make: arithmetic::make,
        at: arithmetic::at,
    },
    Family {
        name: "word_problems",
        max_tokens: 96,
        make: word_problems::make,
        at: word_problems::at,
    },
    Family {
        name: "weekdays",
        max_tokens: 64,
        make: weekdays::make,
        at: weekdays::at,
    },
    Family {
        name: "units",
        max_tokens: 64,
        make: units::make,
        at: units::at,
    },
    Family {
        name: "sorting",
        max_tokens: 128,
        make: sorting::make,
        at: sorting::at,
    },
    Family {
        name: "reversing",
        max_tokens: 64,
        make: reversing::make,
        at: reversing::at,
    },
    Family {
        name: "state_tracking",
        max_tokens: 64,
        make: state::make,
        at: state::at,
    },
    Family {
        name: "logic",
        max_tokens: 64,
        make: logic::make,
        at: logic::at,
    },
    Family {
        name: "decimals",
        max_tokens: 64,
        make: decimals::make,
        at: decimals::at,
    },
    Family {
        name: "programs",
        max_tokens: 96,
        make: programs::make,
        at: programs::at,
    },
    Family {
        name: "json_extraction",
        max_tokens: 160,
        make: records::make,
        at: records::at,
    },
];

/// The family names, in the order items cycle through them.
pub fn families() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().map(|f| f.name)
}

/// The first `count` items for `seed`, as the current version makes them at the default level.
pub fn generate(seed: u64, count: usize) -> Vec<Prompt> {
    generate_by(Version::CURRENT, seed, count)
}

/// The first `count` items for `seed`, as `version` makes them (at the default level).
pub fn generate_by(version: Version, seed: u64, count: usize) -> Vec<Prompt> {
    generate_at(version, seed, count, &Levels::default())
}

/// The first `count` items for `seed`, as `version` makes them, each family at its level in
/// `levels` (versions 1 and 2 have no levels).
pub fn generate_at(version: Version, seed: u64, count: usize, levels: &Levels) -> Vec<Prompt> {
    (0..count).map(|i| item(version, seed, i, levels)).collect()
}

/// Item `index` for `seed` by `version`, its family at its level in `levels`: the same whatever
/// else is generated.
pub fn item(version: Version, seed: u64, index: usize, levels: &Levels) -> Prompt {
    let family = &FAMILIES[index % FAMILIES.len()];
    let level = levels.of(family.name);
    let mut rng = Rng::with_seed(match version {
        Version::V3 => splitmix(mix(version, seed, index as u64) ^ u64::from(level)),
        _ => mix(version, seed, index as u64),
    });
    let (item, level) = match version {
        Version::V1 => (
            v1::maker(family.name).unwrap_or(family.make)(&mut rng),
            None,
        ),
        Version::V2 => ((family.make)(&mut rng), None),
        Version::V3 => ((family.at)(&mut rng, level), Some(level)),
    };
    let mut made = prompt(
        family,
        format!("{ID_PREFIX}{}.{:04}", family.name, index / FAMILIES.len()),
        item,
        level,
        format!("(generated, seed {seed}, version {})", version.number()),
        index + 1,
    );
    if let Some(budget) = levels.max_tokens_of(family.name) {
        made.max_tokens = Some(budget);
    }
    made
}

/// The best constant answer's share of `family`'s calibration items at `level` (over the first
/// 200 of them): what a reference answering one value always would score.
pub fn constant_share(seed: u64, family: &str, level: u8) -> f64 {
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let mut n = 0;
    for k in 0..200 {
        if let Some(p) = calibration_item(seed, family, level, k) {
            *counts
                .entry(p.score.expected_answer().unwrap_or_default())
                .or_default() += 1;
            n += 1;
        }
    }
    counts
        .values()
        .max()
        .map_or(0.0, |&m| m as f64 / n.max(1) as f64)
}

/// The tag that carries a version-3 item's level.
const LEVEL_TAG: &str = "difficulty:";
/// Salt of the calibration stream: calibration item k never shares an RNG seed with item k.
const CALIBRATION_STREAM: u64 = 0xCA11_B8A7_1017_5EED;

/// Calibration item `k` of `family` at `level` for `seed` (current version): drawn from a
/// stream apart from the measured items, with an id of its own (`gen.<family>.cal<level>.<k>`),
/// so a calibration answer is never a measured one. None for a family there is not.
pub fn calibration_item(seed: u64, family: &str, level: u8, k: usize) -> Option<Prompt> {
    let (at, family) = FAMILIES
        .iter()
        .enumerate()
        .find(|(_, f)| f.name == family)?;
    let version = Version::CURRENT;
    let stream = mix(
        version,
        seed ^ CALIBRATION_STREAM,
        (k * FAMILIES.len() + at) as u64,
    );
    let mut rng = Rng::with_seed(splitmix(stream ^ u64::from(level)));
    let item = (family.at)(&mut rng, level);
    Some(prompt(
        family,
        format!("{ID_PREFIX}{}.cal{level}.{k:04}", family.name),
        item,
        Some(level),
        format!(
            "(calibration, seed {seed}, version {}, level {level})",
            version.number()
        ),
        k + 1,
    ))
}

/// The level of a generated item (None: a catalogue prompt, or an item of version 1 or 2).
pub fn difficulty(prompt: &Prompt) -> Option<u8> {
    prompt
        .tags
        .iter()
        .find_map(|t| t.strip_prefix(LEVEL_TAG)?.parse().ok())
}

/// The budget of `family` at `level`: its own, doubled from level 6 up, where answers are long.
pub fn max_tokens(family: &str, level: u8) -> Option<u32> {
    let f = FAMILIES.iter().find(|f| f.name == family)?;
    Some(if level >= 6 {
        f.max_tokens * 2
    } else {
        f.max_tokens
    })
}

fn prompt(
    family: &Family,
    id: String,
    item: Item,
    level: Option<u8>,
    file: String,
    line: usize,
) -> Prompt {
    let mut tags = vec!["generated".to_string()];
    tags.extend(level.map(|l| format!("{LEVEL_TAG}{l}")));
    Prompt {
        id,
        suite: crate::catalogue::Suite::Generated,
        category: family.name.to_string(),
        request: PromptRequest::Chat {
            messages: vec![Message {
                role: Role::User,
                content: item.question,
            }],
        },
        max_tokens: Some(match level {
            Some(l) => max_tokens(family.name, l).unwrap_or(family.max_tokens),
            None => family.max_tokens,
        }),
        tags,
        reference: item.reference,
        wrong: item.wrong,
        score: item.score,
        source: SourceLocation { file, line },
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
