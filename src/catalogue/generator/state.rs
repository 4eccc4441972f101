//! State tracking: items in numbered boxes, a sequence of swaps and moves, then "what is in
//! box k?".

use fastrand::Rng;

use super::levels::by_level;
use super::{one_of, Item};

const THINGS: &[&str] = &[
    "key", "coin", "ring", "apple", "pencil", "marble", "stamp", "button", "shell", "feather",
    "candle", "spoon", "ribbon", "whistle", "compass", "thimble",
];

pub(super) fn make(rng: &mut Rng) -> Item {
    let boxes = rng.usize(4..=6);
    swapped(rng, boxes, |rng| rng.usize(4..=8))
}

/// At `level`: two boxes and one swap (level 1) up to twelve boxes and forty swaps (level 8).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let boxes = by_level(level, [2, 3, 3, 4, 5, 7, 10, 12]);
    let steps = by_level(level, [1, 1, 2, 4, 7, 12, 24, 40]);
    swapped(rng, boxes, |_| steps)
}

/// `boxes` boxes, `steps(rng)` swaps, and which item is in one box at the end.
fn swapped(rng: &mut Rng, boxes: usize, steps: impl Fn(&mut Rng) -> usize) -> Item {
    let mut things: Vec<&str> = THINGS.to_vec();
    rng.shuffle(&mut things);
    let mut state: Vec<&str> = things[..boxes].to_vec();
    let setup: Vec<String> = state
        .iter()
        .enumerate()
        .map(|(i, t)| format!("box {} holds the {t}", i + 1))
        .collect();
    let steps = steps(rng);
    let mut said = Vec::with_capacity(steps);
    let mut before_last = state.clone();
    for step in 0..steps {
        if step + 1 == steps {
            before_last = state.clone();
        }
        let a = rng.usize(..boxes);
        let b = (a + rng.usize(1..boxes)) % boxes;
        state.swap(a, b);
        said.push(format!(
            "swap the contents of box {} and box {}",
            a + 1,
            b + 1
        ));
    }
    let asked = rng.usize(..boxes);
    let answer = state[asked];
    // The answer of someone who missed the last swap, or else a neighbouring box's content.
    let wrong = if before_last[asked] != answer {
        before_last[asked]
    } else {
        state[(asked + 1) % boxes]
    };
    Item {
        question: format!(
            "There are {boxes} boxes: {}. Then, in order: {}. Which item is in box {} now? Answer with the item only.",
            setup.join(", "),
            said.join("; then "),
            asked + 1
        ),
        reference: format!("Box {} holds the {answer}.", asked + 1),
        wrong: format!("Box {} holds the {wrong}.", asked + 1),
        score: one_of(
            answer,
            state
                .iter()
                .filter(|t| **t != answer)
                .map(|t| t.to_string())
                .collect(),
        ),
    }
}
