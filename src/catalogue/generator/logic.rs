//! Comparisons and simple logic: an order given as shuffled pairwise facts ("Ana is taller than
//! Ben"), then who is first, last, or second.

use fastrand::Rng;

use super::levels::by_level;
use super::{one_of, pick, Item};

const NAMES: &[&str] = &[
    "Amara", "Bruno", "Chen", "Dalia", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jana", "Kofi",
    "Lena", "Mateo", "Nadia", "Omar", "Priya",
];

/// (more, less, most, least): "X is {more} than Y" means X ranks above Y.
const RELATIONS: &[(&str, &str, &str, &str)] = &[
    ("taller", "shorter", "tallest", "shortest"),
    ("older", "younger", "oldest", "youngest"),
    ("faster", "slower", "fastest", "slowest"),
    ("heavier", "lighter", "heaviest", "lightest"),
];

pub(super) fn make(rng: &mut Rng) -> Item {
    let n = rng.usize(4..=6);
    ordered(rng, n)
}

/// At `level`: two people and one fact (level 1) up to sixteen people (level 8).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    ordered(rng, by_level(level, [2, 3, 4, 5, 7, 9, 12, 16]))
}

/// `n` people ranked by shuffled pairwise facts, and who is first, last or second.
fn ordered(rng: &mut Rng, n: usize) -> Item {
    let mut names: Vec<&str> = NAMES.to_vec();
    rng.shuffle(&mut names);
    // Ranked from most to least.
    let ranked: Vec<&str> = names[..n].to_vec();
    let &(more, less, most, least) = pick(rng, RELATIONS);
    let mut facts: Vec<String> = ranked
        .windows(2)
        .map(|w| {
            if rng.bool() {
                format!("{} is {more} than {}", w[0], w[1])
            } else {
                format!("{} is {less} than {}", w[1], w[0])
            }
        })
        .collect();
    rng.shuffle(&mut facts);
    // With two people "second tallest" is "shortest": only first and last are asked.
    let asks = if n > 2 { 4 } else { 2 };
    let (question, at) = match rng.u8(..asks) {
        1 if n == 2 => (format!("Who is the {least}?"), n - 1),
        0 => (format!("Who is the {most}?"), 0),
        1 => (format!("Who is the second {most}?"), 1),
        2 => (format!("Who is the {least}?"), n - 1),
        _ => (format!("Who is the second {least}?"), n - 2),
    };
    let answer = ranked[at];
    let wrong = ranked[if at + 1 < n { at + 1 } else { at - 1 }];
    Item {
        question: format!(
            "{}. {question} Answer with the name only.",
            facts.join(". ")
        ),
        reference: format!("The answer is {answer}."),
        wrong: format!("The answer is {wrong}."),
        score: one_of(
            answer,
            ranked
                .iter()
                .filter(|r| **r != answer)
                .map(|r| r.to_string())
                .collect(),
        ),
    }
}
