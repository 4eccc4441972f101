//! Letter counts in real words: "How many times does the letter 'r' appear in the word
//! 'strawberry'?", sometimes in two words at once.

use fastrand::Rng;

use super::{numeric, words, Item};

pub(super) fn make(rng: &mut Rng) -> Item {
    let text = if rng.bool() {
        words::distinct(rng, 2).join(" ")
    } else {
        words::any(rng).to_string()
    };
    // A letter the text holds, drawn by occurrence so repeated letters come up more often.
    let letters: Vec<char> = text.chars().filter(|c| c.is_ascii_alphabetic()).collect();
    let letter = *super::pick(rng, &letters);
    let positions: Vec<String> = text
        .chars()
        .filter(|c| *c != ' ')
        .enumerate()
        .filter(|(_, c)| *c == letter)
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    let n = positions.len();
    let what = if text.contains(' ') { "text" } else { "word" };
    let spelled: String = text
        .split(' ')
        .map(|w| w.chars().map(String::from).collect::<Vec<_>>().join("-"))
        .collect::<Vec<_>>()
        .join(" ");
    Item {
        question: format!(
            "How many times does the letter '{letter}' appear in the {what} '{text}'? Answer with the number."
        ),
        reference: format!(
            "{spelled}: the letter {letter} is at positions {} (not counting spaces), so it appears {n} times. The answer is {n}.",
            positions.join(", ")
        ),
        wrong: format!("The letter {letter} appears {} times.", off_by_one(n)),
        score: numeric(n),
    }
}

/// The usual miscount: one more, or one fewer when that is still a count.
pub(super) fn off_by_one(n: usize) -> usize {
    if n > 1 {
        n - 1
    } else {
        n + 1
    }
}
