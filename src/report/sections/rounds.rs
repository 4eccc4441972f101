//! The rounds section of a `compare --until-decided` run: the rule, each look's interval for
//! every pair (the items sent by then, the accuracy difference, the confidence sequences that
//! decide `different` and `equivalent`, the verdict), and when and why the run stopped.

use crate::analysis::Results;
use crate::doc::{para, strong, t, text, Block, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    let Some(rule) = &results.until_decided else {
        return Vec::new();
    };
    let mut body = vec![para(vec![
        strong(vec![text(format!("{}.", capitalised(&rule.stopped_because)))]),
        text(format!(
            " Rounds of {} generated items, at most {} (--round-items, --max-items){}. Looking after every round keeps each verdict's error rate: the confidence sequences hold at any stopping time.",
            rule.round_items,
            rule.max_items,
            match rule.looks {
                0 => String::new(),
                1 => "; 1 look".to_string(),
                n => format!("; {n} looks"),
            }
        )),
    ])];
    for pair in &results.sequential {
        if pair.looks.is_empty() {
            continue;
        }
        body.push(para(t(
            &format!(
                "`$` against `$`, margin ±{} points, α = {}:",
                pair.decision.margin_points, pair.decision.alpha
            ),
            &[&pair.other, &pair.reference],
        )));
        let mut table = Table::new(&[
            "look",
            "generated items",
            "graded",
            "difference (points)",
            "different if outside 0: interval",
            "equivalent if inside the margin: interval",
            "verdict",
        ])
        .right(&[0, 1, 2, 3]);
        for (i, look) in pair.looks.iter().enumerate() {
            table.text_row(&[
                (i + 1).to_string(),
                look.generated_items.to_string(),
                look.graded_items.to_string(),
                format!("{:+.1}", look.difference_points),
                format!("[{:+.1}, {:+.1}]", look.lower_points, look.upper_points),
                format!(
                    "[{:+.1}, {:+.1}]",
                    look.equivalence_lower_points, look.equivalence_upper_points
                ),
                look.verdict.name().to_string(),
            ]);
        }
        body.push(table.into());
    }
    vec![Part::section("rounds", vec![text("Rounds (--until-decided)")], body).into()]
}

/// `s` with its first letter in upper case.
fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
