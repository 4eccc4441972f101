//! Substring counts: how many times a two- or three-letter string occurs in a word or two,
//! overlapping occurrences included.

use fastrand::Rng;

use super::letters::off_by_one;
use super::{numeric, words, Item};

pub(super) fn make(rng: &mut Rng) -> Item {
    let text = words::distinct(rng, 2).concat();
    let len = if rng.bool() { 2 } else { 3 };
    // A piece of the text itself, so the count is at least one.
    let chars: Vec<char> = text.chars().collect();
    let start = rng.usize(..=chars.len() - len);
    let needle: String = chars[start..start + len].iter().collect();
    let positions: Vec<String> = (0..=chars.len() - len)
        .filter(|&i| chars[i..i + len].iter().copied().eq(needle.chars()))
        .map(|i| (i + 1).to_string())
        .collect();
    let n = positions.len();
    Item {
        question: format!(
            "How many times does the string '{needle}' occur in '{text}'? Count overlapping occurrences. Answer with the number."
        ),
        // The string itself stays out of the answers: it can be a number word ("one", "ten").
        reference: format!(
            "It starts at positions {}, so it occurs {n} times. The answer is {n}.",
            positions.join(", ")
        ),
        wrong: format!("It occurs {} times.", off_by_one(n)),
        score: numeric(n),
    }
}
