//! Reversing: a real word written backwards, letter by letter, or a list of words in reverse
//! order.

use fastrand::Rng;

use super::levels::by_level;
use super::{exact, words, Item};
use crate::score::ScorerSpec;

pub(super) fn make(rng: &mut Rng) -> Item {
    if rng.bool() {
        word_order(rng)
    } else {
        letters(rng)
    }
}

/// At `level`: a three-letter word or a list of two words (level 1), up to a string of 40
/// random letters or a list of 30 words (level 8).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let count = by_level(level, [2, 3, 4, 6, 9, 14, 20, 30]);
    if rng.bool() {
        return listed(rng, count);
    }
    let word = match level {
        ..=1 => loop {
            // A palindrome would ask nothing.
            let w = words::short(rng);
            if !w.chars().eq(w.chars().rev()) {
                break w.to_string();
            }
        },
        2 => words::of_length(rng, 5, 6).to_string(),
        3 => words::of_length(rng, 8, 10).to_string(),
        _ => {
            let length = by_level(level, [0, 0, 0, 12, 16, 22, 30, 40]);
            words::random_letters(rng, length)
        }
    };
    backwards(rng, &word)
}

/// A list of words, in reverse order (exact output).
fn word_order(rng: &mut Rng) -> Item {
    let count = rng.usize(5..=9);
    listed(rng, count)
}

/// A list of `count` words, in reverse order (exact output).
fn listed(rng: &mut Rng, count: usize) -> Item {
    let list = words::distinct(rng, count);
    let reversed: Vec<&str> = list.iter().rev().copied().collect();
    let expected = reversed.join(", ");
    // The first two swapped back: the near miss.
    let mut slipped = reversed.clone();
    slipped.swap(0, 1);
    Item {
        question: format!(
            "Reverse the order of this list: {}. Reply with the reversed list only, separated by commas.",
            list.join(", ")
        ),
        reference: expected.clone(),
        wrong: slipped.join(", "),
        score: ScorerSpec::Output { expected },
    }
}

/// One word, backwards (exact answer).
fn letters(rng: &mut Rng) -> Item {
    let word = words::any(rng);
    backwards(rng, word)
}

/// `word` backwards (exact answer).
fn backwards(rng: &mut Rng, word: &str) -> Item {
    let reversed: String = word.chars().rev().collect();
    // Two neighbouring letters that differ, swapped: the near miss.
    let chars: Vec<char> = reversed.chars().collect();
    let slips: Vec<usize> = (1..chars.len())
        .map(|i| i - 1)
        .filter(|&i| chars[i] != chars[i + 1])
        .collect();
    let wrong: String = if slips.is_empty() {
        format!("{reversed}s")
    } else {
        let mut wrong = chars.clone();
        let at = *super::pick(rng, &slips);
        wrong.swap(at, at + 1);
        wrong.into_iter().collect()
    };
    Item {
        question: format!(
            "Write the word '{word}' backwards, letter by letter. Reply with the reversed word only."
        ),
        reference: reversed.clone(),
        wrong,
        score: exact(&reversed, vec![word.to_string()]),
    }
}
