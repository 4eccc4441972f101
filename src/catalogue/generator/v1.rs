//! The version-1 forms of the families version 2 changed, kept only so that runs made by
//! generator version 1 re-score against the very items they were sent. Never used for a new run:
//! their expected answers were mostly one value (a count of 1, the shorter decimal).

use fastrand::Rng;

use super::{decimals, letters, substrings, words, Item};

/// The version-1 maker of family `name`, where version 2 changed it.
pub(super) fn maker(name: &str) -> Option<fn(&mut Rng) -> Item> {
    match name {
        "letters" => Some(letters_v1),
        "substrings" => Some(substrings_v1),
        "decimals" => Some(decimals_v1),
        _ => None,
    }
}

/// A word or two and a letter drawn by occurrence (so mostly a count of 1).
fn letters_v1(rng: &mut Rng) -> Item {
    let text = if rng.bool() {
        words::distinct(rng, 2).join(" ")
    } else {
        words::any(rng).to_string()
    };
    let letters: Vec<char> = text.chars().filter(|c| c.is_ascii_alphabetic()).collect();
    let letter = *super::pick(rng, &letters);
    letters::ask(&text, letter)
}

/// Two words run together and a piece of them as the needle (so mostly a count of 1).
fn substrings_v1(rng: &mut Rng) -> Item {
    let text = words::distinct(rng, 2).concat();
    let len = if rng.bool() { 2 } else { 3 };
    let chars: Vec<char> = text.chars().collect();
    let start = rng.usize(..=chars.len() - len);
    let needle: String = chars[start..start + len].iter().collect();
    substrings::ask(&text, &needle)
}

/// Always the shorter decimal larger.
fn decimals_v1(rng: &mut Rng) -> Item {
    let (larger, smaller) = decimals::shorter_larger(rng);
    decimals::ask(rng, larger, smaller)
}
