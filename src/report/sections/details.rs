//! The prompt details section: a block for every prompt, reachable by its anchor. Prompts whose
//! verdict is not `same` come first and in full: the question, the answers side by side (answer,
//! evidence, finish, both endpoints' answer histograms, text), every repeat in send order with
//! the one that differed from the modal answer marked, and a word diff of each pair. Long texts
//! are collapsed to their start, the first divergence and their end; runaway repetitions are
//! shown once with a count. `same` prompts get a compact block.

use super::cells::{
    anchor, answer_cell, clip_keep_lines, collapse_runaway, flagged, histogram_cell, names,
    text_share, truncated_mark, verdict_badge, written_histogram,
};
use crate::analysis::{AnswerResult, Divergence, PromptResult, Results, Verdict};
use crate::doc::{
    code, para, strong, t, text, Block, Fold, Inline, Line, Part, Sink, Style, Table,
};
use crate::report::diff::word_diff_line;
use crate::text::clip;

/// A text up to this long is quoted whole (runaway repetitions collapsed); a longer one is
/// shown as its start, the first divergence and its end, and gets no word diff.
const QUOTE_CHARS: usize = 1200;
/// Characters of a long text's start and of its end.
const START_CHARS: usize = 400;
const END_CHARS: usize = 300;
/// The longest answer text shown under "Answer texts".
const FULL_CHARS: usize = 4000;

/// The section, a prompt's block at a time (a long run has thousands of rows of repeats).
pub(super) fn render(results: &Results, sink: &mut dyn Sink) {
    if results.prompts.is_empty() {
        return;
    }
    let names = names(results);
    let section = Part::section("prompts", vec![text("Prompt details")], Vec::new());
    sink.open(&section);
    sink.blocks(vec![para(t("Every prompt has a block here: those whose verdict is not `same` first and in full, then the `same` ones in brief.", &[]))]);
    for p in flagged(results) {
        sink.blocks(vec![full(p, &names)]);
    }
    for p in results
        .prompts
        .iter()
        .filter(|p| p.verdict == Verdict::Same)
    {
        sink.blocks(vec![brief(p, &names)]);
    }
    sink.close(&section);
}

/// A prompt's block: its heading (folded in HTML) over `body`.
fn block(p: &PromptResult, body: Vec<Block>) -> Block {
    let mut title = t("`$` ($): ", &[&p.id, &p.category]);
    title.extend(verdict_badge(p.verdict));
    Part::new(3, Some(&anchor(&p.id)), title, body)
        .folded(Fold::FoldedInHtml)
        .into()
}

fn full(p: &PromptResult, names: &[&str]) -> Block {
    let mut body = vec![
        Block::Quote(vec![text(clip(&p.question, 2000))]),
        para(vec![text(format!(
            "Expected: {} ({} scorer).",
            p.expected, p.scorer
        ))]),
    ];
    let mut headers = vec![""];
    headers.extend(names.iter().copied());
    let mut table = Table::new(&headers);
    let row = |label: &str, f: &dyn Fn(&str, &AnswerResult) -> Line| {
        let mut r = vec![vec![text(label)]];
        r.extend(
            names
                .iter()
                .map(|n| p.answers.get(*n).map(|a| f(n, a)).unwrap_or_default()),
        );
        r
    };
    table.row(row("answer", &|_, a| answer_cell(Some(a))));
    table.row(row("evidence", &|_, a| {
        vec![text(
            a.evidence.clone().or(a.error.clone()).unwrap_or_default(),
        )]
    }));
    table.row(row("finish", &|_, a| finish_cell(a)));
    let repeated = names
        .iter()
        .any(|n| p.answers.get(*n).is_some_and(|a| a.determinism.is_some()));
    if repeated {
        table.row(row("answers over repeats", &|_, a| {
            vec![text(
                a.determinism
                    .as_ref()
                    .map(|d| {
                        let (histogram, cut) = written_histogram(a, &d.histogram);
                        histogram_cell(&histogram, &cut)
                    })
                    .unwrap_or_default(),
            )]
        }));
    }
    table.row(row("text", &|n, a| {
        let shown = a
            .answer
            .as_deref()
            .map(|t| excerpt(t, divergence_of(p, n).map(|d| d.char_offset)))
            .unwrap_or_else(|| "(no answer)".into());
        let mut cell = lines(&shown);
        if let Some(share) = text_share(a) {
            cell.push(Inline::Break);
            cell.push(strong(vec![text(share)]));
        }
        cell
    }));
    body.push(table.into());
    for n in names {
        if let Some(note) = p.answers.get(*n).and_then(|a| a.note.as_ref()) {
            body.push(para(vec![text(format!("{n}: {note}"))]));
        }
    }
    body.extend(pairs(p));
    body.extend(repeats(p, names, true));
    body.extend(word_diffs(p));
    body.push(texts(p, names));
    block(p, body)
}

/// Text with its line breaks kept, as breaks.
fn lines(s: &str) -> Line {
    let mut line = Line::new();
    for (i, l) in s.split('\n').enumerate() {
        if i > 0 {
            line.push(Inline::Break);
        }
        line.push(text(l));
    }
    line
}

/// Each pair's verdict and why.
fn pairs(p: &PromptResult) -> Vec<Block> {
    if p.pairs.is_empty() {
        return Vec::new();
    }
    let items = p
        .pairs
        .iter()
        .map(|x| {
            let mut line = t("`$` → `$`: ", &[&x.reference, &x.other]);
            line.extend(verdict_badge(x.verdict));
            let at = x
                .first_divergence
                .as_ref()
                .map(|d| format!(", first difference at character {}", d.char_offset))
                .unwrap_or_default();
            line.push(text(format!(" ({}{at})", x.reason)));
            line
        })
        .collect();
    vec![Block::List(items)]
}

/// Every endpoint's whole answer text (up to [`FULL_CHARS`]), then each other text its repeats
/// wrote, folded.
fn texts(p: &PromptResult, names: &[&str]) -> Block {
    let mut body = Vec::new();
    for n in names {
        let Some(a) = p.answers.get(*n) else { continue };
        let mut line = vec![code(*n), text(": ")];
        line.extend(finish_cell(a));
        body.push(para(line));
        let shown = a
            .answer
            .as_deref()
            .map(|x| clip_keep_lines(x, FULL_CHARS))
            .unwrap_or_else(|| "(no answer)".into());
        body.push(Block::Preformatted(shown));
        for (text_of, repeats) in other_texts(a) {
            body.push(para(vec![
                code(*n),
                text(format!(
                    ", another text, written by repeat {}:",
                    repeats.join(", ")
                )),
            ]));
            body.push(Block::Preformatted(clip_keep_lines(text_of, FULL_CHARS)));
        }
    }
    Part::new(4, None, vec![text("Answer texts")], body)
        .folded(Fold::Folded)
        .into()
}

/// The texts the repeats wrote other than the one shown, each with the repeats that wrote it.
fn other_texts(a: &AnswerResult) -> Vec<(&str, Vec<String>)> {
    let mut texts: Vec<(&str, Vec<String>)> = Vec::new();
    for r in &a.repeats {
        let Some(t) = r.text.as_deref() else { continue };
        match texts.iter_mut().find(|(x, _)| *x == t) {
            Some((_, repeats)) => repeats.push(r.repeat.to_string()),
            None => texts.push((t, vec![r.repeat.to_string()])),
        }
    }
    texts
}

/// A `same` prompt: one line per endpoint, and the repeats when they were not all alike.
fn brief(p: &PromptResult, names: &[&str]) -> Block {
    let mut body = vec![para(vec![text(format!(
        "Expected: {} ({} scorer). {}",
        clip(&p.expected, 60),
        p.scorer,
        clip(&p.question, 160)
    ))])];
    let mut items = Vec::new();
    for n in names {
        let Some(a) = p.answers.get(*n) else { continue };
        let modal = a
            .determinism
            .as_ref()
            .and_then(|d| d.modal_answer.as_deref());
        let count = a.repeats.len();
        let cut = a.repeats.iter().filter(|r| r.truncated).count();
        let repeats = if count < 2 {
            String::new()
        } else if a.repeats.iter().any(|r| r.answer.as_deref() != modal) {
            format!("; {count} repeats, not all the same answer (below)")
        } else if cut > 0 {
            format!("; {count} repeats, the same answer, {cut} from cut-off completions (below)")
        } else {
            format!("; {count} repeats, all the same answer")
        };
        let mut line = vec![code(*n), text(": ")];
        line.extend(answer_cell(Some(a)));
        line.push(text(" · "));
        line.extend(finish_cell(a));
        line.push(text(repeats));
        if let Some(share) = text_share(a) {
            line.push(text("; "));
            line.push(strong(vec![text(share)]));
        }
        items.push(line);
    }
    body.push(Block::List(items));
    body.extend(repeats(p, names, false));
    body.push(texts(p, names));
    block(p, body)
}

/// Every repeat gave the modal answer, none from a cut-off completion.
fn alike(a: &AnswerResult) -> bool {
    let modal = a
        .determinism
        .as_ref()
        .and_then(|d| d.modal_answer.as_deref());
    a.repeats
        .iter()
        .all(|r| !r.truncated && r.answer.as_deref() == modal)
}

/// Every repeat of each repeated endpoint, in the order the endpoint was sent them, with the
/// prompt sent just before and a mark on each repeat whose answer is not the modal one.
/// `always`: also when every repeat was alike.
fn repeats(p: &PromptResult, names: &[&str], always: bool) -> Vec<Block> {
    let mut table = Table::new(&["endpoint", "repeat", "sent", "after", "answer", ""]);
    for n in names {
        let Some(a) = p.answers.get(*n) else { continue };
        if a.repeats.len() < 2 || (!always && alike(a)) {
            continue;
        }
        let modal = a
            .determinism
            .as_ref()
            .and_then(|d| d.modal_answer.as_deref());
        let mut sent: Vec<_> = a.repeats.iter().collect();
        sent.sort_by_key(|r| r.sent);
        for r in sent {
            let answer = match &r.answer {
                None => "FAIL".to_string(),
                Some(x) => {
                    let mark = match r.correct {
                        Some(true) => " ✓",
                        Some(false) => " ✗",
                        None => "",
                    };
                    let shown = r.as_written.as_deref().unwrap_or(x);
                    truncated_mark(format!("{}{mark}", clip(shown, 60)), r.truncated)
                }
            };
            let after = match &r.after {
                None => vec![text("(first request)")],
                Some(id) if **id == *p.id => vec![code(&**id), text(" (this prompt)")],
                Some(id) => vec![code(&**id)],
            };
            let differs = if r.answer.is_some() && r.answer.as_deref() != modal {
                "≠ modal answer"
            } else {
                ""
            };
            table.row(vec![
                vec![code(*n)],
                vec![text(r.repeat.to_string())],
                vec![text(format!("#{}", r.sent))],
                after,
                vec![text(answer)],
                vec![text(differs)],
            ]);
        }
    }
    if table.rows.is_empty() {
        return Vec::new();
    }
    vec![
        para(vec![text("Repeats in send order (sent: position among every request that endpoint got; after: the prompt sent just before):")]),
        table.into(),
    ]
}

/// Where this endpoint's text first differs from the other side of its pair.
fn divergence_of<'a>(p: &'a PromptResult, endpoint: &str) -> Option<&'a Divergence> {
    p.pairs
        .iter()
        .find(|x| x.other == endpoint)
        .or_else(|| p.pairs.iter().find(|x| x.reference == endpoint))
        .and_then(|x| x.first_divergence.as_ref())
}

/// The text with runaway repetitions collapsed; one still long after that as its start, the
/// neighbourhood of the first divergence (character `at`) and its end.
fn excerpt(text: &str, at: Option<usize>) -> String {
    let collapsed = collapse_runaway(text.trim());
    if collapsed.chars().count() <= QUOTE_CHARS {
        return clip_keep_lines(&collapsed, QUOTE_CHARS);
    }
    let chars: Vec<char> = text.trim().chars().collect();
    let piece =
        |from: usize, to: usize| collapse_runaway(&chars[from..to].iter().collect::<String>());
    let end_from = chars.len() - END_CHARS;
    let mut parts = vec![piece(0, START_CHARS)];
    if let Some(at) = at.filter(|a| *a > START_CHARS && *a < end_from) {
        let from = at.saturating_sub(100).max(START_CHARS);
        let to = (at + 200).min(end_from);
        parts.push(format!(
            "[first difference at character {at}] {}",
            piece(from, to)
        ));
    }
    parts.push(piece(end_from, chars.len()));
    format!("{} [{} characters in all]", parts.join(" … "), chars.len())
}

/// "stop · 12 of 1024 tokens · 300 reasoning chars", and in HTML the latency.
fn finish_cell(a: &AnswerResult) -> Line {
    let reasoning = if a.reasoning_chars > 0 {
        format!(" · {} reasoning chars", a.reasoning_chars)
    } else {
        String::new()
    };
    let mut line = vec![text(format!(
        "{} · {} of {} tokens{reasoning}",
        a.finish_reason.as_deref().unwrap_or("?"),
        a.completion_tokens
            .map(|n| n.to_string())
            .unwrap_or("?".into()),
        a.max_tokens.map(|n| n.to_string()).unwrap_or("?".into())
    ))];
    if let Some(ms) = a.latency_ms {
        line.push(Inline::Styled(
            Style::HtmlOnly,
            vec![text(format!(" · {} ms", crate::doc::fmt_num(ms)))],
        ));
    }
    line
}

/// A word diff for each pair whose answer texts differ; for long texts, only where they first
/// differ.
fn word_diffs(p: &PromptResult) -> Vec<Block> {
    let mut blocks = Vec::new();
    for (pair, ta, tb) in p.pair_texts() {
        if ta == tb {
            continue;
        }
        let (ta, tb) = (collapse_runaway(ta), collapse_runaway(tb));
        let long = ta.chars().count() > QUOTE_CHARS || tb.chars().count() > QUOTE_CHARS;
        match (&pair.first_divergence, long) {
            (Some(d), true) => {
                blocks.push(para(vec![text(format!(
                    "First difference {} → {} at character {}{}: {}⟨{} | {}⟩",
                    pair.reference,
                    pair.other,
                    d.char_offset,
                    token(d),
                    if d.before.is_empty() {
                        String::new()
                    } else {
                        format!("…{}", clip(&d.before, 40))
                    },
                    clip(&d.left, 40),
                    clip(&d.right, 40)
                ))]));
            }
            (_, true) => {}
            (d, false) => {
                let at = d
                    .as_ref()
                    .map(|d| {
                        format!(
                            " (first difference at character {}{})",
                            d.char_offset,
                            token(d)
                        )
                    })
                    .unwrap_or_default();
                blocks.push(para(vec![text(format!(
                    "Word diff {} → {}{at}:",
                    pair.reference, pair.other
                ))]));
                blocks.push(Block::Quote(word_diff_line(&ta, &tb)));
            }
        }
    }
    blocks
}

fn token(d: &Divergence) -> String {
    d.token_index
        .map(|t| format!(", token {t}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_keeps_its_start_the_divergence_and_its_end() {
        let text = format!("{}{}{}", "a".repeat(600), "DIVERGES here", "z".repeat(600));
        let e = excerpt(&text, Some(600));
        assert!(e.starts_with(&"a".repeat(START_CHARS)), "{e}");
        assert!(
            e.contains("[first difference at character 600] aaaa"),
            "{e}"
        );
        assert!(e.contains("DIVERGES here"), "{e}");
        assert!(e.ends_with(&format!(
            "{} [1213 characters in all]",
            "z".repeat(END_CHARS)
        )));
        assert!(e.chars().count() < 1100, "{}", e.chars().count());
        // A short text is quoted whole.
        assert_eq!(excerpt("short", Some(2)), "short");
    }
}
