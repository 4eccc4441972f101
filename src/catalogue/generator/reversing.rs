//! Reversing: a real word written backwards, letter by letter, or a list of words in reverse
//! order.

use fastrand::Rng;

use super::{exact, words, Item};
use crate::score::ScorerSpec;

pub(super) fn make(rng: &mut Rng) -> Item {
    if rng.bool() {
        word_order(rng)
    } else {
        letters(rng)
    }
}

/// A list of words, in reverse order (exact output).
fn word_order(rng: &mut Rng) -> Item {
    let count = rng.usize(5..=9);
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
