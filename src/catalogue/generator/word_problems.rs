//! Arithmetic word problems from templates: two or three steps over small whole numbers.

use fastrand::Rng;

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
    let wrong = if wrong == answer { answer + 1 } else { wrong };
    Item {
        question: format!("{question} Answer with the number."),
        reference: format!("{steps}. The answer is {answer}."),
        wrong: format!("The answer is {wrong}."),
        score: numeric(answer),
    }
}
