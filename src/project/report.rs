//! `report.md` of `coherence project`: the endpoints side by side (time, tokens, output size,
//! finish reason, reasoning size, requirement counts, playable with the first runtime error),
//! then a per-requirement table.

use super::results::{Answer, ProjectResults, RequirementStatus, TaskResult};
use crate::doc::{para, t, text, to_markdown, Block, Line, Part, Table};

/// A cell: one line of at most 160 characters.
fn cell(s: &str) -> Line {
    vec![text(crate::text::clip(s, 160))]
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

/// Renders the whole report.
pub fn render(results: &ProjectResults) -> String {
    let mut body = Vec::new();
    if !results.complete {
        body.push(para(t("**Incomplete:** some requests failed or the run was interrupted; `--resume` the folder to send what is missing.", &[])));
    }
    for task in &results.tasks {
        body.push(task_part(task, &results.endpoints));
    }
    to_markdown(&[Part::new(1, None, vec![text("coherence project")], body).into()])
}

type Row = (&'static str, fn(&Answer) -> String);

/// The endpoints' answers side by side, one row per figure.
const ROWS: [Row; 11] = [
    ("elapsed (s)", |a| {
        a.elapsed_s.map_or("–".into(), |s| format!("{s:.1}"))
    }),
    ("prompt tokens", |a| opt(a.prompt_tokens)),
    ("completion tokens", |a| opt(a.completion_tokens)),
    ("output bytes", |a| a.output_bytes.to_string()),
    ("output lines", |a| a.output_lines.to_string()),
    ("finish reason", |a| opt(a.finish_reason.as_deref())),
    ("reasoning bytes", |a| a.reasoning_bytes.to_string()),
    ("met / partial / missing", |a| {
        let r = a.requirements;
        format!("{} / {} / {} of {}", r.met, r.partial, r.missing, r.total)
    }),
    ("playable", |a| {
        if a.playable {
            "yes".into()
        } else {
            let why = a
                .evaluation
                .as_ref()
                .and_then(|e| e.unplayable_because.clone())
                .or_else(|| a.request_error.clone())
                .unwrap_or_default();
            format!("no: {why}")
        }
    }),
    ("first runtime error", |a| opt(a.runtime_error.as_deref())),
    ("dead functions", |a| {
        a.evaluation
            .as_ref()
            .map(|e| e.dead_functions.join(", "))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "–".into())
    }),
];

fn task_part(task: &TaskResult, names: &[String]) -> Block {
    let mut headers = vec![String::new()];
    headers.extend(names.iter().cloned());
    let mut side = Table::new(&headers);
    for (label, f) in ROWS {
        let mut row = vec![vec![text(label)]];
        row.extend(names.iter().map(|n| {
            task.answers
                .get(n)
                .map_or(vec![text("not sent")], |a| cell(&f(a)))
        }));
        side.row(row);
    }
    let mut body = vec![
        para(vec![text(format!(
            "Specification: {} words, {} requirements.",
            task.spec_words, task.requirement_count
        ))]),
        side.into(),
    ];
    let mut headers = vec!["id".to_string(), "requirement".into()];
    headers.extend(names.iter().cloned());
    let mut requirements = Table::new(&headers);
    let first = names
        .iter()
        .find_map(|n| task.answers.get(n).and_then(|a| a.evaluation.as_ref()));
    let mut checks = vec![];
    if let Some(reference) = first {
        for (i, req) in reference.checks.iter().enumerate() {
            let mut row = vec![vec![text(&req.id)], cell(&req.title)];
            row.extend(names.iter().map(|n| {
                let check = task
                    .answers
                    .get(n)
                    .and_then(|a| a.evaluation.as_ref())
                    .and_then(|e| e.checks.get(i));
                match check {
                    Some(c) => {
                        let mark = match c.verdict {
                            RequirementStatus::Met => "✅ met",
                            RequirementStatus::Partial => "🟡 partial",
                            RequirementStatus::Missing => "❌ missing",
                        };
                        cell(&format!("{mark}: {}", c.detail))
                    }
                    None => vec![text("–")],
                }
            }));
            requirements.row(row);
        }
        checks.push(requirements.into());
    } else {
        checks.push(requirements.into());
        checks.push(para(vec![text("No answer was evaluated.")]));
    }
    body.push(Part::new(3, None, vec![text("Requirements")], checks).into());
    let title = vec![text(format!("{} — {}", task.id, task.title))];
    Part::new(2, None, title, body).into()
}
