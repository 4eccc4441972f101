//! The divergences section: one row per prompt whose verdict is not `same`, with the kind of each
//! diff (flip, answer, format, no answer), every endpoint's answer, why the pairs differ, and whether that is
//! sampler noise or a deployment difference. In HTML the rows carry their category, verdict,
//! kind and difference as data, which the page's script filters by.

use std::collections::BTreeSet;

use super::cells::{
    anchor, answer_cell, difference_label, flagged, names, token_cell, verdict_cell,
};
use crate::analysis::{Difference, PairResult, PromptResult, Results, Verdict};
use crate::doc::{code, link, para, text, Block, Line, Part, Row, Table};
use crate::text::clip;

/// The table's element id (the filters name it).
const TABLE_ID: &str = "divergence-table";

pub(super) fn render(results: &Results) -> Vec<Block> {
    let flagged = flagged(results);
    let body = if flagged.is_empty() {
        vec![para(vec![text(
            "None: every prompt got the same verdict on every endpoint.",
        )])]
    } else {
        table(results, &flagged)
    };
    vec![Part::section("divergences", vec![text("Divergences")], body).into()]
}

fn table(results: &Results, flagged: &[&PromptResult]) -> Vec<Block> {
    let names = names(results);
    let mut headers = vec!["prompt", "category", "verdict", "kind", "expected"];
    headers.extend(names.iter().copied());
    headers.extend(["why", "difference"]);
    let mut table = Table::new(&headers);
    table.id = Some(TABLE_ID);
    table.sortable = true;
    table.class = Some(format!("ends-{}", names.len().min(6)));
    for p in flagged {
        let mut cells: Vec<Line> = vec![
            vec![link(anchor(&p.id), vec![code(&p.id)])],
            vec![text(&p.category)],
            verdict_cell(p.verdict),
            vec![text(per_pair(p, |x| {
                x.kind.map(|k| k.as_str().to_string())
            }))],
            vec![text(clip(&p.expected, 30))],
        ];
        cells.extend(names.iter().map(|n| answer_cell(p.answers.get(*n))));
        cells.push(vec![text(
            p.pairs
                .iter()
                .filter(|x| x.verdict != Verdict::Same)
                .map(|x| format!("{}: {}", x.other, x.reason))
                .collect::<Vec<_>>()
                .join("; "),
        )]);
        cells.push(difference_cell(p));
        table.rows.push(Row {
            cells,
            data: vec![
                ("category", p.category.clone()),
                ("verdict", p.verdict.as_str().to_string()),
                ("kind", kinds(p).join(" ")),
                ("difference", differences(p).join(" ")),
            ],
        });
    }
    let values = |f: &dyn Fn(&PromptResult) -> Vec<String>| -> Vec<String> {
        let set: BTreeSet<String> = flagged.iter().flat_map(|p| f(p)).collect();
        set.into_iter().collect()
    };
    let filters = Block::Filters {
        table: TABLE_ID,
        selects: vec![
            ("category", values(&|p| vec![p.category.clone()])),
            ("verdict", values(&|p| vec![p.verdict.as_str().to_string()])),
            ("kind", values(&kinds)),
            ("difference", values(&differences)),
        ],
    };
    vec![filters, table.into()]
}

/// Per pair: noise or deployment difference, and the first token divergence when measured.
fn difference_cell(p: &PromptResult) -> Line {
    let many = p.pairs.len() > 1;
    let mut line = Line::new();
    for x in &p.pairs {
        let label = Some(difference_label(x.difference)).filter(|s| !s.is_empty());
        let token = x.token_divergence.as_ref().map(token_cell);
        if label.is_none() && token.is_none() {
            continue;
        }
        if !line.is_empty() {
            line.push(text("; "));
        }
        if many {
            line.push(text(format!("{}: ", x.other)));
        }
        if let Some(l) = label {
            line.push(text(l));
        }
        if let Some(tk) = token {
            if label.is_some() {
                line.push(text("; "));
            }
            line.extend(tk);
        }
    }
    line
}

/// One label per pair that has one, prefixed with the other endpoint when there are several pairs.
fn per_pair(p: &PromptResult, label: impl Fn(&PairResult) -> Option<String>) -> String {
    let many = p.pairs.len() > 1;
    p.pairs
        .iter()
        .filter_map(|x| {
            let l = label(x)?;
            Some(if many { format!("{}: {l}", x.other) } else { l })
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn kinds(p: &PromptResult) -> Vec<String> {
    let set: BTreeSet<_> = p.pairs.iter().filter_map(|x| x.kind).collect();
    set.into_iter().map(|k| k.as_str().to_string()).collect()
}

fn differences(p: &PromptResult) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for d in p.pairs.iter().filter_map(|x| x.difference) {
        let token = match d {
            Difference::SamplerNoise => "sampler_noise",
            Difference::DeploymentDifference => "deployment_difference",
            Difference::Inconclusive => "inconclusive",
        };
        if !v.iter().any(|x| x == token) {
            v.push(token.to_string());
        }
    }
    v
}
