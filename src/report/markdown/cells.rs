//! Helpers shared by the report sections: answer and verdict cells, histograms, quoting, the
//! prompts worth a closer look and their anchors.

use std::collections::BTreeMap;

use crate::analysis::{AnswerResult, Difference, PromptResult, Results, Verdict};
use crate::score::clip;

/// The endpoint names, reference first.
pub(in crate::report) fn names(results: &Results) -> Vec<&str> {
    results.endpoints.iter().map(|e| e.name.as_str()).collect()
}

/// One cell: the extracted answer with a mark, or the failure.
pub(in crate::report) fn answer_cell(a: Option<&AnswerResult>) -> String {
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

/// `same`, or the verdict in bold.
pub(in crate::report) fn verdict_cell(v: Verdict) -> String {
    match v {
        Verdict::Same => "same".into(),
        other => format!("**{}**", other.as_str()),
    }
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

/// GitHub's heading anchor for a prompt's detail section.
pub(super) fn anchor(id: &str) -> String {
    format!("prompt-{id}")
}

/// `{9: 4, 5: 1}`; long answers are shown from just before where they differ from each other,
/// so two answers that share a long opening stay tell-apart.
pub(super) fn histogram_cell(histogram: &BTreeMap<String, u32>) -> String {
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
        .values()
        .enumerate()
        .map(|(i, count)| {
            let key = &keys[i];
            let start = shared(i).saturating_sub(8).min(key.len());
            let shown: String = key[start..].iter().take(SHOWN).collect();
            let lead = if start > 0 { "…" } else { "" };
            let tail = if key.len() > start + SHOWN { "…" } else { "" };
            format!(
                "{lead}{}{tail}: {count}",
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

/// "1 prompt", "3 prompts".
pub(super) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
