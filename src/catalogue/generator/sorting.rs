//! Sorting: a list of numbers (some negative) in ascending order, or of real words (many
//! sharing their first letters) in alphabetical order. Scored as exact output.

use fastrand::Rng;

use super::levels::by_level;
use super::{words, Item};
use crate::score::ScorerSpec;

pub(super) fn make(rng: &mut Rng) -> Item {
    let n = rng.usize(6..=10);
    sorted(rng, n, (-99, 1_000))
}

/// At `level`: two numbers under ten or two words (level 1) up to 40 numbers of six digits or 40
/// words (level 8).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let n = by_level(level, [2, 3, 5, 7, 10, 15, 24, 40]);
    let range = by_level(
        level,
        [
            (1, 10),
            (1, 100),
            (-99, 1_000),
            (-99, 1_000),
            (-999, 10_000),
            (-9_999, 100_000),
            (-99_999, 1_000_000),
            (-999_999, 1_000_000),
        ],
    );
    sorted(rng, n, range)
}

/// `n` distinct numbers in `range` (or `n` words), and the question to sort them.
fn sorted(rng: &mut Rng, n: usize, range: (i64, i64)) -> Item {
    let (what, order, items, sorted) = if rng.bool() {
        let mut numbers: Vec<i64> = Vec::with_capacity(n);
        while numbers.len() < n {
            let x = rng.i64(range.0..range.1);
            if !numbers.contains(&x) {
                numbers.push(x);
            }
        }
        let mut sorted = numbers.clone();
        sorted.sort_unstable();
        let show = |xs: &[i64]| xs.iter().map(i64::to_string).collect::<Vec<_>>();
        ("numbers", "ascending order", show(&numbers), show(&sorted))
    } else {
        let words: Vec<String> = words::distinct(rng, n)
            .into_iter()
            .map(String::from)
            .collect();
        let mut sorted = words.clone();
        sorted.sort_unstable();
        ("words", "alphabetical order", words, sorted)
    };
    let expected = sorted.join(", ");
    // Two neighbours out of order.
    let mut slipped = sorted.clone();
    let at = rng.usize(..slipped.len() - 1);
    slipped.swap(at, at + 1);
    Item {
        question: format!(
            "Sort these {what} in {order}: {}. Reply with the sorted list only, separated by commas.",
            items.join(", ")
        ),
        reference: expected.clone(),
        wrong: slipped.join(", "),
        score: ScorerSpec::Output { expected },
    }
}
