//! JSON extraction: a generated order record (nested JSON), and a JSON answer that pulls out
//! and totals some of its fields.

use std::collections::BTreeMap;

use fastrand::Rng;
use serde_json::{json, Value};

use super::levels::by_level;
use super::{pick, words, Item};
use crate::score::{JsonType, ScorerSpec};

const PEOPLE: &[&str] = &[
    "Amara Okafor",
    "Bruno Silva",
    "Chen Wei",
    "Dalia Haddad",
    "Emil Novak",
    "Farah Khan",
    "Goran Petrov",
    "Hana Sato",
    "Ivo Marek",
    "Jana Horvat",
    "Kofi Mensah",
    "Lena Fischer",
];
const CITIES: &[&str] = &[
    "Lisbon", "Porto", "Lyon", "Ghent", "Turin", "Krakow", "Tartu", "Malmo", "Bergen", "Cork",
];

pub(super) fn make(rng: &mut Rng) -> Item {
    ordered(rng, |rng| rng.usize(3..=6), (1, 10), (2, 90))
}

/// At `level`: one line of one to three items at a one-digit price (level 1) up to 40 lines of
/// up to 99 items at up to 999 (level 8).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let count = by_level(level, [1, 2, 3, 5, 8, 14, 24, 40]);
    let qty = by_level(
        level,
        [
            (1, 4),
            (1, 6),
            (1, 10),
            (1, 10),
            (1, 20),
            (1, 50),
            (1, 100),
            (1, 100),
        ],
    );
    let price = by_level(
        level,
        [
            (2, 10),
            (2, 20),
            (2, 50),
            (2, 90),
            (2, 200),
            (2, 500),
            (2, 1_000),
            (2, 1_000),
        ],
    );
    ordered(rng, |_| count, qty, price)
}

/// An order of `count(rng)` lines, quantities and prices drawn from `qty` and `price`.
fn ordered(
    rng: &mut Rng,
    count: impl Fn(&mut Rng) -> usize,
    qty: (i64, i64),
    price: (i64, i64),
) -> Item {
    let customer = *pick(rng, PEOPLE);
    let city = *pick(rng, CITIES);
    let count = count(rng);
    let products = words::distinct(rng, count);
    let lines: Vec<(String, i64, i64)> = products
        .iter()
        .map(|p| {
            (
                p.to_string(),
                rng.i64(qty.0..qty.1),
                rng.i64(price.0..price.1),
            )
        })
        .collect();
    let record = json!({
        "order_id": rng.u32(10_000..100_000),
        "customer": { "name": customer, "address": { "city": city, "postcode": format!("{:05}", rng.u32(1_000..99_999)) } },
        "lines": lines.iter().map(|(sku, qty, price)| json!({ "sku": sku, "qty": qty, "unit_price": price })).collect::<Vec<_>>(),
        "status": if rng.bool() { "shipped" } else { "pending" },
    });
    let total_qty: i64 = lines.iter().map(|(_, q, _)| q).sum();
    let total_price: i64 = lines.iter().map(|(_, q, p)| q * p).sum();
    let answer = json!({ "city": city, "items": total_qty, "total": total_price });
    // Counting lines instead of adding their quantities (or, when every qty is 1, one too many).
    let lines_counted = lines.len() as i64;
    let wrong_items = if lines_counted == total_qty {
        total_qty + 1
    } else {
        lines_counted
    };
    let wrong = json!({ "city": city, "items": wrong_items, "total": total_price });
    let required = BTreeMap::from([
        ("city".to_string(), JsonType::String),
        ("items".to_string(), JsonType::Integer),
        ("total".to_string(), JsonType::Integer),
    ]);
    let values: BTreeMap<String, Value> = answer
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    Item {
        question: format!(
            "Here is an order record:\n\n{}\n\nReturn a JSON object with three keys: \"city\" (the customer's city), \"items\" (the total quantity over all lines) and \"total\" (the sum of qty × unit_price over all lines). Reply with the JSON only.",
            serde_json::to_string_pretty(&record).unwrap_or_default()
        ),
        reference: answer.to_string(),
        wrong: wrong.to_string(),
        score: ScorerSpec::Json { required, values },
    }
}
