//! Unit conversion with exact factors (metres, grams, hours, inches, pounds…), the value written
//! with up to two decimals so the answer is an exact decimal.

use fastrand::Rng;

use super::levels::by_level;
use super::{numeric, pick, Item};

/// (from, to, factor in hundredths): 1 `from` = factor / 100 `to`.
const CONVERSIONS: &[(&str, &str, i64)] = &[
    ("kilometres", "metres", 100_000),
    ("metres", "centimetres", 10_000),
    ("kilograms", "grams", 100_000),
    ("litres", "millilitres", 100_000),
    ("hours", "minutes", 6_000),
    ("minutes", "seconds", 6_000),
    ("days", "hours", 2_400),
    ("weeks", "days", 700),
    ("feet", "inches", 1_200),
    ("yards", "feet", 300),
    ("inches", "centimetres", 254),
    ("pounds", "ounces", 1_600),
    ("miles", "feet", 528_000),
    ("gallons", "quarts", 400),
];

pub(super) fn make(rng: &mut Rng) -> Item {
    let &(from, to, factor) = pick(rng, CONVERSIONS);
    // The value in hundredths: a whole number, or one or two decimals.
    let value = match rng.u8(..3) {
        0 => rng.i64(2..500) * 100,
        1 => rng.i64(11..2_000) * 10,
        _ => rng.i64(101..5_000),
    };
    // value/100 × factor/100, in ten-thousandths.
    let result = value * factor;
    let answer = fixed(result, 4);
    Item {
        question: format!(
            "Convert {} {from} to {to}. Answer with the number.",
            fixed(value, 2)
        ),
        reference: format!(
            "1 {} = {} {to}, so {} {from} = {answer} {to}. The answer is {answer}.",
            singular(from),
            fixed(factor, 2),
            fixed(value, 2)
        ),
        // The factor slipped by ten.
        wrong: format!("The answer is {}.", fixed(result * 10, 4)),
        score: numeric(&answer),
    }
}

/// Chains of conversions, each unit converting to the next (factors in hundredths).
const CHAINS: &[(&[&str], &[i64])] = &[
    (
        &["weeks", "days", "hours", "minutes", "seconds"],
        &[700, 2_400, 6_000, 6_000],
    ),
    (
        &["kilometres", "metres", "centimetres", "millimetres"],
        &[100_000, 10_000, 1_000],
    ),
    (
        &["miles", "feet", "inches", "centimetres", "millimetres"],
        &[528_000, 1_200, 254, 1_000],
    ),
    (&["gallons", "quarts", "pints", "cups"], &[400, 200, 200]),
    (&["kilograms", "grams", "milligrams"], &[100_000, 100_000]),
];

/// At `level`: whole numbers under ten converted one step by a whole factor (level 1: "3 weeks
/// to days"), then larger values, one and two decimals (level 4 as version 2), then two, three
/// and four chained steps with three decimals (level 8: miles to millimetres), answers kept to
/// fifteen significant digits.
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let (steps, decimals, most) = by_level(
        level,
        [
            (1, 0, 10),
            (1, 0, 100),
            (1, 1, 1_000),
            (1, 2, 5_000),
            (2, 1, 10_000),
            (2, 2, 100_000),
            (3, 3, 10_000),
            (4, 3, 10_000),
        ],
    );
    let (units, factors) = loop {
        let &(units, factors) = pick(rng, CHAINS);
        if factors.len() >= steps {
            break (units, factors);
        }
    };
    let start = rng.usize(..=factors.len() - steps);
    // Level 1 keeps to whole factors (none of inches to centimetres).
    let whole = |f: &[i64]| f.iter().all(|x| x % 100 == 0);
    let factors = &factors[start..start + steps];
    if level <= 2 && !whole(factors) {
        return at(rng, level);
    }
    let (from, to) = (units[start], units[start + steps]);
    // The value in units of 10^-decimals: a whole number from level 1, decimals from level 3.
    let unit = 10i64.pow(decimals);
    let value = i128::from(if decimals == 0 {
        rng.i64((most / 10).max(2)..most)
    } else {
        rng.i64(unit..most * unit / 10)
    });
    let product: i128 = factors.iter().map(|&f| i128::from(f)).product();
    let scale = decimals + 2 * steps as u32;
    let answer = fixed_wide(value * product, scale);
    Item {
        question: format!(
            "Convert {} {from} to {to}. Answer with the number.",
            fixed_wide(value, decimals)
        ),
        reference: format!(
            "1 {} = {} {to}, so {} {from} = {answer} {to}. The answer is {answer}.",
            singular(from),
            fixed_wide(product, 2 * steps as u32),
            fixed_wide(value, decimals)
        ),
        wrong: format!("The answer is {}.", fixed_wide(value * product * 10, scale)),
        score: numeric(&answer),
    }
}

/// [`fixed`] for values beyond `i64` (chained factors).
pub(super) fn fixed_wide(n: i128, decimals: u32) -> String {
    let scale = 10i128.pow(decimals);
    let sign = if n < 0 { "-" } else { "" };
    let (whole, frac) = (n.abs() / scale, n.abs() % scale);
    if frac == 0 {
        return format!("{sign}{whole}");
    }
    let digits = format!("{frac:0width$}", width = decimals as usize);
    format!("{sign}{whole}.{}", digits.trim_end_matches('0'))
}

/// `n / 10^decimals` written exactly, without trailing zeros.
pub(super) fn fixed(n: i64, decimals: u32) -> String {
    fixed_wide(i128::from(n), decimals)
}

fn singular(unit: &str) -> &str {
    match unit {
        "feet" => "foot",
        "inches" => "inch",
        _ => unit.strip_suffix('s').unwrap_or(unit),
    }
}
