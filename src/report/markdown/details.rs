//! The prompt details section: for each prompt whose verdict is not `same`, the question, the
//! answers side by side (answer, evidence, finish, text) and a word diff of each pair.

use std::fmt::Write;

use super::cells::{anchor, answer_cell, clip_keep_lines, flagged, names};
use crate::analysis::{AnswerResult, PromptResult, Results};
use crate::report::diff::inline_word_diff;
use crate::report::table::markdown_table;
use crate::score::clip;

/// The longest answer quoted in the per-prompt detail.
const QUOTE_CHARS: usize = 1500;

pub(super) fn render(results: &Results, out: &mut String) {
    let flagged = flagged(results);
    if flagged.is_empty() {
        return;
    }
    let names = names(results);
    out.push_str("\n## Prompt details\n");
    for p in flagged {
        prompt(out, p, &names);
    }
}

fn prompt(out: &mut String, p: &PromptResult, names: &[&str]) {
    let _ = writeln!(
        out,
        "\n### <a id=\"{}\"></a>`{}` ({}): {}\n",
        anchor(&p.id),
        p.id,
        p.category,
        p.verdict.as_str()
    );
    let _ = writeln!(out, "> {}\n", clip(&p.question, 500));
    let _ = writeln!(out, "Expected: {} ({} scorer).\n", p.expected, p.scorer);
    let mut headers = vec![""];
    headers.extend(names.iter().copied());
    let row = |label: &str, f: &dyn Fn(&AnswerResult) -> String| {
        let mut r = vec![label.to_string()];
        r.extend(
            names
                .iter()
                .map(|n| p.answers.get(*n).map(f).unwrap_or_default()),
        );
        r
    };
    let rows = vec![
        row("answer", &|a| answer_cell(Some(a))),
        row("evidence", &|a| {
            a.evidence.clone().or(a.error.clone()).unwrap_or_default()
        }),
        row("finish", &finish_cell),
        row("text", &|a| {
            let text = a
                .answer
                .as_deref()
                .map(|t| clip_keep_lines(t, QUOTE_CHARS))
                .unwrap_or_else(|| "(no answer)".into());
            text.replace('\n', "<br>")
        }),
    ];
    out.push_str(&markdown_table(&headers, &rows));
    for n in names {
        if let Some(note) = p.answers.get(*n).and_then(|a| a.note.as_ref()) {
            let _ = writeln!(out, "\n{n}: {note}");
        }
    }
    word_diffs(out, p);
}

/// "stop · 12 of 1024 tokens · 300 reasoning chars".
fn finish_cell(a: &AnswerResult) -> String {
    let reasoning = if a.reasoning_chars > 0 {
        format!(" · {} reasoning chars", a.reasoning_chars)
    } else {
        String::new()
    };
    format!(
        "{} · {} of {} tokens{reasoning}",
        a.finish_reason.as_deref().unwrap_or("?"),
        a.completion_tokens
            .map(|n| n.to_string())
            .unwrap_or("?".into()),
        a.max_tokens.map(|n| n.to_string()).unwrap_or("?".into())
    )
}

/// A word diff for each pair whose answer texts differ.
fn word_diffs(out: &mut String, p: &PromptResult) {
    for pair in &p.pairs {
        let (Some(a), Some(b)) = (p.answers.get(&pair.reference), p.answers.get(&pair.other))
        else {
            continue;
        };
        let (Some(ta), Some(tb)) = (a.answer.as_deref(), b.answer.as_deref()) else {
            continue;
        };
        if ta == tb {
            continue;
        }
        let at = pair
            .first_divergence
            .as_ref()
            .map(|d| {
                format!(
                    " (first difference at character {}{})",
                    d.char_offset,
                    d.token_index
                        .map(|t| format!(", token {t}"))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\nWord diff {} → {}{at}:\n\n> {}",
            pair.reference,
            pair.other,
            inline_word_diff(ta, tb)
        );
    }
}
