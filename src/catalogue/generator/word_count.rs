//! Word counts: how many words a sentence made of real and short words holds.

use fastrand::Rng;

use super::letters::off_by_one;
use super::levels::by_level;
use super::{numeric, pick, words, Item};

const SHORT: &[&str] = &[
    "a", "the", "of", "and", "to", "in", "is", "it", "on", "by", "at", "or", "so", "we", "my",
];

pub(super) fn make(rng: &mut Rng) -> Item {
    let n = rng.usize(9..=24);
    counted(rng, n)
}

/// At `level`: two to four words (level 1) up to 90 to 140 (level 8).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let (low, high) = by_level(
        level,
        [
            (2, 4),
            (4, 7),
            (7, 12),
            (10, 18),
            (16, 28),
            (26, 42),
            (42, 70),
            (90, 140),
        ],
    );
    let n = rng.usize(low..=high);
    counted(rng, n)
}

/// A text of `n` words, a third of them short, and the question how many there are.
fn counted(rng: &mut Rng, n: usize) -> Item {
    let words: Vec<&str> = (0..n)
        .map(|_| {
            if rng.u8(..3) == 0 {
                *pick(rng, SHORT)
            } else {
                words::any(rng)
            }
        })
        .collect();
    let sentence = words.join(" ");
    Item {
        question: format!(
            "How many words are in the following text? Count every word, including repeated ones.\n\n{sentence}\n\nAnswer with the number."
        ),
        reference: format!("Counting the words one by one gives {n}. The answer is {n}."),
        wrong: format!("The text has {} words.", off_by_one(n)),
        score: numeric(n),
    }
}
