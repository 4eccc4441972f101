//! Roll-ups of the per-prompt results over the whole run: the verdict summary, paired statistics
//! and quality per pair, each endpoint's summary and stability, identity, parity, token
//! divergences, categories, the budgets answers were read at, and the back-to-back warning.

use std::collections::BTreeMap;

use super::results::{CategoryRollup, Summary};
use super::rollup::{endpoint_summary, pair_statistics, rollup};
use crate::analysis::answers::determinism::Class;
use crate::analysis::answers::figures::{
    EndpointSummary, Identity, PairStatistics, Parity, PromptResult, Stability,
    TokenDivergenceCounts,
};
use crate::analysis::answers::noise::Difference;
use crate::analysis::answers::token_divergence;
use crate::analysis::behaviour::families::{self, family_verdicts, GradedItem, PairFamilies};
use crate::analysis::behaviour::quality::{self, Quality};
use crate::analysis::identity::parity;
use crate::analysis::stability::overview;
use crate::catalogue::Catalogue;
use crate::run::record::Answered;
use crate::run::Manifest;

/// Everything results.json says about the run as a whole that follows from its prompts.
pub struct RunFigures {
    pub summary: Summary,
    pub nondeterministic: usize,
    pub deployment_differences: usize,
    pub endpoints: Vec<EndpointSummary>,
    pub categories: Vec<CategoryRollup>,
    pub quality: Vec<Quality>,
    pub stability: Vec<Stability>,
    pub identity: Vec<Identity>,
    pub parity: Vec<Parity>,
    pub token_divergences: Vec<TokenDivergenceCounts>,
    pub statistics: Vec<PairStatistics>,
}

/// Roll the prompts up; `names` are the endpoints, the reference first.
pub fn roll_up(
    prompts: &[PromptResult],
    manifest: &Manifest,
    records: &[Answered],
    names: &[String],
    margin: f64,
) -> RunFigures {
    let reference = names.first().map(String::as_str).unwrap_or_default();
    let others = names.iter().skip(1);
    let mut summary = Summary::default();
    for p in prompts {
        summary.add(p);
    }
    let statistics: Vec<PairStatistics> = others
        .clone()
        .map(|other| pair_statistics(prompts, reference, other))
        .collect();
    RunFigures {
        summary,
        nondeterministic: nondeterministic(prompts),
        deployment_differences: deployment_differences(prompts),
        endpoints: manifest
            .endpoints
            .iter()
            .map(|e| endpoint_summary(e, records, prompts))
            .collect(),
        categories: rollup(prompts, names),
        quality: statistics.iter().map(|s| quality_of(s, margin)).collect(),
        stability: names
            .iter()
            .map(|n| overview::stability(prompts, n, manifest.repeats_of(n)))
            .collect(),
        identity: others
            .clone()
            .map(|o| overview::identity(prompts, reference, o))
            .collect(),
        parity: others
            .clone()
            .map(|o| parity::parity(prompts, reference, o))
            .collect(),
        token_divergences: others
            .map(|o| token_divergence::counts(prompts, reference, o))
            .filter(|c| c.overall.near_tie + c.overall.substantive > 0)
            .collect(),
        statistics,
    }
}

/// Prompt-endpoint pairs whose repeats gave different answers.
fn nondeterministic(prompts: &[PromptResult]) -> usize {
    prompts
        .iter()
        .flat_map(|p| p.answers.values())
        .filter(|a| {
            a.determinism
                .as_ref()
                .is_some_and(|d| d.class == Class::Nondeterministic)
        })
        .count()
}

/// Prompts where some pair reads as a deployment difference, not sampler noise.
fn deployment_differences(prompts: &[PromptResult]) -> usize {
    prompts
        .iter()
        .filter(|p| {
            p.pairs
                .iter()
                .any(|x| x.difference == Some(Difference::DeploymentDifference))
        })
        .count()
}

/// The quality verdict of one pair from its paired counts.
fn quality_of(s: &PairStatistics, margin: f64) -> Quality {
    quality::assess(&s.reference, &s.other, s.overall.counts.paired(), margin)
}

/// Answers read at a budget other than the run's rule gives their prompt (a re-run at another
/// `--max-tokens`, a reasoning retry), counted per budget.
pub fn other_budgets(
    catalogue: &Catalogue,
    manifest: &Manifest,
    prompts: &[PromptResult],
) -> BTreeMap<u32, usize> {
    let sampling = &manifest.sampling;
    let mut budgets = BTreeMap::new();
    for p in prompts {
        let own = catalogue.get(&p.id).and_then(|c| c.max_tokens);
        let rule = sampling
            .max_tokens_override
            .or(own)
            .unwrap_or(sampling.default_max_tokens);
        for b in p.answers.values().filter_map(|a| a.max_tokens) {
            if b != rule {
                *budgets.entry(b).or_default() += 1;
            }
        }
    }
    budgets
}

/// A warning when most repeats were sent right after the previous repeat of the same prompt: a
/// server that reuses its prompt cache then answers the later repeats warm, so the repeats
/// understate the reference's own noise.
pub fn back_to_back_warning(prompts: &[PromptResult]) -> Option<String> {
    let (mut later, mut after_self) = (0usize, 0usize);
    for p in prompts {
        for r in p
            .answers
            .values()
            .flat_map(|a| &a.repeats)
            .filter(|r| r.repeat > 0)
        {
            later += 1;
            after_self += usize::from(r.after.as_deref() == Some(p.id.as_str()));
        }
    }
    (later > 0 && after_self * 2 > later).then(|| {
        format!(
            "{after_self} of {later} repeats were sent right after the previous repeat of the same \
             prompt (back to back): a server that reuses its prompt cache answers them warm, so \
             stability and sampler noise are measured optimistically; the default \
             --repeat-order interleaved avoids it"
        )
    })
}

/// The family verdicts of one pair from its per-category paired counts, at α = 0.05, each with
/// its floor and both endpoints' most common answers over the items both answered with ground
/// truth; `expected` gives a prompt's one right answer, where it has one.
pub fn pair_families(
    statistics: &PairStatistics,
    prompts: &[PromptResult],
    expected: impl Fn(&PromptResult) -> Option<String>,
) -> PairFamilies {
    let (reference, other) = (&statistics.reference, &statistics.other);
    let families = statistics
        .categories
        .iter()
        .map(|c| (c.category.clone().unwrap_or_default(), c.counts.paired()));
    let mut verdicts = family_verdicts(families, families::ALPHA);
    for family in &mut verdicts.families {
        let graded: Vec<GradedItem> = prompts
            .iter()
            .filter(|p| p.category == family.family)
            .filter_map(|p| {
                let read = |name: &str| p.answers.get(name).filter(|a| a.correct.is_some());
                let (r, o) = (read(reference)?, read(other)?);
                Some(GradedItem {
                    expected: expected(p),
                    reference: r.extracted.clone(),
                    other: o.extracted.clone(),
                })
            })
            .collect();
        family.add_answers(&graded);
    }
    PairFamilies {
        reference: reference.clone(),
        other: other.clone(),
        verdicts,
    }
}
