//! Letter counts in real words: "How many times does the letter 'r' appear in the word
//! 'strawberry'?", in one to three words. The count is drawn first, evenly over 0 to
//! [`MOST`], and the text and letter are found for it, so no count is the usual answer.

use fastrand::Rng;

use super::levels::by_level;
use super::{numeric, words, Item};

/// The largest count asked for.
const MOST: usize = 6;
/// Texts drawn for one count before settling for what the last one holds (never reached with
/// the built-in word list).
const TRIES: usize = 10_000;

pub(super) fn make(rng: &mut Rng) -> Item {
    let target = rng.usize(..=MOST);
    let (text, letter) = text_holding(rng, target);
    ask(&text, letter)
}

/// At `level`: a three-letter word (level 1), one word (2, 3), words of about 14 and 20 letters
/// (4, 5), then strings of 30, 45 and 60 random letters; counts up to 1 at level 1, 10 at the top.
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let most = by_level(level, [1, 2, 3, 4, 5, 6, 8, 10]);
    let length = by_level(level, [3, 6, 10, 14, 20, 30, 45, 60]);
    let target = rng.usize(..=most);
    let mut text = String::new();
    for _ in 0..TRIES {
        text = match level {
            ..=1 => words::short(rng).to_string(),
            2 | 3 => words::of_length(rng, length - 1, length + 2).to_string(),
            4 | 5 => words_of(rng, length),
            _ => {
                // An alphabet small enough that the larger counts occur.
                let size = (2 * length / most).clamp(3, 26);
                let mut alphabet: Vec<char> = ('a'..='z').collect();
                rng.shuffle(&mut alphabet);
                alphabet.truncate(size);
                (0..length).map(|_| *super::pick(rng, &alphabet)).collect()
            }
        };
        let letters: Vec<char> = ('a'..='z')
            .filter(|&c| text.chars().filter(|&t| t == c).count() == target)
            .collect();
        if !letters.is_empty() {
            return ask(&text, *super::pick(rng, &letters));
        }
    }
    let first = text.chars().next().unwrap_or('a');
    ask(&text, first)
}

/// Words, separated by spaces, until they hold at least `letters` letters.
fn words_of(rng: &mut Rng, letters: usize) -> String {
    let mut text: Vec<&str> = Vec::new();
    while text.iter().map(|w| w.len()).sum::<usize>() < letters {
        text.push(words::any(rng));
    }
    text.join(" ")
}

/// A text of one to three words (more for larger counts) and a letter it holds `target` times:
/// a letter it lacks when `target` is 0.
fn text_holding(rng: &mut Rng, target: usize) -> (String, char) {
    let mut text = String::new();
    for _ in 0..TRIES {
        let count = (1 + target / 3 + rng.usize(..2)).min(3);
        text = words::distinct(rng, count).join(" ");
        let letters: Vec<char> = ('a'..='z')
            .filter(|&c| text.chars().filter(|&t| t == c).count() == target)
            .collect();
        if !letters.is_empty() {
            return (text, *super::pick(rng, &letters));
        }
    }
    let first = text.chars().next().unwrap_or('a');
    (text, first)
}

/// The question about `letter` in `text`, with a reference that spells the text out and counts
/// the letter's positions.
pub(super) fn ask(text: &str, letter: char) -> Item {
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
    let found = if n == 0 {
        format!("the letter {letter} does not occur")
    } else {
        format!(
            "the letter {letter} is at positions {} (not counting spaces)",
            positions.join(", ")
        )
    };
    Item {
        question: format!(
            "How many times does the letter '{letter}' appear in the {what} '{text}'? Answer with the number."
        ),
        reference: format!("{spelled}: {found}, so it appears {n} times. The answer is {n}."),
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
