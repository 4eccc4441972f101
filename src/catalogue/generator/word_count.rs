//! Word counts: how many words a sentence made of real and short words holds.

use fastrand::Rng;

use super::letters::off_by_one;
use super::{numeric, pick, words, Item};

const SHORT: &[&str] = &[
    "a", "the", "of", "and", "to", "in", "is", "it", "on", "by", "at", "or", "so", "we", "my",
];

pub(super) fn make(rng: &mut Rng) -> Item {
    let n = rng.usize(9..=24);
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
