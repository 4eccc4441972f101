//! The generator's promises: same seed, same items; item `i` independent of the count; every
//! reference scores correct and every wrong answer does not; each version's items pinned; no
//! family's expected answer a constant or a shortcut can win.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::*;
use crate::catalogue::self_test;
use crate::score::ScoreContext;

fn bytes(items: &[Prompt]) -> Vec<u8> {
    serde_json::to_vec(items).unwrap()
}

#[test]
fn the_same_seed_gives_the_same_items_byte_for_byte() {
    assert_eq!(bytes(&generate(7, 500)), bytes(&generate(7, 500)));
    assert_ne!(bytes(&generate(7, 50)), bytes(&generate(8, 50)));
}

#[test]
fn an_item_does_not_depend_on_how_many_were_asked_for() {
    let many = generate(3, 300);
    let few = generate(3, 40);
    assert_eq!(bytes(&many[..40]), bytes(&few));
    assert_eq!(
        bytes(&[item(Version::CURRENT, 3, 299, &Levels::default())]),
        bytes(&many[299..])
    );
}

/// The digest of `generate_by(version, DEFAULT_SEED, 1000)`, serialized.
fn digest(version: Version) -> String {
    format!(
        "{:x}",
        Sha256::digest(bytes(&generate_by(version, DEFAULT_SEED, 1000)))
    )
}

/// Changing what a family generates for a seed must come with a new version (a saved run is
/// re-scored by regenerating its items): this pins the items of every version, version 1's
/// still those the runs it made were sent. (The digests changed when the weekday, box and
/// puzzle families' exact scores were marked `closed`, issue 48: how an answer is read, not what
/// is sent or expected.)
#[test]
fn the_items_of_every_generator_version_are_pinned() {
    assert_eq!(
        GENERATOR_VERSION, 3,
        "pin the new version's digest with the version"
    );
    assert_eq!(
        digest(Version::V1),
        "79ebfd4e972913ffa0a53fd1205bb5e503e65e28717416bb603010edec396781"
    );
    assert_eq!(
        digest(Version::V2),
        "120f602f079a7ca1deee9b43212411e7eb88243db76f97c1652db36cb0d3d293"
    );
    let v3: Vec<String> = (LOWEST..=HIGHEST)
        .map(|level| {
            let items = generate_at(Version::V3, DEFAULT_SEED, 280, &Levels::all_at(level));
            format!("{:x}", Sha256::digest(bytes(&items)))[..16].to_string()
        })
        .collect();
    assert_eq!(v3, V3_DIGESTS, "version 3, levels 1 to 8");
    assert_eq!(Version::from_number(1), Some(Version::V1));
    assert_eq!(Version::from_number(3), Some(Version::V3));
    assert_eq!(Version::from_number(4), None);
}

/// The start of the digest of version 3's first 280 items at each level.
const V3_DIGESTS: [&str; 8] = [
    "ac35494ff6d29f9b",
    "2e81d71929cea69f",
    "2d59f5a1de0775bf",
    "2df2ae3f4d78507f",
    "2ac55db7f6fb5fd6",
    "3dd4934e4168a577",
    "40c5c32a5437632d",
    "df8d8609657a7842",
];

/// Every level of every family: references score correct and wrong answers do not, no answer
/// covers more than a quarter of a family's items (so a constant wins little), the item says
/// its level, and an item depends on its level (the same index at two levels differs).
#[test]
fn every_level_of_every_family_is_sound_and_balanced() {
    let ctx = ScoreContext::for_catalogue(Path::new("prompts"));
    for level in LOWEST..=HIGHEST {
        let items = generate_at(Version::V3, 9, 14 * 200, &Levels::all_at(level));
        assert_sound(&items, &ctx, &format!("level {level}"));
        for (family, items) in by_family(&items) {
            let (share, value) = largest_share(&items, expected);
            // Level 1's counts are 0 or 1 and level 2's 0 to 2: a constant wins about half and a
            // third there; from level 3 no answer is the usual one.
            let most = match level {
                1 => 0.6,
                2 => 0.45,
                3 => 0.4,
                _ => 0.33,
            };
            assert!(
                share <= most,
                "level {level}: {family} expects {value} on {:.0}% of its items",
                share * 100.0
            );
            assert!(items.iter().all(|p| difficulty(p) == Some(level)));
        }
    }
    let at = |level| item(Version::V3, 9, 5, &Levels::all_at(level));
    assert_ne!(at(1).question(), at(2).question());
    assert_eq!(at(3).question(), at(3).question());
}

/// The levels climb: the top level's questions are longer than level 1's in every family, and
/// each family's level-1 items are short enough for a small model.
#[test]
fn questions_grow_with_the_level() {
    let mean_len = |level: u8, family: &str| {
        let items = generate_at(Version::V3, 4, 14 * 40, &Levels::all_at(level));
        let of: Vec<usize> = items
            .iter()
            .filter(|p| p.category == family)
            .map(|p| p.question().len() + expected(p).len())
            .collect();
        of.iter().sum::<usize>() as f64 / of.len() as f64
    };
    for family in families() {
        let (low, high) = (mean_len(1, family), mean_len(HIGHEST, family));
        assert!(
            high > 1.2 * low,
            "{family}: level 1 {low:.0} chars, level 8 {high:.0}"
        );
    }
}

/// Calibration items are never measured items: other ids and other questions, whatever the
/// level, and the same for the same seed, family, level and index.
#[test]
fn calibration_items_are_drawn_apart_from_the_measured_ones() {
    let mut repeated = 0;
    for level in LOWEST..=HIGHEST {
        let measured = generate_at(Version::V3, 2, 14 * 50, &Levels::all_at(level));
        let questions: BTreeSet<&str> = measured.iter().map(|p| p.question()).collect();
        let ids: BTreeSet<&str> = measured.iter().map(|p| p.id.as_str()).collect();
        for family in families() {
            for k in 0..24 {
                let c = calibration_item(2, family, level, k).unwrap();
                assert_eq!(difficulty(&c), Some(level));
                assert_eq!(c.category, family);
                assert!(!ids.contains(c.id.as_str()), "{}", c.id);
                // The same question may come up by chance where a level has few (one-digit
                // sums, one word and a letter): only the ids must differ, and from level 4 up
                // nearly every question.
                if level >= 4 && questions.contains(c.question()) {
                    repeated += 1;
                }
                assert_eq!(
                    bytes(&[c]),
                    bytes(&[calibration_item(2, family, level, k).unwrap()])
                );
            }
        }
    }
    assert!(
        repeated <= 14 * 24 * 5 / 100,
        "{repeated} calibration questions are measured ones"
    );
    assert!(calibration_item(2, "no such family", 1, 0).is_none());
}

#[test]
fn ids_are_unique_and_name_the_family() {
    let items = generate(11, 3000);
    let ids: BTreeSet<&str> = items.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids.len(), items.len());
    assert_eq!(items[0].id, "gen.letters.0000");
    assert_eq!(items[FAMILIES.len()].id, "gen.letters.0001");
    for p in &items {
        assert_eq!(p.suite, crate::catalogue::Suite::Generated);
        assert!(
            p.id.starts_with(&format!("gen.{}.", p.category)),
            "{}",
            p.id
        );
        assert!(p.max_tokens.is_some_and(|t| t <= 160));
    }
    assert!(families().count() >= 12);
}

#[test]
fn thousands_of_items_are_distinct_questions() {
    let items = generate(DEFAULT_SEED, 5000);
    let questions: BTreeSet<&str> = items.iter().map(|p| p.question()).collect();
    assert!(
        questions.len() >= 4900,
        "{} distinct of 5000",
        questions.len()
    );
}

#[test]
fn every_reference_scores_correct_and_every_wrong_answer_does_not() {
    let ctx = ScoreContext::for_catalogue(Path::new("prompts"));
    for (seed, count) in [(DEFAULT_SEED, 6000), (42, 3000)] {
        assert_sound(&generate(seed, count), &ctx, &format!("seed {seed}"));
    }
}

/// Every reference of `items` scores correct and every wrong answer does not (the first 20
/// problems shown, each with `what` and its question).
fn assert_sound(items: &[Prompt], ctx: &ScoreContext, what: &str) {
    let problems: Vec<String> = items
        .iter()
        .flat_map(|p| {
            self_test(p, ctx)
                .into_iter()
                .map(move |e| format!("{what}: {e}\n    question: {}", p.question()))
        })
        .collect();
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems[..problems.len().min(20)].join("\n")
    );
}

/// The answer an item expects: what a constant answer would have to match.
fn expected(p: &Prompt) -> String {
    p.score.expected_answer().unwrap_or_default()
}

/// Per family, its items' expected answers.
fn by_family(items: &[Prompt]) -> BTreeMap<&str, Vec<&Prompt>> {
    let mut families: BTreeMap<&str, Vec<&Prompt>> = BTreeMap::new();
    for p in items {
        families.entry(p.category.as_str()).or_default().push(p);
    }
    families
}

/// The largest share of `items` one value of `key` covers, with that value.
fn largest_share<'a>(items: &[&'a Prompt], key: impl Fn(&'a Prompt) -> String) -> (f64, String) {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for p in items {
        *counts.entry(key(p)).or_default() += 1;
    }
    let (value, n) = counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .unwrap_or_default();
    (n as f64 / items.len() as f64, value)
}

#[test]
fn no_expected_answer_covers_more_than_a_quarter_of_a_family() {
    for seed in [1, 2, 3, 4, 5, 1_000_003, u64::MAX] {
        let items = generate_by(Version::V2, seed, 2000);
        let families = by_family(&items);
        assert_eq!(families.len(), FAMILIES.len());
        for (family, items) in families {
            let (share, value) = largest_share(&items, expected);
            assert!(
                share <= 0.25,
                "seed {seed}: {family} expects {value} on {:.0}% of its items",
                share * 100.0
            );
        }
    }
}

/// "Which number is larger": answering the shorter decimal (the only rule version 1 needed) or
/// the longer one wins about half the items, never most.
#[test]
fn neither_the_shorter_nor_the_longer_decimal_wins_the_comparisons() {
    let decimals = |text: &str| text.split_once('.').map_or(0, |(_, d)| d.len());
    for seed in [1, 2, 3] {
        let items = generate(seed, 14 * 1000);
        let compared: Vec<(String, String, String)> = items
            .iter()
            .filter_map(|p| {
                let rest = p.question().strip_prefix("Which number is larger, ")?;
                let (a, rest) = rest.split_once(" or ")?;
                let (b, _) = rest.split_once('?')?;
                Some((a.to_string(), b.to_string(), expected(p)))
            })
            .collect();
        let shorter_wins = compared
            .iter()
            .filter(|(a, b, answer)| {
                let shorter = if decimals(a) < decimals(b) { a } else { b };
                shorter == answer
            })
            .count() as f64
            / compared.len() as f64;
        assert!(compared.len() > 300, "{}", compared.len());
        assert!(
            (0.4..=0.6).contains(&shorter_wins),
            "seed {seed}: the shorter decimal is larger in {:.0}%",
            shorter_wins * 100.0
        );
    }
}

/// Version 2: counting only separate matches (what `str::matches` counts) falls short on many substring
/// items, and the count is never simply "it occurs once".
#[test]
fn counting_separate_matches_does_not_win_the_substrings() {
    let items = generate_by(Version::V2, 4, 14 * 1000);
    let substrings: Vec<&Prompt> = items
        .iter()
        .filter(|p| p.category == "substrings")
        .collect();
    let separate_wins = substrings
        .iter()
        .filter(|p| {
            let q = p.question();
            let needle = q.split('\'').nth(1).unwrap_or_default();
            let text = q.split('\'').nth(3).unwrap_or_default();
            text.matches(needle).count().to_string() == expected(p)
        })
        .count() as f64
        / substrings.len() as f64;
    assert!(
        separate_wins <= 0.6,
        "separate matches win {:.0}%",
        separate_wins * 100.0
    );
}
