//! The long-context section (`--suite long`): per endpoint, a heat table of accuracy by planned
//! prompt length (rows) and needle depth (columns); then per pair, the flips and exact McNemar
//! test at each length and where the pair first parts; with `--logprobs`, the passages' KL by
//! position (`long_tokens.rs`).

use std::collections::BTreeSet;

use crate::analysis::long::long_context::{LongCell, LongContext};
use crate::analysis::{format_p, Results};
use crate::doc::{para, t, text, Block, Part, Table};

pub(super) fn render(results: &Results) -> Vec<Block> {
    let Some(long) = results
        .long_context
        .as_ref()
        .filter(|l| !l.cells.is_empty())
    else {
        return Vec::new();
    };
    let mut body = vec![para(vec![text(
        "Needle retrieval by planned prompt length (rows, tokens) and needle depth (columns, % of the haystack): correct of graded items; the measured length is the server's usage.prompt_tokens.",
    )])];
    let endpoints: Vec<&str> =
        long.cells
            .iter()
            .map(|c| c.endpoint.as_str())
            .fold(Vec::new(), |mut seen, e| {
                if !seen.contains(&e) {
                    seen.push(e);
                }
                seen
            });
    for endpoint in endpoints {
        body.push(para(t("`$`:", &[endpoint])));
        body.push(heat_table(long, endpoint).into());
    }
    for pair in &long.pairs {
        body.push(para(t(
            &format!("`$` against `$`: {}.", pair.statement),
            &[&pair.other, &pair.reference],
        )));
        let mut table = Table::new(&[
            "length (tokens)",
            "graded",
            "both correct",
            "flips (ref only / other only)",
            "p",
            "Holm p",
            "verdict",
        ])
        .right(&[0, 1, 2, 4, 5]);
        for b in &pair.buckets {
            table.text_row(&[
                b.context_tokens.to_string(),
                b.counts.graded.to_string(),
                b.counts.both_correct.to_string(),
                format!("{} / {}", b.counts.reference_only, b.counts.other_only),
                format_p(b.counts.p_value),
                format_p(b.holm_p_value),
                if b.different { "different" } else { "—" }.to_string(),
            ]);
        }
        body.push(table.into());
    }
    if let Some(tokens) = &long.token_agreement {
        body.extend(super::long_tokens::blocks(tokens));
    }
    vec![Part::section("long-context", vec![text("Long context")], body).into()]
}

/// Rows: planned lengths (with the mean measured prompt tokens); columns: depths.
fn heat_table(long: &LongContext, endpoint: &str) -> Table {
    let cells: Vec<&LongCell> = long
        .cells
        .iter()
        .filter(|c| c.endpoint == endpoint)
        .collect();
    let depths: BTreeSet<u8> = cells.iter().map(|c| c.depth).collect();
    let lengths: BTreeSet<u32> = cells.iter().map(|c| c.context_tokens).collect();
    let mut headers = vec!["length (tokens)".to_string(), "measured".to_string()];
    headers.extend(depths.iter().map(|d| format!("{d}%")));
    let columns: Vec<usize> = (0..headers.len()).collect();
    let mut table = Table::new(&headers).right(&columns);
    for length in lengths {
        let row_cells: Vec<&&LongCell> = cells
            .iter()
            .filter(|c| c.context_tokens == length)
            .collect();
        let measured: Vec<f64> = row_cells
            .iter()
            .filter_map(|c| c.mean_prompt_tokens)
            .collect();
        let mut row = vec![
            length.to_string(),
            if measured.is_empty() {
                "—".to_string()
            } else {
                format!(
                    "{:.0}",
                    measured.iter().sum::<f64>() / measured.len() as f64
                )
            },
        ];
        row.extend(depths.iter().map(|d| {
            row_cells
                .iter()
                .find(|c| c.depth == *d)
                .map_or("—".to_string(), |c| format!("{}/{}", c.correct, c.items))
        }));
        table.text_row(&row);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::long::long_context::{LongBucket, LongPair};
    use crate::analysis::wilson;
    use crate::analysis::McNemarCounts;
    use crate::doc::to_markdown;

    fn cell(endpoint: &str, tokens: u32, depth: u8, correct: u64) -> LongCell {
        LongCell {
            endpoint: endpoint.into(),
            context_tokens: tokens,
            depth,
            items: 2,
            correct,
            accuracy: wilson(correct, 2),
            mean_prompt_tokens: Some(f64::from(tokens) - 3.0),
        }
    }

    #[test]
    fn the_heat_table_and_the_pair_rows_are_rendered() {
        let mut results = crate::report::fixture::results();
        assert!(render(&results).is_empty());
        results.long_context = Some(LongContext {
            cells: vec![
                cell("ref", 256, 0, 2),
                cell("ref", 256, 100, 2),
                cell("ref", 512, 0, 2),
                cell("ref", 512, 100, 2),
                cell("other", 256, 0, 2),
                cell("other", 256, 100, 1),
                cell("other", 512, 0, 0),
                cell("other", 512, 100, 0),
            ],
            pairs: vec![LongPair {
                reference: "ref".into(),
                other: "other".into(),
                buckets: vec![LongBucket {
                    context_tokens: 512,
                    counts: McNemarCounts {
                        graded: 4,
                        both_correct: 0,
                        both_wrong: 0,
                        reference_only: 4,
                        other_only: 0,
                        p_value: 0.125,
                    },
                    holm_p_value: 0.25,
                    different: false,
                }],
                first_difference_tokens: Some(251),
                max_prompt_tokens: Some(509),
                different_from_tokens: None,
                statement: "answers first differ at 251 prompt tokens".into(),
            }],
            token_agreement: None,
        });
        let md = to_markdown(&render(&results));
        assert!(md.contains("Long context"), "{md}");
        assert!(md.contains("| 256 | 253 | 2/2 | 1/2 |"), "{md}");
        assert!(md.contains("| 512 | 509 | 0/2 | 0/2 |"), "{md}");
        assert!(
            md.contains("answers first differ at 251 prompt tokens"),
            "{md}"
        );
        assert!(md.contains("4 / 0"), "{md}");
    }
}
