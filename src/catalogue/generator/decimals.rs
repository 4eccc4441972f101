//! Comparing decimals of different lengths, and the difference between them. Half the pairs
//! have the shorter number larger (9.9 against 9.11), half the longer (9.1 against 9.15), so
//! neither "the shorter is larger" nor "the longer is larger" wins.

use fastrand::Rng;

use super::units::fixed;
use super::{numeric, Item};

pub(super) fn make(rng: &mut Rng) -> Item {
    let (larger, smaller) = if rng.bool() {
        shorter_larger(rng)
    } else {
        longer_larger(rng)
    };
    ask(rng, larger, smaller)
}

/// a.b against a.cd with b > c, in hundredths, the larger first: the shorter one is larger.
pub(super) fn shorter_larger(rng: &mut Rng) -> (i64, i64) {
    let whole = rng.i64(0..100);
    let short_tenths = rng.i64(2..10);
    let long_hundredths = rng.i64(10..short_tenths * 10);
    let long_hundredths = if long_hundredths % 10 == 0 {
        long_hundredths + 1
    } else {
        long_hundredths
    };
    (
        whole * 100 + short_tenths * 10,
        whole * 100 + long_hundredths,
    )
}

/// a.b against a.cd with cd above b0, in hundredths, the larger first: the longer one is larger.
fn longer_larger(rng: &mut Rng) -> (i64, i64) {
    let whole = rng.i64(0..100);
    let short_tenths = rng.i64(1..10);
    let long_hundredths = rng.i64(short_tenths * 10 + 1..100);
    let long_hundredths = if long_hundredths % 10 == 0 {
        long_hundredths - 1
    } else {
        long_hundredths
    };
    (
        whole * 100 + long_hundredths,
        whole * 100 + short_tenths * 10,
    )
}

/// "Which is larger?" (the two in either order) or "larger minus smaller?", in hundredths.
pub(super) fn ask(rng: &mut Rng, larger: i64, smaller: i64) -> Item {
    let (a, b) = if rng.bool() {
        (larger, smaller)
    } else {
        (smaller, larger)
    };
    if rng.bool() {
        let answer = fixed(larger, 2);
        Item {
            question: format!(
                "Which number is larger, {} or {}? Answer with the number.",
                fixed(a, 2),
                fixed(b, 2)
            ),
            reference: format!("The answer is {answer}."),
            wrong: format!("The answer is {}.", fixed(smaller, 2)),
            score: numeric(&answer),
        }
    } else {
        let answer = fixed(larger - smaller, 2);
        Item {
            question: format!(
                "What is {} minus {}? Answer with the number.",
                fixed(larger, 2),
                fixed(smaller, 2)
            ),
            reference: format!(
                "{} − {} = {answer}. The answer is {answer}.",
                fixed(larger, 2),
                fixed(smaller, 2)
            ),
            wrong: format!("The answer is {}.", fixed(larger - smaller + 10, 2)),
            score: numeric(&answer),
        }
    }
}
