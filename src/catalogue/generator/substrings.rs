//! Substring counts: how many times a two- or three-letter string occurs in a string over two or
//! three letters ("aba" in "abababbaab"), overlapping occurrences included. The count is drawn
//! first, evenly over 0 to [`MOST`], and the string is found for it; half the needles overlap
//! themselves ("aa", "aba"), so counting only separate matches often falls short.

use fastrand::Rng;

use super::letters::off_by_one;
use super::levels::by_level;
use super::{numeric, Item};

/// The largest count asked for.
const MOST: usize = 6;
/// Strings drawn for one count before settling for the last one (never reached in practice).
const TRIES: usize = 10_000;

pub(super) fn make(rng: &mut Rng) -> Item {
    let target = rng.usize(..=MOST);
    counted(rng, target, 8, true)
}

/// At `level`: a two-letter needle in a string of about 5 letters counted up to once (level 1),
/// up to a string of about 70 letters holding it up to 12 times (level 8); self-overlapping
/// needles from level 3.
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let most = by_level(level, [1, 2, 3, 4, 6, 8, 10, 12]);
    let base = by_level(level, [4, 6, 8, 10, 14, 20, 30, 45]);
    let target = rng.usize(..=most);
    counted(rng, target, base, level >= 3)
}

/// A needle over two or three letters and a string of `base` to `base + 2` letters (plus two a
/// count) holding it `target` times; half the needles overlap themselves when `overlapping`.
fn counted(rng: &mut Rng, target: usize, base: usize, overlapping: bool) -> Item {
    let mut alphabet: Vec<char> = ('a'..='z').collect();
    rng.shuffle(&mut alphabet);
    alphabet.truncate(rng.usize(2..=3));
    let needle = if overlapping && rng.bool() {
        self_overlapping(rng, &alphabet)
    } else {
        let len = if overlapping { rng.usize(2..=3) } else { 2 };
        let mut needle = drawn(rng, &alphabet, len);
        if !overlapping && needle.chars().all(|c| needle.starts_with(c)) {
            needle = [alphabet[0], alphabet[1]].iter().collect();
        }
        needle
    };
    let mut text = String::new();
    for _ in 0..TRIES {
        let len = rng.usize(base..=base + 2) + 2 * target;
        text = drawn(rng, &alphabet, len);
        if starts(&text, &needle).len() == target {
            break;
        }
    }
    ask(&text, &needle)
}

/// `len` letters of `alphabet`, drawn one by one.
fn drawn(rng: &mut Rng, alphabet: &[char], len: usize) -> String {
    (0..len).map(|_| *super::pick(rng, alphabet)).collect()
}

/// A needle that overlaps itself: one letter twice or three times, or "aba".
fn self_overlapping(rng: &mut Rng, alphabet: &[char]) -> String {
    let (a, b) = (alphabet[0], alphabet[1]);
    match rng.u8(..3) {
        0 => [a, a].iter().collect(),
        1 => [a, a, a].iter().collect(),
        _ => [a, b, a].iter().collect(),
    }
}

/// Where `needle` starts in `text`, counting from 1, overlapping occurrences included.
fn starts(text: &str, needle: &str) -> Vec<usize> {
    let chars: Vec<char> = text.chars().collect();
    let len = needle.chars().count();
    (0..(chars.len() + 1).saturating_sub(len))
        .filter(|&i| chars[i..i + len].iter().copied().eq(needle.chars()))
        .map(|i| i + 1)
        .collect()
}

/// The question about `needle` in `text`, with a reference that lists where it starts.
pub(super) fn ask(text: &str, needle: &str) -> Item {
    let positions: Vec<String> = starts(text, needle).iter().map(usize::to_string).collect();
    let n = positions.len();
    let found = if n == 0 {
        "It starts nowhere".to_string()
    } else {
        format!("It starts at positions {}", positions.join(", "))
    };
    Item {
        question: format!(
            "How many times does the string '{needle}' occur in '{text}'? Count overlapping occurrences. Answer with the number."
        ),
        // The string itself stays out of the answers: it can be a number word ("one", "ten").
        reference: format!("{found}, so it occurs {n} times. The answer is {n}."),
        wrong: format!("It occurs {} times.", off_by_one(n)),
        score: numeric(n),
    }
}
