//! Helpers shared by the report sections: answer and verdict cells (with the `truncated` mark),
//! the verdict bar, histograms, quoting with runaway repetitions collapsed, the prompts worth a closer look and
//! their anchors.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::{
    AnswerResult, Difference, PromptResult, Results, Summary, TokenDivergence, Verdict, FAILED_KEY,
};
use crate::doc::{span, strong, t, text, Figure, Line, Segment};
use crate::text::clip;

/// The endpoint names, reference first.
pub(in crate::report) fn names(results: &Results) -> Vec<&str> {
    results.endpoints.iter().map(|e| e.name.as_str()).collect()
}

/// One cell: the answer as written (else the extracted key) with a mark, or the failure;
/// `(truncated)` when the answer was read from a completion cut off at the budget.
pub(in crate::report) fn answer_cell(a: Option<&AnswerResult>) -> Line {
    let Some(a) = a else {
        return vec![text("—")];
    };
    if let Some(e) = &a.error {
        return vec![span("fail", vec![text(format!("FAIL: {}", clip(e, 60)))])];
    }
    let shown = a
        .as_written
        .as_deref()
        .or(a.extracted.as_deref())
        .filter(|x| !x.trim().is_empty())
        .map(|x| clip(x, 40))
        .unwrap_or_else(|| "(nothing extracted)".into());
    let mut cell = match a.correct {
        Some(true) => vec![text(shown + " "), span("mark ok", vec![text("✓")])],
        Some(false) => vec![text(shown + " "), span("mark bad", vec![text("✗")])],
        None => vec![
            text(clip(a.answer.as_deref().unwrap_or(""), 40) + " "),
            span("muted", vec![text("(open)")]),
        ],
    };
    if a.truncated {
        cell.push(text(" (truncated)"));
    }
    cell
}

/// How the model wrote the answer whose normalised key is `key`: the answer's own, else the
/// first repeat's that gave it, else the key itself.
fn written<'a>(a: &'a AnswerResult, key: &'a str) -> &'a str {
    let own = (a.extracted.as_deref() == Some(key))
        .then_some(a.as_written.as_deref())
        .flatten();
    own.or_else(|| {
        a.repeats
            .iter()
            .filter(|r| r.answer.as_deref() == Some(key))
            .find_map(|r| r.as_written.as_deref())
    })
    .unwrap_or(key)
}

/// The answers over repeats as written: the histogram with each key shown as the model wrote it,
/// and the written answers some repeat read from a cut-off completion.
pub(super) fn written_histogram(
    a: &AnswerResult,
    histogram: &BTreeMap<String, u32>,
) -> (BTreeMap<String, u32>, BTreeSet<String>) {
    let mut shown = BTreeMap::new();
    for (key, n) in histogram {
        *shown.entry(written(a, key).to_string()).or_default() += n;
    }
    let cut = truncated_keys(a)
        .into_iter()
        .map(|k| written(a, k).to_string())
        .collect();
    (shown, cut)
}

/// The answer followed by ` (truncated)` when it was read from a cut-off completion.
pub(super) fn truncated_mark(cell: String, truncated: bool) -> String {
    if truncated {
        format!("{cell} (truncated)")
    } else {
        cell
    }
}

/// The histogram keys (answers) some repeat read from a cut-off completion.
pub(super) fn truncated_keys(a: &AnswerResult) -> BTreeSet<&str> {
    let mut keys: BTreeSet<&str> = a
        .repeats
        .iter()
        .filter(|r| r.truncated)
        .filter_map(|r| r.answer.as_deref())
        .collect();
    if a.truncated {
        if let Some(modal) = a
            .determinism
            .as_ref()
            .and_then(|d| d.modal_answer.as_deref())
        {
            keys.insert(modal);
        }
    }
    keys
}

/// "2 of 3 repeats wrote this text; 1 wrote another": present when the repeats that answered
/// did not all write the text shown (the most frequent one).
pub(super) fn text_share(a: &AnswerResult) -> Option<String> {
    let d = a.determinism.as_ref()?;
    let usable = d.repeats - d.histogram.get(FAILED_KEY).copied().unwrap_or(0);
    let shown = d.modal_text_repeats;
    (shown > 0 && shown < usable).then(|| {
        let other = usable - shown;
        format!(
            "{shown} of {usable} repeats wrote this text; {other} wrote another (see Answer texts)"
        )
    })
}

/// The verdict as a badge (plain text in Markdown).
pub(super) fn verdict_badge(v: Verdict) -> Line {
    let class = match v {
        Verdict::Same => "badge v-same",
        Verdict::Format => "badge v-format",
        Verdict::NoAnswer => "badge v-no_answer",
        Verdict::Diff => "badge v-diff",
        Verdict::Review => "badge v-review",
        Verdict::Fail => "badge v-fail",
    };
    vec![span(class, vec![text(v.as_str())])]
}

/// The verdict as a badge, any but `same` in bold (a table cell).
pub(in crate::report) fn verdict_cell(v: Verdict) -> Line {
    match v {
        Verdict::Same | Verdict::Format | Verdict::NoAnswer => verdict_badge(v),
        _ => vec![strong(verdict_badge(v))],
    }
}

/// The six verdict counts as one stacked bar `width` wide for a total of `scale`.
pub(super) fn verdict_bar(s: &Summary, scale: usize, width: f64) -> Figure {
    let segment = |count, class, label| Segment {
        count,
        class,
        label,
    };
    Figure::Stacked {
        segments: vec![
            segment(s.same, "v-same", "same"),
            segment(s.format, "v-format", "format"),
            segment(s.no_answer, "v-no_answer", "no answer"),
            segment(s.diff, "v-diff", "diff"),
            segment(s.review, "v-review", "review"),
            segment(s.fail, "v-fail", "fail"),
        ],
        scale,
        width,
    }
}

/// "token 17 ` 3` vs ` 2`: near-tie (gaps 0.21 and 0.34 nats)".
pub(super) fn token_cell(d: &TokenDivergence) -> Line {
    let gap = |g: Option<f64>| {
        g.map_or("the other token not in top-k".to_string(), |g| {
            format!("{g:.2} nats")
        })
    };
    t(
        &format!(
            "token {} `$` vs `$`: {} (reference gap {}, other gap {})",
            d.index,
            if d.near_tie {
                "near-tie"
            } else {
                "substantive"
            },
            gap(d.gap_reference),
            gap(d.gap_other)
        ),
        &[&d.reference_token, &d.other_token],
    )
}

pub(super) fn difference_label(d: Option<Difference>) -> &'static str {
    match d {
        Some(Difference::SamplerNoise) => "within sampler noise",
        Some(Difference::DeploymentDifference) => "deployment difference",
        Some(Difference::Inconclusive) => "noise or deployment: inconclusive",
        None => "",
    }
}

/// The prompts whose verdict is not `same`: the divergence table and the details.
pub(super) fn flagged(results: &Results) -> Vec<&PromptResult> {
    results
        .prompts
        .iter()
        .filter(|p| p.verdict != Verdict::Same)
        .collect()
}

/// The anchor of a prompt's details.
pub(in crate::report) fn anchor(id: &str) -> String {
    format!("prompt-{id}")
}

/// `{9: 4, 5: 1}`; long answers are shown from just before where they differ from each other,
/// so two answers that share a long opening stay tell-apart; an answer in `truncated` is marked.
pub(super) fn histogram_cell(
    histogram: &BTreeMap<String, u32>,
    truncated: &BTreeSet<String>,
) -> String {
    const SHOWN: usize = 24;
    let keys: Vec<Vec<char>> = histogram.keys().map(|k| k.chars().collect()).collect();
    let shared = |i: usize| {
        keys.iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, other)| {
                keys[i]
                    .iter()
                    .zip(other)
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0)
    };
    let cells: Vec<String> = histogram
        .iter()
        .enumerate()
        .map(|(i, (answer, count))| {
            let key = &keys[i];
            let start = shared(i).saturating_sub(8).min(key.len());
            let shown: String = key[start..].iter().take(SHOWN).collect();
            let shown = if answer.trim().is_empty() {
                "(empty)".to_string()
            } else {
                shown
            };
            let lead = if start > 0 { "…" } else { "" };
            let tail = if key.len() > start + SHOWN { "…" } else { "" };
            let cut = if truncated.contains(answer.as_str()) {
                " (truncated)"
            } else {
                ""
            };
            format!(
                "{lead}{}{tail}{cut}: {count}",
                shown.split_whitespace().collect::<Vec<_>>().join(" ")
            )
        })
        .collect();
    format!("{{{}}}", cells.join(", "))
}

/// Like `clip`, but keeps line breaks.
pub(super) fn clip_keep_lines(s: &str, max: usize) -> String {
    let trimmed = s.trim();
    if trimmed.chars().count() <= max {
        trimmed.to_string()
    } else {
        format!("{}…", trimmed.chars().take(max).collect::<String>())
    }
}

/// A run repeated at least this often in a row is shown once with "×N".
const RUNAWAY: usize = 3;

/// Runaway repetitions collapsed: a line repeated [`RUNAWAY`] or more times in a row is shown
/// once with `[×N]`, and so is a phrase (up to 12 words) repeated in a row within a line.
pub(super) fn collapse_runaway(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut n = 1;
        while i + n < lines.len() && lines[i + n] == lines[i] {
            n += 1;
        }
        let line = collapse_phrases(lines[i]);
        if n >= RUNAWAY && !lines[i].trim().is_empty() {
            out.push(format!("{line} [×{n}]"));
        } else {
            out.extend(std::iter::repeat_n(line, n));
        }
        i += n;
    }
    out.join("\n")
}

/// Within one line: a phrase of up to 12 words repeated [`RUNAWAY`] or more times in a row.
fn collapse_phrases(line: &str) -> String {
    const LONGEST: usize = 12;
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() < RUNAWAY {
        return line.to_string();
    }
    let mut out: Vec<String> = Vec::new();
    let mut changed = false;
    let mut i = 0;
    'words: while i < words.len() {
        for len in 1..=LONGEST.min((words.len() - i) / RUNAWAY) {
            let phrase = &words[i..i + len];
            let mut n = 1;
            while i + (n + 1) * len <= words.len()
                && &words[i + n * len..i + (n + 1) * len] == phrase
            {
                n += 1;
            }
            if n >= RUNAWAY {
                out.push(format!("{} [×{n}]", phrase.join(" ")));
                i += n * len;
                changed = true;
                continue 'words;
            }
        }
        out.push(words[i].to_string());
        i += 1;
    }
    if changed {
        out.join(" ")
    } else {
        line.to_string()
    }
}

/// "1 prompt", "3 prompts".
pub(super) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runaway_lines_and_phrases_are_shown_once_with_a_count() {
        let text = "def f():\n    return 1\n    return 1\n    return 1\n    return 1\nend";
        assert_eq!(collapse_runaway(text), "def f():\n    return 1 [×4]\nend");
        assert_eq!(
            collapse_runaway("The answer is 4 4 4 4 4 4. I think so I think so I think so"),
            "The answer is 4 [×5] 4. I think so [×3]"
        );
        // Two in a row is ordinary text; line breaks and spacing are kept when nothing repeats.
        assert_eq!(collapse_runaway("a  b\na  b\nc"), "a  b\na  b\nc");
    }
}
