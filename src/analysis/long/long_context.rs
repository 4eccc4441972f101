//! results.json `long_context`: the long suite's items (`--suite long`) by length and depth.
//! `cells` gives each endpoint's accuracy per (planned length, depth) with its Wilson interval;
//! `pairs` gives, per (reference, other) pair and length, the paired flips with an exact McNemar
//! test (Holm-adjusted over the lengths), and the smallest measured prompt length
//! (`usage.prompt_tokens`) at which the two answers differ in correctness.

use std::collections::BTreeMap;

pub use super::long_figures::{LongBucket, LongCell, LongContext, LongPair};
pub use super::long_tokens::{LongTokens, PositionBucket, PositionPair};
use crate::analysis::answers::figures::{AnswerResult, PromptResult};
use crate::analysis::answers::stats::{format_p, wilson};
use crate::analysis::answers::stats::{McNemarCounts, Paired};
use crate::analysis::behaviour::families::{holm_adjusted, ALPHA};
use crate::analysis::behaviour::same_model::{Answer, SameModel};
use crate::catalogue::long::LongId;

/// The long items of `prompts`, each with where it sits in the ladder.
fn long_items(prompts: &[PromptResult]) -> Vec<(LongId, &PromptResult)> {
    let mut items: Vec<_> = prompts
        .iter()
        .filter_map(|p| LongId::parse(&p.id).map(|at| (at, p)))
        .collect();
    items.sort_by_key(|(at, _)| *at);
    items
}

/// The figures of every long item in `prompts`; `names[0]` is the reference.
pub fn analyze(prompts: &[PromptResult], names: &[String]) -> LongContext {
    let items = long_items(prompts);
    if items.is_empty() {
        return LongContext::default();
    }
    let cells = names
        .iter()
        .flat_map(|name| cells_of(&items, name))
        .collect();
    let pairs = match names.split_first() {
        Some((reference, others)) => others
            .iter()
            .map(|other| pair_of(&items, reference, other))
            .collect(),
        None => Vec::new(),
    };
    LongContext {
        cells,
        pairs,
        token_agreement: None,
    }
}

fn cells_of(items: &[(LongId, &PromptResult)], endpoint: &str) -> Vec<LongCell> {
    let mut by_cell: BTreeMap<(u32, u8), Vec<&AnswerResult>> = BTreeMap::new();
    for (at, p) in items {
        let answers = by_cell.entry((at.tokens, at.depth)).or_default();
        answers.extend(p.answers.get(endpoint));
    }
    by_cell
        .into_iter()
        .map(|((context_tokens, depth), answers)| {
            let graded: Vec<bool> = answers.iter().filter_map(|a| a.correct).collect();
            let correct = graded.iter().filter(|c| **c).count() as u64;
            let measured: Vec<u64> = answers.iter().filter_map(|a| a.prompt_tokens).collect();
            LongCell {
                endpoint: endpoint.to_string(),
                context_tokens,
                depth,
                items: graded.len() as u64,
                correct,
                accuracy: wilson(correct, graded.len() as u64),
                mean_prompt_tokens: (!measured.is_empty())
                    .then(|| measured.iter().sum::<u64>() as f64 / measured.len() as f64),
            }
        })
        .collect()
}

fn pair_of(items: &[(LongId, &PromptResult)], reference: &str, other: &str) -> LongPair {
    let mut buckets: BTreeMap<u32, Paired> = BTreeMap::new();
    let mut first_difference: Option<u64> = None;
    let mut max_prompt_tokens: Option<u64> = None;
    for (at, p) in items {
        let (Some(a), Some(b)) = (p.answers.get(reference), p.answers.get(other)) else {
            continue;
        };
        let (Some(ca), Some(cb)) = (a.correct, b.correct) else {
            continue;
        };
        let measured = a.prompt_tokens.or(b.prompt_tokens);
        max_prompt_tokens = max_prompt_tokens.max(measured);
        if ca != cb {
            if let Some(m) = measured {
                first_difference = Some(first_difference.map_or(m, |f| f.min(m)));
            }
        }
        buckets.entry(at.tokens).or_default().add(ca, cb);
    }
    let mut buckets: Vec<LongBucket> = buckets
        .into_iter()
        .map(|(context_tokens, paired)| LongBucket {
            context_tokens,
            counts: McNemarCounts::of(paired),
            holm_p_value: 1.0,
            different: false,
        })
        .collect();
    let p_values: Vec<f64> = buckets.iter().map(|b| b.counts.p_value).collect();
    for (b, holm) in buckets.iter_mut().zip(holm_adjusted(&p_values)) {
        b.holm_p_value = holm;
        b.different = holm < ALPHA;
    }
    let different_from = buckets.iter().find(|b| b.different);
    let statement = match (different_from, first_difference) {
        (Some(b), _) => format!(
            "differ from {} tokens: {} correct at {reference} only, {} at {other} only (Holm-adjusted exact McNemar p = {}); first differing answer at {} prompt tokens",
            b.context_tokens,
            b.counts.reference_only,
            b.counts.other_only,
            format_p(b.holm_p_value),
            first_difference.map_or("?".to_string(), |t| t.to_string())
        ),
        (None, Some(t)) => format!(
            "answers first differ at {t} prompt tokens, no length differs significantly"
        ),
        (None, None) => format!(
            "no difference up to {} tokens",
            max_prompt_tokens.map_or("?".to_string(), |t| t.to_string())
        ),
    };
    LongPair {
        reference: reference.to_string(),
        other: other.to_string(),
        different_from_tokens: different_from.map(|b| b.context_tokens),
        buckets,
        first_difference_tokens: first_difference,
        max_prompt_tokens,
        statement,
    }
}

/// `answer` with the long items' evidence: a pair that differs significantly at some length
/// makes it `no`, naming the length; otherwise the pairs' reach is stated beside it.
pub fn amend(answer: &mut Answer, long: &LongContext) {
    let several = long.pairs.len() > 1;
    for p in &long.pairs {
        let prefix = if several {
            format!("{}: ", p.other)
        } else {
            String::new()
        };
        if p.different_from_tokens.is_some() {
            answer.answer = SameModel::No;
            answer
                .because
                .insert(0, format!("{prefix}long context: {}", p.statement));
        } else {
            answer
                .because
                .push(format!("{prefix}long context: {}", p.statement));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(id: &str, answers: &[(&str, bool, u64)]) -> PromptResult {
        let mut p: PromptResult = serde_json::from_value(serde_json::json!({
            "id": id, "category": "long_context", "question": "q", "expected": "1", "scorer": "exact",
            "verdict": "same", "pairs": [], "answers": {},
        }))
        .unwrap();
        for (name, correct, tokens) in answers {
            let a: AnswerResult = serde_json::from_value(serde_json::json!({
                "correct": correct, "prompt_tokens": tokens, "reasoning_chars": 0,
                "truncated": false, "repeats_answered": 1, "repeats_planned": 1,
            }))
            .unwrap();
            p.answers.insert(name.to_string(), a);
        }
        p
    }

    fn names() -> Vec<String> {
        vec!["a".into(), "b".into()]
    }

    /// Ten items at 256 and 512 tokens: `b` right only below `break_at` measured tokens.
    fn ladder(break_at: u64) -> Vec<PromptResult> {
        let mut out = Vec::new();
        for (tokens, measured) in [(256, 250), (512, 505)] {
            for i in 0..10 {
                let id = LongId {
                    tokens,
                    depth: (i % 5 * 25) as u8,
                    index: i / 5,
                }
                .id();
                out.push(prompt(
                    &id,
                    &[("a", true, measured), ("b", measured < break_at, measured)],
                ));
            }
        }
        out
    }

    #[test]
    fn a_break_is_put_at_its_length_and_makes_the_answer_no() {
        let long = analyze(&ladder(400), &names());
        assert_eq!(long.cells.len(), 2 * 2 * 5);
        let b512 = long
            .cells
            .iter()
            .find(|c| c.endpoint == "b" && c.context_tokens == 512)
            .unwrap();
        assert_eq!((b512.items, b512.correct), (2, 0));
        let pair = &long.pairs[0];
        assert_eq!(pair.different_from_tokens, Some(512));
        assert_eq!(pair.first_difference_tokens, Some(505));
        assert_eq!(pair.buckets[1].counts.reference_only, 10);
        assert!(pair.buckets[1].different && !pair.buckets[0].different);
        assert_eq!(long.different_pairs(), 1);
        let mut answer = Answer {
            answer: SameModel::Yes,
            because: vec!["fine".into()],
        };
        amend(&mut answer, &long);
        assert_eq!(answer.answer, SameModel::No);
        assert!(
            answer.because[0].contains("differ from 512 tokens"),
            "{:?}",
            answer.because
        );
    }

    #[test]
    fn two_correct_endpoints_read_no_difference_up_to_the_longest_prompt() {
        let long = analyze(&ladder(10_000), &names());
        let pair = &long.pairs[0];
        assert_eq!(pair.first_difference_tokens, None);
        assert_eq!(pair.different_from_tokens, None);
        assert_eq!(pair.statement, "no difference up to 505 tokens");
        let mut answer = Answer {
            answer: SameModel::Yes,
            because: Vec::new(),
        };
        amend(&mut answer, &long);
        assert_eq!(answer.answer, SameModel::Yes);
        assert_eq!(long.different_pairs(), 0);
    }

    #[test]
    fn a_run_without_long_items_has_no_figures() {
        let long = analyze(&[prompt("count_letters", &[("a", true, 9)])], &names());
        assert_eq!(long, LongContext::default());
    }
}
