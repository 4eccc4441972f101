//! The probe phases of `determinism` (under load, cache state, samples): each endpoint's verdict
//! and the prompts whose answers moved. Renders nothing when the run has none of them.

use std::collections::BTreeMap;

use super::cells::histogram_cell;
use crate::analysis::{Divergence, DivergenceUnit, Results, UnderLoad};
use crate::doc::{code, para, t, text, Block, Line, Part, Table};
use crate::text::clip;

pub(super) fn render(results: &Results) -> Vec<Block> {
    let load = &results.load;
    let mut parts = Vec::new();
    if !load.under_load.is_empty() {
        parts.push(under_load(results));
    }
    if !load.cache_states.is_empty() {
        parts.push(cache_states(results));
    }
    parts.extend(samples(results));
    parts
}

/// A row whose first cell is a prompt id and the rest plain text.
fn row(table: &mut Table, prompt: &str, rest: Vec<String>) {
    let mut cells: Vec<Line> = vec![vec![code(prompt)]];
    cells.extend(rest.into_iter().map(|c| vec![text(c)]));
    table.row(cells);
}

fn under_load(results: &Results) -> Block {
    let load = &results.load;
    let mut body = vec![para(vec![text("Each prompt was sent one at a time, alone (load 0) and while K long filler requests were kept in flight on the same endpoint. An answer the prompt never gave alone is a change.")])];
    let mut verdicts = Table::new(&[
        "endpoint",
        "verdict",
        "completions first change",
        "in words",
    ]);
    for v in &load.load_verdicts {
        verdicts.text_row(&[
            v.endpoint.clone(),
            v.label(),
            v.completions_change_at
                .map_or("never".into(), |k| format!("load {k}")),
            v.statement.clone(),
        ]);
    }
    body.push(verdicts.into());
    // Only prompts whose answers or completions moved at some level, with every level shown.
    let moved = |r: &UnderLoad| r.changed || r.unique_completions > 1 || r.new_completions > 0;
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in load.under_load.iter().filter(|r| moved(r)) {
        if !keys.contains(&(r.endpoint.as_str(), r.prompt.as_str())) {
            keys.push((&r.endpoint, &r.prompt));
        }
    }
    if keys.is_empty() {
        body.push(para(vec![text(
            "Every prompt returned one completion at every load.",
        )]));
    } else {
        let mut table = Table::new(&[
            "prompt",
            "endpoint",
            "load",
            "requests",
            "unique completions",
            "answers",
            "changed",
            "first divergence from alone",
        ]);
        for r in load
            .under_load
            .iter()
            .filter(|r| keys.contains(&(r.endpoint.as_str(), r.prompt.as_str())))
        {
            let divergence = r
                .first_divergence
                .as_ref()
                .map(divergence_cell)
                .unwrap_or_default();
            row(
                &mut table,
                &r.prompt,
                vec![
                    r.endpoint.clone(),
                    r.load.to_string(),
                    r.requests.to_string(),
                    r.unique_completions.to_string(),
                    histogram_cell(&r.histogram, &Default::default()),
                    if r.changed { "yes" } else { "" }.into(),
                    divergence,
                ],
            );
        }
        body.push(table.into());
    }
    let title = vec![text("Under load (batch invariance)")];
    Part::section("under-load", title, body).into()
}

fn cache_states(results: &Results) -> Block {
    let load = &results.load;
    let mut body = vec![para(vec![text("Each prompt was sent cold (after an unrelated prompt), warm (at once again), and behind a long shared preamble: cold (after an unrelated prompt), then cached (after another question behind the same preamble). Cold and warm are the same request, as are the two prefix states.")])];
    let mut verdicts = Table::new(&["endpoint", "verdict", "in words"]);
    for v in &load.cache_verdicts {
        verdicts.text_row(&[&v.endpoint, v.verdict.label(), &v.statement]);
    }
    body.push(verdicts.into());
    let mut by_prompt: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
    for r in &load.cache_states {
        by_prompt
            .entry((&r.endpoint, &r.prompt))
            .or_default()
            .push(format!(
                "{}: {} ({} unique)",
                r.state.label(),
                histogram_cell(&r.histogram, &Default::default()),
                r.unique_completions
            ));
    }
    let mut flagged = Table::new(&["prompt", "endpoint", "depends", "answers per state"]);
    for v in &load.cache_verdicts {
        for p in &v.completions_dependent {
            let e = v.endpoint.as_str();
            row(
                &mut flagged,
                p,
                vec![
                    e.to_string(),
                    if v.dependent.contains(p) {
                        "answer"
                    } else {
                        "text only"
                    }
                    .into(),
                    by_prompt
                        .get(&(e, p.as_str()))
                        .map(|s| s.join("; "))
                        .unwrap_or_default(),
                ],
            );
        }
    }
    if !flagged.rows.is_empty() {
        body.push(flagged.into());
    }
    Part::section("cache-state", vec![text("Cache state")], body).into()
}

fn samples(results: &Results) -> Vec<Block> {
    let mut parts = Vec::new();
    for s in &results.load.samples {
        let unit = match s.divergence_unit {
            DivergenceUnit::Token => "token",
            DivergenceUnit::Char => "char",
        };
        let tokens = s
            .identical_prefix_tokens
            .map(|t| format!(" ({t} tokens)"))
            .unwrap_or_default();
        let mut body = vec![
            para(vec![text(format!(
                "{} completions ({} answered), {} unique; the most common one came back {} times. Every completion shares the first {} characters{tokens}.",
                s.requests, s.usable, s.unique_completions, s.modal_completions, s.identical_prefix_chars
            ))]),
            para(vec![text(format!(
                "Answers: {}",
                histogram_cell(&s.histogram, &Default::default())
            ))]),
        ];
        if s.divergence_points.is_empty() {
            body.push(para(vec![text("Every completion was identical.")]));
        } else {
            body.push(para(vec![text(
                "Where the other completions depart from the most common one:",
            )]));
            let mut table = Table::new(&["diverges at", "completions"]);
            for (at, n) in &s.divergence_points {
                table.text_row(&[format!("{unit} {at}"), n.to_string()]);
            }
            body.push(table.into());
        }
        let title = t("Samples: `$` on $", &[&s.prompt, &s.endpoint]);
        let id = format!("samples-{}-{}", s.prompt, s.endpoint);
        parts.push(Part::new(2, Some(&id), title, body).into());
    }
    parts
}

/// "char 12, token 3: …before⟨left | right⟩": where a completion under load first parts from
/// the one given alone.
fn divergence_cell(d: &Divergence) -> String {
    let token = d
        .token_index
        .map(|t| format!(", token {t}"))
        .unwrap_or_default();
    format!(
        "char {}{token}: …{}⟨{} | {}⟩",
        d.char_offset,
        clip(&d.before, 30),
        clip(&d.left, 20),
        clip(&d.right, 20)
    )
}
