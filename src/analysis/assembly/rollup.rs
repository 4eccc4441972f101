//! Aggregates over prompts: paired statistics per endpoint pair, endpoint summaries, category rollups.

use std::collections::{BTreeMap, BTreeSet};

use super::results::{CategoryRollup, Summary};
use crate::analysis::answers::figures::{
    AnswerResult, CodeAnswers, EndpointSummary, PairStatistics, PairedCounts, PromptResult,
};
use crate::analysis::answers::stats::Paired;
use crate::analysis::answers::stats::{format_p, wilson};
use crate::catalogue::CATEGORIES;
use crate::run::record::Answered;
use crate::run::EndpointInfo;

pub fn pair_statistics(prompts: &[PromptResult], reference: &str, other: &str) -> PairStatistics {
    let count = |category: Option<&str>| {
        let mut paired = Paired::default();
        for p in prompts
            .iter()
            .filter(|p| category.is_none_or(|cat| p.category == cat))
        {
            if let (Some(a), Some(b)) = (
                p.answers.get(reference).and_then(|a| a.correct),
                p.answers.get(other).and_then(|a| a.correct),
            ) {
                paired.add(a, b);
            }
        }
        let mut c = PairedCounts::of(category, paired);
        c.statement = statement(&c, reference, other);
        c
    };
    let categories: BTreeSet<&str> = prompts.iter().map(|p| p.category.as_str()).collect();
    let mut ordered: Vec<&str> = CATEGORIES
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| categories.contains(c))
        .collect();
    ordered.extend(
        categories
            .iter()
            .filter(|c| !CATEGORIES.iter().any(|(k, _)| k == *c)),
    );
    PairStatistics {
        reference: reference.to_string(),
        other: other.to_string(),
        overall: count(None),
        categories: ordered.into_iter().map(|c| count(Some(c))).collect(),
    }
}

/// "counting_traps: full right and spark wrong on 10 of 13, the reverse on 0; p = 0.002: a systemic deficit of spark".
fn statement(c: &PairedCounts, reference: &str, other: &str) -> String {
    let scope = c.category.as_deref().unwrap_or("all prompts");
    let p = format!("p = {}", format_p(c.counts.p_value));
    let conclusion = if c.counts.reference_only + c.counts.other_only == 0 {
        "no disagreement".to_string()
    } else if c.counts.p_value < 0.05 {
        let worse = if c.counts.reference_only > c.counts.other_only {
            other
        } else {
            reference
        };
        format!("a systemic deficit of {worse}")
    } else {
        "not significant (could be chance)".to_string()
    };
    format!(
        "{scope}: {reference} right and {other} wrong on {} of {}, the reverse on {}; {p}: {conclusion}",
        c.counts.reference_only, c.counts.graded, c.counts.other_only
    )
}

pub fn endpoint_summary(
    e: &EndpointInfo,
    records: &[Answered],
    prompts: &[PromptResult],
) -> EndpointSummary {
    let mine = || records.iter().filter(|r| *r.endpoint == *e.spec.name);
    let distinct = |f: fn(&Answered) -> Option<&String>| -> Vec<String> {
        mine()
            .filter_map(f)
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let mut servers: BTreeSet<String> = mine()
        .filter_map(|r| r.server.as_deref().map(str::to_string))
        .collect();
    servers.extend(e.models.as_ref().and_then(|m| m.server.clone()));
    let mut s = EndpointSummary {
        name: e.spec.name.clone(),
        base_url: e.spec.base_url.clone(),
        model: e.spec.model.clone(),
        listed_models: e.models.as_ref().map(|m| m.ids.clone()).unwrap_or_default(),
        max_model_len: e.models.as_ref().and_then(|m| m.max_model_len),
        served_models: distinct(|r| r.completion.model.as_ref()),
        system_fingerprints: distinct(|r| r.completion.system_fingerprint.as_ref()),
        servers: servers.into_iter().collect(),
        correct: 0,
        wrong: 0,
        ungraded: 0,
        failed: 0,
        accuracy: wilson(0, 0),
        determinism: BTreeMap::new(),
        mean_completion_tokens: None,
        answers: 0,
        cut_off: 0,
        reasoning_retries: 0,
        code_answers: None,
    };
    let mut code = CodeAnswers::default();
    let mut tokens = Vec::new();
    for p in prompts {
        let Some(a) = p.answers.get(&e.spec.name) else {
            continue;
        };
        if a.error.is_some() {
            s.failed += 1;
        } else {
            if p.scorer == "js" {
                code.add(a.code);
            }
            match a.correct {
                Some(true) => s.correct += 1,
                Some(false) => s.wrong += 1,
                None => s.ungraded += 1,
            }
            tokens.extend(a.completion_tokens);
            let (answers, cut) = cut_off_repeats(a);
            s.answers += answers;
            s.cut_off += cut;
        }
        if a.note.is_some() {
            s.reasoning_retries += 1;
        }
        if let Some(d) = &a.determinism {
            *s.determinism
                .entry(d.class.label().to_string())
                .or_default() += 1;
        }
    }
    s.accuracy = wilson(s.correct as u64, (s.correct + s.wrong) as u64);
    s.code_answers = (code.scored > 0).then_some(code);
    s.mean_completion_tokens =
        (!tokens.is_empty()).then(|| tokens.iter().sum::<u64>() as f64 / tokens.len() as f64);
    s
}

/// An answer's usable repeats (the answer itself with one repeat) and how many of them were cut
/// off at the budget.
fn cut_off_repeats(a: &AnswerResult) -> (usize, usize) {
    if a.repeats.is_empty() {
        return (1, usize::from(a.truncated));
    }
    let usable = a.repeats.iter().filter(|r| r.answer.is_some());
    let cut = usable.clone().filter(|r| r.truncated).count();
    (usable.count(), cut)
}

pub fn rollup(prompts: &[PromptResult], names: &[String]) -> Vec<CategoryRollup> {
    let mut order: Vec<String> = CATEGORIES.iter().map(|(c, _)| c.to_string()).collect();
    for p in prompts {
        if !order.contains(&p.category) {
            order.push(p.category.clone());
        }
    }
    order
        .into_iter()
        .filter_map(|cat| {
            let in_cat: Vec<&PromptResult> = prompts.iter().filter(|p| p.category == cat).collect();
            if in_cat.is_empty() {
                return None;
            }
            let mut summary = Summary::default();
            let mut correct: BTreeMap<String, usize> =
                names.iter().map(|n| (n.clone(), 0)).collect();
            for p in &in_cat {
                summary.add(p);
                for (name, a) in &p.answers {
                    if a.correct == Some(true) {
                        *correct.entry(name.clone()).or_default() += 1;
                    }
                }
            }
            Some(CategoryRollup {
                category: cat,
                prompts: in_cat.len(),
                summary,
                correct,
            })
        })
        .collect()
}
