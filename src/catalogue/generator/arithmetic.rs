//! Multi-digit arithmetic: products, sums and differences of long numbers, and expressions
//! where multiplication binds before addition.

use fastrand::Rng;

use super::levels::by_level;
use super::{numeric, Item};

pub(super) fn make(rng: &mut Rng) -> Item {
    let (expression, value) = match rng.u8(..3) {
        0 => {
            let a = rng.i64(100..10_000);
            let b = rng.i64(12..1_000);
            (format!("{a} × {b}"), a * b)
        }
        1 => {
            let a = rng.i64(10_000..1_000_000);
            let b = rng.i64(10_000..1_000_000);
            let c = rng.i64(1_000..1_000_000);
            (format!("{a} + {b} − {c}"), a + b - c)
        }
        _ => {
            let a = rng.i64(100..5_000);
            let b = rng.i64(12..100);
            let c = rng.i64(12..100);
            let d = rng.i64(100..5_000);
            (format!("{a} + {b} × {c} − {d}"), a + b * c - d)
        }
    };
    asked(&expression, value)
}

/// At `level`: one-digit sums (level 1), two-digit sums and differences, a two-digit by one-digit
/// product, three- by two-digit products, version 2's mix (level 5), six-digit sums of four
/// terms, six- by six-digit products (twelve digits), and eight- by seven-digit products (level 8;
/// fifteen digits, within what a double holds exactly, so the numeric scorer reads it exactly).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let digits = |rng: &mut Rng, n: u32| rng.i64(10i64.pow(n - 1)..10i64.pow(n));
    let (expression, value) = match level {
        ..=1 => {
            let (a, b) = (rng.i64(1..10), rng.i64(1..10));
            (format!("{a} + {b}"), a + b)
        }
        2 => {
            let (a, b) = (digits(rng, 2), digits(rng, 2));
            if rng.bool() {
                (format!("{a} + {b}"), a + b)
            } else {
                (format!("{} − {}", a.max(b), a.min(b)), a.max(b) - a.min(b))
            }
        }
        5 => return make(rng),
        6 => {
            let terms: Vec<i64> = (0..4).map(|_| digits(rng, 6)).collect();
            (
                format!("{} + {} − {} + {}", terms[0], terms[1], terms[2], terms[3]),
                terms[0] + terms[1] - terms[2] + terms[3],
            )
        }
        _ => {
            let (x, y) = by_level(
                level,
                [
                    (1, 1),
                    (1, 1),
                    (2, 1),
                    (3, 2),
                    (1, 1),
                    (1, 1),
                    (6, 6),
                    (8, 7),
                ],
            );
            let (a, b) = (digits(rng, x), digits(rng, y));
            (format!("{a} × {b}"), a * b)
        }
    };
    asked(&expression, value)
}

/// The question for `expression`, whose value is `value`.
fn asked(expression: &str, value: i64) -> Item {
    // A slip in one digit: the hundreds (or tens) place off by one.
    let slip = if value.abs() >= 1_000 { 100 } else { 10 };
    Item {
        question: format!("What is {expression}? Answer with the number."),
        reference: format!("{expression} = {value}. The answer is {value}."),
        wrong: format!("The answer is {}.", value + slip),
        score: numeric(value),
    }
}
