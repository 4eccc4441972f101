//! Every prompt, collapsed to one line: opened, the question, the endpoints' answers side by side
//! with an inline word diff of each pair, and every repeat's answer.

use std::fmt::Write;

use similar::ChangeTag;

use super::chart::{clip, fmt_num};
use super::divergences::answer_cell;
use super::escape::esc;
use super::{names, open_section, prompt_anchor, verdict_badge};
use crate::analysis::{AnswerResult, PromptResult, Results, Verdict};
use crate::report::diff::word_diff;

/// The longest answer text quoted.
const QUOTE_CHARS: usize = 4000;
/// The longest repeat answer quoted.
const REPEAT_CHARS: usize = 600;

pub(super) fn render(results: &Results, out: &mut String) {
    if results.prompts.is_empty() {
        return;
    }
    open_section(out, "prompts", "Prompts");
    out.push_str(
        "<p class=\"muted\">Every prompt, divergent ones first; open one for the answers side by side, \
         the word diff (<del>only in the reference</del> <ins>only in the other</ins>) and every repeat.</p>\n",
    );
    let names = names(results);
    let mut order: Vec<&PromptResult> = results.prompts.iter().collect();
    order.sort_by_key(|p| p.verdict == Verdict::Same);
    for p in order {
        prompt(out, p, &names);
    }
    out.push_str("</section>\n");
}

fn prompt(out: &mut String, p: &PromptResult, names: &[&str]) {
    let _ = write!(
        out,
        "<details class=\"prompt\" id=\"{}\">\n<summary>{} <code>{}</code> <span class=\"muted\">{}</span> \
         <span class=\"question\">{}</span></summary>\n<div class=\"prompt-body\">\n",
        esc(&prompt_anchor(&p.id)),
        verdict_badge(p.verdict),
        esc(&p.id),
        esc(&p.category),
        esc(&clip(&p.question, 110))
    );
    let _ = write!(
        out,
        "<blockquote class=\"text\">{}</blockquote>\n<p>Expected: <b>{}</b> <span class=\"muted\">({} scorer)</span></p>\n",
        esc(&clip(&p.question, QUOTE_CHARS)),
        esc(&p.expected),
        esc(&p.scorer)
    );
    let _ = writeln!(
        out,
        "<div class=\"side-by-side\" data-columns=\"{}\">",
        names.len().min(4)
    );
    for n in names {
        let Some(a) = p.answers.get(*n) else { continue };
        answer_column(out, n, a);
    }
    out.push_str("</div>\n");
    for (pair, ta, tb) in p.pair_texts() {
        let at = pair
            .first_divergence
            .as_ref()
            .map(|d| format!(", first difference at character {}", d.char_offset))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<p class=\"pair-line\"><code>{}</code> → <code>{}</code>: {} <span class=\"muted\">{}{}</span></p>",
            esc(&pair.reference),
            esc(&pair.other),
            verdict_badge(pair.verdict),
            esc(&pair.reason),
            esc(&at)
        );
        if ta != tb {
            let _ = writeln!(out, "<p class=\"diff text\">{}</p>", html_word_diff(ta, tb));
        }
    }
    repeats(out, p, names);
    out.push_str("</div>\n</details>\n");
}

fn answer_column(out: &mut String, name: &str, a: &AnswerResult) {
    let _ = write!(
        out,
        "<div class=\"answer\"><h4><code>{}</code></h4>\n<p>{}</p>\n",
        esc(name),
        answer_cell(Some(a))
    );
    if let Some(e) = a.evidence.as_ref().or(a.error.as_ref()) {
        let _ = writeln!(out, "<p class=\"muted\">{}</p>", esc(e));
    }
    let mut facts = vec![a.finish_reason.clone().unwrap_or_else(|| "?".into())];
    facts.push(format!(
        "{} of {} tokens",
        a.completion_tokens
            .map(|n| n.to_string())
            .unwrap_or("?".into()),
        a.max_tokens.map(|n| n.to_string()).unwrap_or("?".into())
    ));
    if let Some(ms) = a.latency_ms {
        facts.push(format!("{} ms", fmt_num(ms)));
    }
    if a.reasoning_chars > 0 {
        facts.push(format!("{} reasoning chars", a.reasoning_chars));
    }
    if a.truncated {
        facts.push("truncated at the budget".into());
    }
    let _ = writeln!(
        out,
        "<p class=\"facts-line\">{}</p>",
        esc(&facts.join(" · "))
    );
    if let Some(note) = &a.note {
        let _ = writeln!(out, "<p class=\"callout\">{}</p>", esc(note));
    }
    let text = a
        .answer
        .as_deref()
        .map(|t| clip(t.trim(), QUOTE_CHARS))
        .unwrap_or_else(|| "(no answer)".into());
    let _ = writeln!(out, "<pre class=\"text\">{}</pre>\n</div>", esc(&text));
}

/// The word diff of two answers: `<del>` only in the first, `<ins>` only in the second.
fn html_word_diff(old: &str, new: &str) -> String {
    word_diff(old, new)
        .into_iter()
        .map(|(tag, run)| match tag {
            ChangeTag::Equal => esc(&run).to_string(),
            ChangeTag::Delete => format!("<del>{}</del>", esc(&run)),
            ChangeTag::Insert => format!("<ins>{}</ins>", esc(&run)),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every repeat's answer per endpoint, with where it sat in what the endpoint was sent.
fn repeats(out: &mut String, p: &PromptResult, names: &[&str]) {
    let count = names
        .iter()
        .filter_map(|n| p.answers.get(*n))
        .map(|a| a.repeats.len())
        .max()
        .unwrap_or(0);
    if count == 0 {
        return;
    }
    out.push_str("<div class=\"scroll\"><table class=\"repeats\">\n<thead><tr><th>repeat</th>");
    for n in names {
        let _ = write!(out, "<th><code>{}</code></th>", esc(n));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for i in 0..count {
        let _ = write!(out, "<tr><td class=\"num\">{}</td>", i + 1);
        for n in names {
            let Some(r) = p.answers.get(*n).and_then(|a| a.repeats.get(i)) else {
                out.push_str("<td></td>");
                continue;
            };
            let mark = match r.correct {
                Some(true) => " <span class=\"mark ok\" title=\"correct\">✓</span>",
                Some(false) => " <span class=\"mark bad\" title=\"wrong\">✗</span>",
                None => "",
            };
            let answer = match &r.answer {
                Some(t) => format!(
                    "<span class=\"text\">{}</span>",
                    esc(&clip(t.trim(), REPEAT_CHARS))
                ),
                None => "<span class=\"fail\">failed</span>".into(),
            };
            let truncated = if r.truncated { " · truncated" } else { "" };
            let after = r
                .after
                .as_deref()
                .map(|a| format!(" after <code>{}</code>", esc(a)))
                .unwrap_or_else(|| " (first)".into());
            let _ = write!(
                out,
                "<td>{answer}{mark}<br><span class=\"muted\">request #{}{after}{truncated}</span></td>",
                r.sent + 1
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
}
