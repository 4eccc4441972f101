//! `--samples N`, read as Thinking Machines read their 1,000 completions: N completions, U
//! unique, how long a prefix they all share, and where each completion that differs from the
//! most common one departs from it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::probe::{histogram, unique_completions, ByCondition, Probe};
use crate::analysis::answers::divergence::first_divergence;
use crate::probes::journal::ProbeCondition;

/// What the divergence points count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceUnit {
    /// Token index in the most common completion (with `--logprobs`).
    Token,
    /// Character offset.
    Char,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleResult {
    pub prompt: String,
    pub endpoint: String,
    /// Completions requested.
    pub requests: u32,
    /// Completions answered.
    pub usable: u32,
    pub unique_completions: u32,
    /// How often each answer came back; failures count as "(fail)".
    pub histogram: BTreeMap<String, u32>,
    /// How many completions equal the most common one.
    pub modal_completions: u32,
    /// Characters every completion shares from the start.
    pub identical_prefix_chars: usize,
    /// Whole tokens of the most common completion inside that prefix (with `--logprobs`).
    pub identical_prefix_tokens: Option<usize>,
    pub divergence_unit: DivergenceUnit,
    /// Where each completion that differs from the most common one departs from it, counted
    /// per point.
    pub divergence_points: BTreeMap<usize, u32>,
}

pub fn analyze(endpoint: &str, prompts: &[(&str, &ByCondition)]) -> Vec<SampleResult> {
    prompts
        .iter()
        .filter_map(|(id, by)| {
            by.get(&ProbeCondition::Sample)
                .map(|probes| sample_result(id, endpoint, probes))
        })
        .collect()
}

fn sample_result(prompt: &str, endpoint: &str, probes: &[Probe]) -> SampleResult {
    let usable: Vec<&Probe> = probes.iter().filter(|p| p.key.is_some()).collect();
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for p in &usable {
        *counts.entry(p.completion.as_str()).or_default() += 1;
    }
    // The most common completion; ties go to the one returned for the lowest sample index.
    let modal = usable.iter().fold(None::<&Probe>, |best, p| match best {
        Some(b) if counts[b.completion.as_str()] >= counts[p.completion.as_str()] => Some(b),
        _ => Some(p),
    });
    let tokens = modal.and_then(|m| {
        usable
            .iter()
            .filter(|p| p.completion == m.completion)
            .find_map(|p| p.tokens.clone())
    });
    let unit = if tokens.is_some() {
        DivergenceUnit::Token
    } else {
        DivergenceUnit::Char
    };
    let mut points = BTreeMap::new();
    let mut prefix = modal.map_or(0, |m| m.completion.chars().count());
    if let Some(m) = modal {
        for p in &usable {
            let Some(d) = first_divergence(&m.completion, &p.completion, tokens.as_deref()) else {
                continue;
            };
            prefix = prefix.min(d.char_offset);
            let point = match (unit, &tokens) {
                (DivergenceUnit::Token, Some(t)) => d.token_index.unwrap_or(t.len()),
                _ => d.char_offset,
            };
            *points.entry(point).or_default() += 1;
        }
    }
    SampleResult {
        prompt: prompt.to_string(),
        endpoint: endpoint.to_string(),
        requests: probes.len() as u32,
        usable: usable.len() as u32,
        unique_completions: unique_completions(probes),
        histogram: histogram(probes),
        modal_completions: modal.map_or(0, |m| counts[m.completion.as_str()]),
        identical_prefix_chars: prefix,
        identical_prefix_tokens: tokens.as_deref().map(|t| whole_tokens(t, prefix)),
        divergence_unit: unit,
        divergence_points: points,
    }
}

/// How many tokens from the start fit entirely within `chars` characters.
fn whole_tokens(tokens: &[String], chars: usize) -> usize {
    let mut seen = 0;
    tokens
        .iter()
        .take_while(|t| {
            seen += t.chars().count();
            seen <= chars
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(repeat: u32, text: &str) -> Probe {
        Probe {
            repeat,
            key: Some(text.into()),
            completion: text.into(),
            tokens: Some(
                text.split_inclusive(' ')
                    .map(str::to_string)
                    .collect::<Vec<_>>(),
            ),
            fillers_at_send: None,
        }
    }

    #[test]
    fn counts_unique_prefix_and_divergence_points() {
        let mut probes: Vec<Probe> = (0..6).map(|i| probe(i, "Queens New York")).collect();
        probes.push(probe(6, "Queens NYC"));
        probes.push(probe(7, "New York City"));
        let s = sample_result("p", "e", &probes);
        assert_eq!(s.requests, 8);
        assert_eq!(s.unique_completions, 3);
        assert_eq!(s.modal_completions, 6);
        assert_eq!(s.identical_prefix_chars, 0);
        assert_eq!(s.identical_prefix_tokens, Some(0));
        assert_eq!(s.divergence_unit, DivergenceUnit::Token);
        assert_eq!(s.divergence_points, BTreeMap::from([(0, 1), (1, 1)]));
        let same: Vec<Probe> = (0..3).map(|i| probe(i, "a b")).collect();
        let s = sample_result("p", "e", &same);
        assert_eq!(
            (s.identical_prefix_chars, s.identical_prefix_tokens),
            (3, Some(2))
        );
        assert!(s.divergence_points.is_empty());
        assert_eq!(sample_result("p", "e", &[]).identical_prefix_chars, 0);
    }
}
