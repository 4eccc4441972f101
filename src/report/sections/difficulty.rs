//! The difficulty section: each generated family's level, how it was chosen (calibrated on the
//! reference, or fixed by `--difficulty`), its status (measured, at the floor and left out of
//! the behaviour verdict, at the ceiling), the calibration requests and the budget.

use crate::analysis::Results;
use crate::catalogue::generator::LevelStatus;
use crate::doc::{para, text, Block, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    if results.difficulty.is_empty() {
        return Vec::new();
    }
    let calibrated = results
        .difficulty
        .iter()
        .any(|f| f.status != LevelStatus::Fixed);
    let floor = results
        .difficulty
        .iter()
        .filter(|f| f.status == LevelStatus::Floor)
        .count();
    let mut body = vec![para(vec![text(if calibrated {
        format!(
            "Levels 1 (a three-letter word, a one-digit sum) to 8 (beyond a frontier model), chosen per family on the reference alone before the measured items (--difficulty auto): a Bayesian adaptive search (QUEST-like, a logistic accuracy curve over the levels) for the level nearest the target accuracy, on calibration items drawn apart from the measured ones, never sent to the other endpoints and never counted in a verdict. {floor} of {} families at the floor (the reference no better than a constant answer at level 1) are left out of the behaviour verdict.",
            results.difficulty.len()
        )
    } else {
        "Levels 1 (a three-letter word, a one-digit sum) to 8 (beyond a frontier model), fixed (--difficulty, or level 4 where the run does not calibrate): no calibration.".to_string()
    })])];
    let mut table = Table::new(&[
        "family",
        "level",
        "status",
        "calibration requests",
        "right",
        "right at the level",
        "constant at level 1",
        "max_tokens",
    ])
    .right(&[1, 3, 4, 6, 7]);
    for f in &results.difficulty {
        let (n, right) = f.at_level;
        table.text_row(&[
            f.family.clone(),
            f.level.to_string(),
            f.status.as_str().to_string(),
            f.requests.to_string(),
            f.right.to_string(),
            if n > 0 {
                format!("{right} of {n}")
            } else {
                "–".to_string()
            },
            if calibrated {
                format!("{:.0}%", f.constant_share * 100.0)
            } else {
                "–".to_string()
            },
            f.max_tokens.to_string(),
        ]);
    }
    body.push(table.into());
    vec![Part::section("difficulty", vec![text("Difficulty")], body).into()]
}
