//! The families section: per pair, each family's (category's) accuracy on both endpoints with
//! Wilson 95% intervals beside its floor (the best constant answer's accuracy) and each
//! endpoint's most common answer, the flips each way, the exact McNemar p-value and its Holm
//! adjustment across families; the families named different first.

use crate::analysis::behaviour::families::{FamilyAccuracy, FamilyVerdict, PairFamilies};
use crate::analysis::{format_p, Results};
use crate::doc::{para, strong, t, text, Block, Inline, Part, Table};
use crate::text::clip;

/// The longest answer a cell shows (sorted lists and JSON are clipped).
const ANSWER_CHARS: usize = 24;

/// Read below the tables: what the floor and the most common answer say.
const FLOOR_NOTE: &str = "The floor is the accuracy of giving every graded item of the family its most common expected answer (shown with it): an accuracy near the floor shows no skill, only the answer a constant would give. The most common answer is each endpoint's own, with how many of the family's graded items gave it (n/N, unanswered items counted in N): a large share there means the endpoint mostly repeats one answer; \"no repeated answer\" means every answer it gave differs.";

/// "`b` against `a`: different in 2 at family-wise α = 0.05 (…): letters, logic." (or no family
/// differs).
fn named(pair: &PairFamilies) -> Vec<Inline> {
    let v = &pair.verdicts;
    if v.different_families.is_empty() {
        return t(
            &format!(
                "`$` against `$`: no family differs at family-wise α = {} ({}).",
                v.alpha, v.method
            ),
            &[&pair.other, &pair.reference],
        );
    }
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
}

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
        body.push(para(named(pair)));
        let reference = format!("{} % correct", pair.reference);
        let other = format!("{} % correct", pair.other);
        let mut table = Table::new(&[
            "family",
            "graded",
            "floor (best constant)",
            &reference,
            &other,
            "most common answer (share), ref / other",
            "flips (ref only / other only)",
            "p",
            "Holm p",
            "verdict",
        ])
        .right(&[1, 2, 3, 4, 7, 8]);
        let mut rows: Vec<_> = v.families.iter().filter(|f| f.graded_items > 0).collect();
        rows.sort_by(|a, b| {
            b.different
                .cmp(&a.different)
                .then(a.holm_p_value.total_cmp(&b.holm_p_value))
        });
        for f in rows {
            let pct = |a: &FamilyAccuracy| {
                format!(
                    "{:.0}% [{:.0}–{:.0}]",
                    a.accuracy_percent, a.low_percent, a.high_percent
                )
            };
            table.text_row(&[
                f.family.clone(),
                f.graded_items.to_string(),
                floor(f),
                pct(&f.reference),
                pct(&f.other),
                format!("{} / {}", modal(&f.reference), modal(&f.other)),
                format!("{} / {}", f.reference_only, f.other_only),
                format_p(f.p_value),
                format_p(f.holm_p_value),
                if f.different { "different" } else { "—" }.to_string(),
            ]);
        }
        body.push(table.into());
    }
    body.push(para(vec![text(FLOOR_NOTE)]));
    vec![Part::section("families", vec![text("Families")], body).into()]
}

/// "20% (always 3)", or a dash when no graded item expects one answer.
fn floor(f: &FamilyVerdict) -> String {
    f.best_constant.as_ref().map_or("—".into(), |c| {
        format!(
            "{:.0}% (always {})",
            c.accuracy_percent,
            clip(&c.answer, ANSWER_CHARS)
        )
    })
}

/// "3 (5/11)"; "no repeated answer" when no answer was given twice; a dash when the scorer read
/// none.
fn modal(a: &FamilyAccuracy) -> String {
    match &a.modal_answer {
        None => "—".into(),
        Some(m) if m.count < 2 => "no repeated answer".into(),
        Some(m) => format!("{} ({}/{})", clip(&m.answer, ANSWER_CHARS), m.count, m.of),
    }
}
