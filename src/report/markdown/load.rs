//! The probe phases of `determinism` (under load, cache state, samples): each endpoint's verdict
//! and the prompts whose answers moved. Renders nothing when the run has none of them.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::cells::histogram_cell;
use crate::analysis::{DivergenceUnit, Results, UnderLoad};
use crate::report::table::markdown_table;
use crate::text::clip;

pub(super) fn render(results: &Results, out: &mut String) {
    let load = &results.load;
    if load.is_empty() {
        return;
    }
    if !load.under_load.is_empty() {
        under_load(results, out);
    }
    if !load.cache_states.is_empty() {
        cache_states(results, out);
    }
    if !load.samples.is_empty() {
        samples(results, out);
    }
}

fn under_load(results: &Results, out: &mut String) {
    let load = &results.load;
    out.push_str("\n## Under load (batch invariance)\n\n");
    out.push_str("Each prompt was sent one at a time, alone (load 0) and while K long filler requests were kept in flight on the same endpoint. An answer the prompt never gave alone is a change.\n\n");
    let rows: Vec<Vec<String>> = load
        .load_verdicts
        .iter()
        .map(|v| {
            vec![
                v.endpoint.clone(),
                v.label(),
                v.completions_change_at
                    .map_or("never".into(), |k| format!("load {k}")),
                v.statement.clone(),
            ]
        })
        .collect();
    out.push_str(&markdown_table(
        &[
            "endpoint",
            "verdict",
            "completions first change",
            "in words",
        ],
        &rows,
    ));
    // Only prompts whose answers or completions moved at some level, with every level shown.
    let moved = |r: &UnderLoad| r.changed || r.unique_completions > 1 || r.new_completions > 0;
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in load.under_load.iter().filter(|r| moved(r)) {
        if !keys.contains(&(r.endpoint.as_str(), r.prompt.as_str())) {
            keys.push((&r.endpoint, &r.prompt));
        }
    }
    if keys.is_empty() {
        out.push_str("\nEvery prompt returned one completion at every load.\n");
        return;
    }
    let rows: Vec<Vec<String>> = load
        .under_load
        .iter()
        .filter(|r| keys.contains(&(r.endpoint.as_str(), r.prompt.as_str())))
        .map(|r| {
            vec![
                format!("`{}`", r.prompt),
                r.endpoint.clone(),
                r.load.to_string(),
                r.requests.to_string(),
                r.unique_completions.to_string(),
                histogram_cell(&r.histogram, &Default::default()),
                if r.changed { "yes" } else { "" }.into(),
                r.first_divergence
                    .as_ref()
                    .map(|d| {
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
                    })
                    .unwrap_or_default(),
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&markdown_table(
        &[
            "prompt",
            "endpoint",
            "load",
            "requests",
            "unique completions",
            "answers",
            "changed",
            "first divergence from alone",
        ],
        &rows,
    ));
}

fn cache_states(results: &Results, out: &mut String) {
    let load = &results.load;
    out.push_str("\n## Cache state\n\n");
    out.push_str("Each prompt was sent cold (after an unrelated prompt), warm (at once again), and behind a long shared preamble: cold (after an unrelated prompt), then cached (after another question behind the same preamble). Cold and warm are the same request, as are the two prefix states.\n\n");
    let rows: Vec<Vec<String>> = load
        .cache_verdicts
        .iter()
        .map(|v| {
            vec![
                v.endpoint.clone(),
                v.verdict.label().to_string(),
                v.statement.clone(),
            ]
        })
        .collect();
    out.push_str(&markdown_table(&["endpoint", "verdict", "in words"], &rows));
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
    let flagged: Vec<Vec<String>> = load
        .cache_verdicts
        .iter()
        .flat_map(|v| {
            v.completions_dependent
                .iter()
                .map(move |p| (v.endpoint.as_str(), p.as_str(), v.dependent.contains(p)))
        })
        .map(|(e, p, answer)| {
            vec![
                format!("`{p}`"),
                e.to_string(),
                if answer { "answer" } else { "text only" }.into(),
                by_prompt
                    .get(&(e, p))
                    .map(|s| s.join("; "))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    if !flagged.is_empty() {
        out.push('\n');
        out.push_str(&markdown_table(
            &["prompt", "endpoint", "depends", "answers per state"],
            &flagged,
        ));
    }
}

fn samples(results: &Results, out: &mut String) {
    for s in &results.load.samples {
        let _ = writeln!(out, "\n## Samples: `{}` on {}\n", s.prompt, s.endpoint);
        let unit = match s.divergence_unit {
            DivergenceUnit::Token => "token",
            DivergenceUnit::Char => "char",
        };
        let tokens = s
            .identical_prefix_tokens
            .map(|t| format!(" ({t} tokens)"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{} completions ({} answered), {} unique; the most common one came back {} times. Every completion shares the first {} characters{tokens}.\n",
            s.requests, s.usable, s.unique_completions, s.modal_completions, s.identical_prefix_chars
        );
        let _ = writeln!(
            out,
            "Answers: {}\n",
            histogram_cell(&s.histogram, &Default::default())
        );
        if s.divergence_points.is_empty() {
            out.push_str("Every completion was identical.\n");
        } else {
            let rows: Vec<Vec<String>> = s
                .divergence_points
                .iter()
                .map(|(at, n)| vec![format!("{unit} {at}"), n.to_string()])
                .collect();
            out.push_str("Where the other completions depart from the most common one:\n\n");
            out.push_str(&markdown_table(&["diverges at", "completions"], &rows));
        }
    }
}
