//! The statistics section: each compared endpoint against the reference, paired over graded
//! prompts, in sentences and a table per category with the exact McNemar p-value.

use crate::analysis::{format_p, Results};
use crate::doc::{para, strong, text, Block, Line, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    if results.statistics.is_empty() {
        return Vec::new();
    }
    let mut body = vec![para(vec![text("Paired over prompts with ground truth that both endpoints answered; p is the exact McNemar test.")])];
    for s in &results.statistics {
        let mut items: Vec<Line> = vec![vec![strong(vec![text(&s.overall.statement)])]];
        items.extend(
            s.categories
                .iter()
                .filter(|c| c.counts.reference_only + c.counts.other_only > 0)
                .map(|c| vec![text(&c.statement)]),
        );
        body.push(Block::List(items));
        let only_ref = format!("{} only", s.reference);
        let only_other = format!("{} only", s.other);
        let mut table = Table::new(&[
            "category",
            "graded",
            "both right",
            &only_ref,
            &only_other,
            "both wrong",
            "p",
        ]);
        for c in s.categories.iter().filter(|c| c.counts.graded > 0) {
            table.text_row(&[
                c.category.clone().unwrap_or_default(),
                c.counts.graded.to_string(),
                c.counts.both_correct.to_string(),
                c.counts.reference_only.to_string(),
                c.counts.other_only.to_string(),
                c.counts.both_wrong.to_string(),
                format_p(c.counts.p_value),
            ]);
        }
        body.push(table.into());
    }
    vec![Part::section("statistics", vec![text("Statistics")], body).into()]
}
