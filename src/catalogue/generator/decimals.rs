//! Comparing decimals where the longer number is not the larger (9.11 against 9.9), and the
//! difference between them.

use fastrand::Rng;

use super::units::fixed;
use super::{numeric, Item};

pub(super) fn make(rng: &mut Rng) -> Item {
    // a.b against a.cd with b > c (so the shorter one is larger), in hundredths.
    let whole = rng.i64(0..100);
    let short_tenths = rng.i64(2..10);
    let long_hundredths = rng.i64(10..short_tenths * 10);
    let long_hundredths = if long_hundredths % 10 == 0 {
        long_hundredths + 1
    } else {
        long_hundredths
    };
    let larger = whole * 100 + short_tenths * 10;
    let smaller = whole * 100 + long_hundredths;
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
