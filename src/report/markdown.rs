//! report.md and comparison_table.md.

use std::fmt::Write;

use super::table::markdown_table;
use crate::analysis::{AnswerResult, PromptResult, Results, Verdict};
use crate::score::clip;

/// The longest answer quoted in the divergence section.
const QUOTE_CHARS: usize = 1200;

fn names(results: &Results) -> Vec<&str> {
    results.endpoints.iter().map(|e| e.name.as_str()).collect()
}

/// One cell: the extracted answer with a mark, or the failure.
fn answer_cell(a: Option<&AnswerResult>) -> String {
    let Some(a) = a else { return "—".into() };
    if let Some(e) = &a.error {
        return format!("FAIL: {}", clip(e, 60));
    }
    let shown = a
        .extracted
        .as_deref()
        .map(|x| clip(x, 40))
        .unwrap_or_else(|| "(nothing extracted)".into());
    match a.correct {
        Some(true) => format!("{shown} ✓"),
        Some(false) => format!("{shown} ✗"),
        None => format!("{} (open)", clip(a.answer.as_deref().unwrap_or(""), 40)),
    }
}

fn status_line(results: &Results) -> Option<String> {
    (!results.complete).then(|| {
        format!(
            "> **Incomplete run:** {} request failure(s) and {} missing answer(s). Continue it with \
             `coherence compare --resume <this run folder>`; only what is missing is sent.",
            results.request_failures, results.missing
        )
    })
}

pub fn render_table(results: &Results) -> String {
    let names = names(results);
    let mut out = String::new();
    let _ = writeln!(out, "# Comparison table: {}\n", names.join(" vs "));
    let _ = writeln!(out, "**{}**\n", results.summary.headline());
    out.push_str(&prompt_table(results, &names));
    out
}

fn prompt_table(results: &Results, names: &[&str]) -> String {
    let mut headers = vec!["prompt", "category", "expected"];
    headers.extend(names.iter().copied());
    headers.push("verdict");
    let rows: Vec<Vec<String>> = results
        .prompts
        .iter()
        .map(|p| {
            let mut row = vec![
                format!("`{}`", p.id),
                p.category.clone(),
                clip(&p.expected, 40),
            ];
            row.extend(names.iter().map(|n| answer_cell(p.answers.get(*n))));
            row.push(verdict_cell(p.verdict));
            row
        })
        .collect();
    markdown_table(&headers, &rows)
}

fn verdict_cell(v: Verdict) -> String {
    match v {
        Verdict::Same => "same".into(),
        other => format!("**{}**", other.as_str()),
    }
}

pub fn render_report(results: &Results) -> String {
    let names = names(results);
    let mut out = String::new();
    let _ = writeln!(out, "# coherence report: {}\n", names.join(" vs "));
    let _ = writeln!(
        out,
        "**{}** over {} prompts; reference endpoint `{}`.\n",
        results.summary.headline(),
        results.prompts.len(),
        results.reference
    );
    if let Some(s) = status_line(results) {
        let _ = writeln!(out, "{s}\n");
    }

    out.push_str("## Endpoints\n\n");
    let rows: Vec<Vec<String>> = results
        .endpoints
        .iter()
        .enumerate()
        .map(|(i, e)| {
            vec![
                format!("`{}`", e.name),
                if i == 0 {
                    "reference".into()
                } else {
                    "compared".into()
                },
                e.base_url.clone(),
                e.model.clone().unwrap_or_default(),
                e.served_models.join(", "),
                e.system_fingerprints.join(", "),
                e.max_model_len.map(|n| n.to_string()).unwrap_or_default(),
                format!(
                    "{} / {} / {} / {}",
                    e.correct, e.wrong, e.ungraded, e.failed
                ),
            ]
        })
        .collect();
    out.push_str(&markdown_table(
        &[
            "endpoint",
            "role",
            "URL",
            "model",
            "served model",
            "fingerprint",
            "max_model_len",
            "correct / wrong / open / failed",
        ],
        &rows,
    ));

    out.push_str("\n## Categories\n\n");
    let mut headers = vec!["category", "prompts", "same", "diff", "review", "fail"];
    let correct_headers: Vec<String> = names.iter().map(|n| format!("{n} correct")).collect();
    headers.extend(correct_headers.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = results
        .categories
        .iter()
        .map(|c| {
            let mut row = vec![
                c.category.clone(),
                c.prompts.to_string(),
                c.summary.same.to_string(),
                c.summary.diff.to_string(),
                c.summary.review.to_string(),
                c.summary.fail.to_string(),
            ];
            row.extend(
                names
                    .iter()
                    .map(|n| c.correct.get(*n).copied().unwrap_or(0).to_string()),
            );
            row
        })
        .collect();
    out.push_str(&markdown_table(&headers, &rows));

    let flagged: Vec<&PromptResult> = results
        .prompts
        .iter()
        .filter(|p| p.verdict != Verdict::Same)
        .collect();
    out.push_str("\n## Divergences\n\n");
    if flagged.is_empty() {
        out.push_str("None: every prompt got the same verdict on every endpoint.\n");
    }
    for p in flagged {
        divergence(&mut out, p, &names);
    }

    out.push_str("\n## All prompts\n\n");
    out.push_str(&prompt_table(results, &names));

    let errors: Vec<(String, String, String)> = results
        .prompts
        .iter()
        .flat_map(|p| {
            p.answers
                .iter()
                .filter_map(move |(n, a)| a.error.clone().map(|e| (p.id.clone(), n.clone(), e)))
        })
        .collect();
    if !errors.is_empty() {
        out.push_str("\n## Errors\n\n");
        let rows: Vec<Vec<String>> = errors
            .into_iter()
            .map(|(id, n, e)| vec![format!("`{id}`"), n, clip(&e, 200)])
            .collect();
        out.push_str(&markdown_table(&["prompt", "endpoint", "error"], &rows));
    }
    if !results.warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in &results.warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
    out
}

fn divergence(out: &mut String, p: &PromptResult, names: &[&str]) {
    let _ = writeln!(
        out,
        "### `{}` ({}): {}\n",
        p.id,
        p.category,
        p.verdict.as_str()
    );
    let _ = writeln!(out, "> {}\n", clip(&p.question, 400));
    let reasons: Vec<String> = p
        .pairs
        .iter()
        .map(|r| format!("{} vs {}: {}", r.reference, r.other, r.reason))
        .collect();
    let _ = writeln!(
        out,
        "Expected: {} ({} scorer). {}.\n",
        p.expected,
        p.scorer,
        reasons.join("; ")
    );
    let row = |label: &str, f: &dyn Fn(&AnswerResult) -> String| {
        let mut r = vec![label.to_string()];
        r.extend(
            names
                .iter()
                .map(|n| p.answers.get(*n).map(f).unwrap_or_default()),
        );
        r
    };
    let mut headers = vec![""];
    headers.extend(names.iter().copied());
    let rows = vec![
        row("answer", &|a| answer_cell(Some(a))),
        row("evidence", &|a| {
            a.evidence.clone().or(a.error.clone()).unwrap_or_default()
        }),
        row("finish", &|a| {
            format!(
                "{} · {} tokens of {}",
                a.finish_reason.as_deref().unwrap_or("?"),
                a.completion_tokens
                    .map(|n| n.to_string())
                    .unwrap_or("?".into()),
                a.max_tokens.map(|n| n.to_string()).unwrap_or("?".into())
            )
        }),
    ];
    out.push_str(&markdown_table(&headers, &rows));
    out.push('\n');
    for n in names {
        let Some(a) = p.answers.get(*n) else { continue };
        let text = a
            .answer
            .as_deref()
            .map(|t| clip(t, QUOTE_CHARS))
            .unwrap_or_else(|| "(no answer)".into());
        let _ = writeln!(out, "**{n}**:\n\n> {}\n", text.replace('\n', "\n> "));
    }
}
