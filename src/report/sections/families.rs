//! The families section: per pair, each family's (category's) accuracy on both endpoints with
//! Wilson 95% intervals, the flips each way, the exact McNemar p-value and its Holm adjustment
//! across families; the families named different first.

use crate::analysis::{format_p, Results};
use crate::doc::{para, strong, t, text, Block, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    let compared: Vec<_> = results
        .families
        .iter()
        .filter(|p| p.verdicts.families.iter().any(|f| f.graded_items > 0))
        .collect();
    if compared.is_empty() {
        return Vec::new();
    }
    let mut body = Vec::new();
    for pair in compared {
        let v = &pair.verdicts;
        let named = if v.different_families.is_empty() {
            t(
                &format!(
                    "`$` against `$`: no family differs at family-wise α = {} ({}).",
                    v.alpha, v.method
                ),
                &[&pair.other, &pair.reference],
            )
        } else {
            let mut line = t(
                &format!(
                    "`$` against `$`: **different in {}** at family-wise α = {} ({}): ",
                    v.different_families.len(),
                    v.alpha,
                    v.method
                ),
                &[&pair.other, &pair.reference],
            );
            line.push(strong(vec![text(v.different_families.join(", "))]));
            line.push(text("."));
            line
        };
        body.push(para(named));
        let reference = format!("{} % correct", pair.reference);
        let other = format!("{} % correct", pair.other);
        let mut table = Table::new(&[
            "family",
            "graded",
            &reference,
            &other,
            "flips (ref only / other only)",
            "p",
            "Holm p",
            "verdict",
        ])
        .right(&[1, 2, 3, 5, 6]);
        let mut rows: Vec<_> = v.families.iter().filter(|f| f.graded_items > 0).collect();
        rows.sort_by(|a, b| {
            b.different
                .cmp(&a.different)
                .then(a.holm_p_value.total_cmp(&b.holm_p_value))
        });
        for f in rows {
            let pct = |a: &crate::analysis::families::FamilyAccuracy| {
                format!(
                    "{:.0}% [{:.0}–{:.0}]",
                    a.accuracy_percent, a.low_percent, a.high_percent
                )
            };
            table.text_row(&[
                f.family.clone(),
                f.graded_items.to_string(),
                pct(&f.reference),
                pct(&f.other),
                format!("{} / {}", f.reference_only, f.other_only),
                format_p(f.p_value),
                format_p(f.holm_p_value),
                if f.different { "different" } else { "—" }.to_string(),
            ]);
        }
        body.push(table.into());
    }
    vec![Part::section("families", vec![text("Families")], body).into()]
}
