//! Unit conversion with exact factors (metres, grams, hours, inches, pounds…), the value written
//! with up to two decimals so the answer is an exact decimal.

use fastrand::Rng;

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

/// `n / 10^decimals` written exactly, without trailing zeros.
pub(super) fn fixed(n: i64, decimals: u32) -> String {
    let scale = 10i64.pow(decimals);
    let sign = if n < 0 { "-" } else { "" };
    let (whole, frac) = (n.abs() / scale, n.abs() % scale);
    if frac == 0 {
        return format!("{sign}{whole}");
    }
    let digits = format!("{frac:0width$}", width = decimals as usize);
    format!("{sign}{whole}.{}", digits.trim_end_matches('0'))
}

fn singular(unit: &str) -> &str {
    match unit {
        "feet" => "foot",
        "inches" => "inch",
        _ => unit.strip_suffix('s').unwrap_or(unit),
    }
}
