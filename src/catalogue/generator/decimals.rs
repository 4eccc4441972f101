//! Comparing decimals of different lengths, and the difference between them. Half the pairs
//! have the shorter number larger (9.9 against 9.11), half the longer (9.1 against 9.15), so
//! neither "the shorter is larger" nor "the longer is larger" wins.

use fastrand::Rng;

use super::levels::by_level;
use super::units::{fixed, fixed_wide};
use super::{numeric, Item};

pub(super) fn make(rng: &mut Rng) -> Item {
    let (larger, smaller) = if rng.bool() {
        shorter_larger(rng)
    } else {
        longer_larger(rng)
    };
    ask(rng, larger, smaller)
}

/// At `level`: which of two one-decimal numbers is larger (level 1: 3.4 or 3.7; level 2 with
/// different whole parts), the shorter-or-longer trap (level 3), version 2's mix (level 4), then
/// differences of numbers with three, four, six and eight decimals and ever longer whole parts.
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    match level {
        ..=2 => {
            let whole = rng.i64(0..10);
            let other = if level <= 1 { whole } else { rng.i64(0..10) };
            let a = whole * 10 + rng.i64(0..10);
            let mut b = other * 10 + rng.i64(0..10);
            if a == b {
                b = if b > 0 { b - 1 } else { b + 1 };
            }
            let (larger, smaller) = (a.max(b), a.min(b));
            let (x, y) = if rng.bool() { (a, b) } else { (b, a) };
            compared((x, y), larger, smaller, 1)
        }
        3 => {
            let (larger, smaller) = if rng.bool() {
                shorter_larger(rng)
            } else {
                longer_larger(rng)
            };
            let shown = if rng.bool() {
                (larger, smaller)
            } else {
                (smaller, larger)
            };
            compared(shown, larger, smaller, 2)
        }
        4 => make(rng),
        _ => {
            let (decimals, whole) = by_level(
                level,
                [
                    (0, 0),
                    (0, 0),
                    (0, 0),
                    (0, 0),
                    (3, 2),
                    (4, 3),
                    (6, 5),
                    (8, 7),
                ],
            );
            let unit = 10i128.pow(decimals);
            let top = 10i128.pow(whole) * unit;
            let draw =
                |rng: &mut Rng| i128::from(rng.i64(1..i64::try_from(top).unwrap_or(i64::MAX)));
            let (a, b) = (draw(rng), draw(rng));
            let (larger, smaller) = (a.max(b), a.min(b) - 1);
            let answer = fixed_wide(larger - smaller, decimals);
            let (l, s) = (fixed_wide(larger, decimals), fixed_wide(smaller, decimals));
            Item {
                question: format!("What is {l} minus {s}? Answer with the number."),
                reference: format!("{l} − {s} = {answer}. The answer is {answer}."),
                wrong: format!(
                    "The answer is {}.",
                    fixed_wide(larger - smaller + unit / 10, decimals)
                ),
                score: numeric(&answer),
            }
        }
    }
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
        compared((a, b), larger, smaller, 2)
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

/// "Which is larger, a or b?" of two numbers in units of 10^-`decimals`, `shown` in that order.
fn compared(shown: (i64, i64), larger: i64, smaller: i64, decimals: u32) -> Item {
    let answer = fixed(larger, decimals);
    Item {
        question: format!(
            "Which number is larger, {} or {}? Answer with the number.",
            fixed(shown.0, decimals),
            fixed(shown.1, decimals)
        ),
        reference: format!("The answer is {answer}."),
        wrong: format!("The answer is {}.", fixed(smaller, decimals)),
        score: numeric(&answer),
    }
}
