//! Multi-digit arithmetic: products, sums and differences of long numbers, and expressions
//! where multiplication binds before addition.

use fastrand::Rng;

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
    // A slip in one digit: the hundreds (or tens) place off by one.
    let slip = if value.abs() >= 1_000 { 100 } else { 10 };
    Item {
        question: format!("What is {expression}? Answer with the number."),
        reference: format!("{expression} = {value}. The answer is {value}."),
        wrong: format!("The answer is {}.", value + slip),
        score: numeric(value),
    }
}
