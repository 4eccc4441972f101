//! Arithmetic word problems from templates: two or three steps over small whole numbers.

use fastrand::Rng;

use super::levels::by_level;
use super::{numeric, pick, Item};

const NAMES: &[&str] = &[
    "Amara", "Bruno", "Chen", "Dalia", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jana", "Kofi",
    "Lena", "Mateo", "Nadia", "Omar", "Priya",
];

pub(super) fn make(rng: &mut Rng) -> Item {
    let name = *pick(rng, NAMES);
    let (question, steps, answer, wrong) = match rng.u8(..4) {
        0 => {
            let boxes = rng.i64(3..40);
            let per = rng.i64(6..25);
            let sold = rng.i64(1..boxes * per);
            let total = boxes * per;
            (
                format!("{name} has {boxes} boxes with {per} pencils in each box and sells {sold} pencils. How many pencils does {name} have left?"),
                format!("{boxes} × {per} = {total} pencils; {total} − {sold} = {}", total - sold),
                total - sold,
                total,
            )
        }
        1 => {
            let price = rng.i64(3..60);
            let count = rng.i64(2..30);
            let paid = (price * count / 100 + 1) * 100 + rng.i64(0..4) * 50;
            let cost = price * count;
            (
                format!("{name} buys {count} tickets at ${price} each and pays with ${paid}. How many dollars of change does {name} get?"),
                format!("{count} × {price} = {cost} dollars; {paid} − {cost} = {}", paid - cost),
                paid - cost,
                cost,
            )
        }
        2 => {
            let per_day = rng.i64(3..30);
            let days = rng.i64(2..15);
            let eaten = per_day * days;
            let start = eaten + rng.i64(0..150);
            let added = rng.i64(5..100);
            (
                format!("A store has {start} kilograms of rice. It receives {added} kilograms more, then sells {per_day} kilograms a day for {days} days. How many kilograms are left?"),
                format!("{start} + {added} = {}; {per_day} × {days} = {eaten}; {} − {eaten} = {}", start + added, start + added, start + added - eaten),
                start + added - eaten,
                start - eaten,
            )
        }
        _ => {
            let rows = rng.i64(4..30);
            let seats = rng.i64(5..40);
            let empty = rng.i64(1..rows * seats);
            let groups = rng.i64(2..6);
            let total = rows * seats * groups;
            (
                format!("A theatre has {rows} rows of {seats} seats and shows {groups} performances. At each performance {empty} seats stay empty. How many tickets are sold in all?"),
                format!("{rows} × {seats} = {} seats; {} − {empty} = {} per performance; × {groups} = {}", rows * seats, rows * seats, rows * seats - empty, total - empty * groups),
                total - empty * groups,
                total - empty,
            )
        }
    };
    asked(&question, &steps, answer, wrong)
}

const GOODS: &[&str] = &["apples", "marbles", "stickers", "coins", "books", "shells"];

/// At `level`: a chain of steps on one count, each receiving, giving away or multiplying it:
/// one step on numbers under 10 (level 1: "3 apples and gets 2 more") up to twenty steps on
/// four-digit numbers (level 8). Counts stay positive.
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let name = *pick(rng, NAMES);
    let goods = *pick(rng, GOODS);
    let steps = by_level(level, [1, 1, 2, 3, 5, 8, 12, 20]);
    let top = by_level(level, [10, 100, 100, 1_000, 1_000, 10_000, 10_000, 10_000]);
    let multiply = level >= 3;
    let mut count = rng.i64(2..top);
    let mut told = vec![format!("{name} has {count} {goods}.")];
    let mut worked = Vec::new();
    let mut before = count;
    for _ in 0..steps {
        before = count;
        let op = if multiply { rng.u8(..3) } else { rng.u8(..2) };
        let (said, next) = match op {
            0 => {
                let n = rng.i64(1..top);
                (format!("Then {name} gets {n} more."), count + n)
            }
            1 if count > 1 => {
                let n = rng.i64(1..count);
                (format!("Then {name} gives away {n}."), count - n)
            }
            _ if count < 100_000 => {
                let k = rng.i64(2..4);
                (
                    format!("Then the number of {goods} is multiplied by {k}."),
                    count * k,
                )
            }
            _ => {
                let n = rng.i64(1..count.max(2));
                (format!("Then {name} gives away {n}."), count - n)
            }
        };
        worked.push(format!("{count} → {next}"));
        told.push(said);
        count = next;
    }
    asked(
        &format!("{} How many {goods} does {name} have now?", told.join(" ")),
        &worked.join("; "),
        count,
        before,
    )
}

/// The question, its worked steps and answer, and a wrong answer (the count before the last
/// step, or one more than the answer when that is the same).
fn asked(question: &str, steps: &str, answer: i64, wrong: i64) -> Item {
    let wrong = if wrong == answer { answer + 1 } else { wrong };
    Item {
        question: format!("{question} Answer with the number."),
        reference: format!("{steps}. The answer is {answer}."),
        wrong: format!("The answer is {wrong}."),
        score: numeric(answer),
    }
}
