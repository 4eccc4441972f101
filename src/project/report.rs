//! `report.md` of `coherence project`: the endpoints side by side (time, tokens, output size,
//! finish reason, reasoning size, requirement counts, playable with the first runtime error),
//! then a per-requirement table.

use super::results::{ProjectResults, RequirementStatus};

fn cell(s: &str) -> String {
    let one_line: String = s.replace(['\n', '\r'], " ").replace('|', "\\|");
    crate::text::clip(&one_line, 160)
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

/// Renders the whole report.
pub fn render(results: &ProjectResults) -> String {
    let mut out = String::from("# coherence project\n\n");
    if !results.complete {
        out.push_str("**Incomplete:** some requests failed or the run was interrupted; `--resume` the folder to send what is missing.\n\n");
    }
    let names = &results.endpoints;
    for task in &results.tasks {
        out.push_str(&format!(
            "## {} — {}\n\nSpecification: {} words, {} requirements.\n\n",
            task.id, task.title, task.spec_words, task.requirement_count
        ));
        out.push_str(&format!(
            "| | {} |\n|---|{}\n",
            names.join(" | "),
            "---|".repeat(names.len())
        ));
        type Row = (&'static str, fn(&super::results::Answer) -> String);
        let rows: [Row; 11] = [
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
        for (label, f) in rows {
            let cells: Vec<String> = names
                .iter()
                .map(|n| {
                    task.answers
                        .get(n)
                        .map_or("not sent".into(), |a| cell(&f(a)))
                })
                .collect();
            out.push_str(&format!("| {label} | {} |\n", cells.join(" | ")));
        }
        out.push_str("\n### Requirements\n\n");
        out.push_str(&format!(
            "| id | requirement | {} |\n|---|---|{}\n",
            names.join(" | "),
            "---|".repeat(names.len())
        ));
        let first = names
            .iter()
            .find_map(|n| task.answers.get(n).and_then(|a| a.evaluation.as_ref()));
        if let Some(reference) = first {
            for (i, req) in reference.checks.iter().enumerate() {
                let cells: Vec<String> = names
                    .iter()
                    .map(|n| {
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
                            None => "–".into(),
                        }
                    })
                    .collect();
                out.push_str(&format!(
                    "| {} | {} | {} |\n",
                    req.id,
                    cell(&req.title),
                    cells.join(" | ")
                ));
            }
        } else {
            out.push_str("No answer was evaluated.\n");
        }
        out.push('\n');
    }
    out
}
