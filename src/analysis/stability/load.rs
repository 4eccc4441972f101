//! The probe phases' results (`load.jsonl`): every probe scored like a repeat, grouped by
//! endpoint, prompt and condition, then read by `under_load`, `cache_state` and `samples`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cache_state::{self, CacheStateResult, CacheVerdict, CacheVerdictKind};
use super::probe::{ByCondition, Probe};
use super::samples::{self, SampleResult};
use super::under_load::{self, LoadVerdict, LoadVerdictKind, UnderLoad};
use crate::catalogue::Catalogue;
use crate::probes::journal::{merge, LoadRecord};
use crate::run::Line;
use crate::score::{score_completion, ScoreContext};

/// What `determinism --under-load/--cache-states/--samples` found; every field is left out of
/// results.json when empty, so other runs' results are unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadResults {
    /// One row per prompt, endpoint and load level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub under_load: Vec<UnderLoad>,
    /// Per endpoint: batch-invariant, or the smallest load at which answers change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_verdicts: Vec<LoadVerdict>,
    /// One row per prompt, endpoint and cache state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_states: Vec<CacheStateResult>,
    /// Per endpoint: whether answers depend on the prompt cache.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_verdicts: Vec<CacheVerdict>,
    /// `--samples N`: one row per endpoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<SampleResult>,
    /// Probes of these phases whose request failed (sent again on --resume).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub probe_failures: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl LoadResults {
    /// The gate's `changes_at_load`: endpoints whose answers changed under load; None when the
    /// run had no `--under-load` phase.
    pub fn changes_at_load(&self) -> Option<usize> {
        (!self.load_verdicts.is_empty()).then(|| {
            self.load_verdicts
                .iter()
                .filter(|v| v.verdict == LoadVerdictKind::ChangesAtLoad)
                .count()
        })
    }

    /// The gate's `text_changes_at_load`: endpoints where some prompt returned, under load, a
    /// completion it never returned alone (its answer changed or not); None when the run had no
    /// `--under-load` phase.
    pub fn text_changes_at_load(&self) -> Option<usize> {
        (!self.load_verdicts.is_empty()).then(|| {
            self.load_verdicts
                .iter()
                .filter(|v| v.completions_change_at.is_some())
                .count()
        })
    }

    /// The gate's `cache_dependent`: endpoints whose answers depended on the prompt cache; None
    /// when the run had no `--cache-states` phase.
    pub fn cache_dependent(&self) -> Option<usize> {
        (!self.cache_verdicts.is_empty()).then(|| {
            self.cache_verdicts
                .iter()
                .filter(|v| v.verdict == CacheVerdictKind::CacheDependent)
                .count()
        })
    }

    /// One line per verdict, for the summary printed at the end of a run.
    pub fn summary_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .load_verdicts
            .iter()
            .map(|v| format!("under load: {}: {}", v.endpoint, v.statement))
            .collect();
        lines.extend(
            self.cache_verdicts
                .iter()
                .map(|v| format!("cache state: {}: {}", v.endpoint, v.statement)),
        );
        lines.extend(self.samples.iter().map(|s| {
            let tokens = s
                .identical_prefix_tokens
                .map(|t| format!(", {t} tokens"))
                .unwrap_or_default();
            format!(
                "samples: {} on {}: {} completions, {} unique, identical prefix {} chars{tokens}",
                s.prompt, s.endpoint, s.requests, s.unique_completions, s.identical_prefix_chars
            )
        }));
        lines
    }
}

/// Score every probe and read each phase. `endpoints` and `prompts` give the order of the rows.
pub fn analyze_load(
    catalogue: &Catalogue,
    endpoints: &[String],
    prompts: &[String],
    records: &[LoadRecord],
    ctx: &ScoreContext,
) -> LoadResults {
    let mut grouped: BTreeMap<(String, String), ByCondition> = BTreeMap::new();
    let mut probe_failures = 0;
    for ((condition, prompt_id, endpoint, _), r) in merge(records) {
        let Some(prompt) = catalogue.get(&prompt_id) else {
            continue;
        };
        let rec = &r.record;
        probe_failures += usize::from(rec.is_request_failure());
        let key = rec.is_usable().then(|| {
            let answer = rec.scored_text(&prompt.score);
            let cut = rec.completion.finish_reason.as_deref() == Some("length");
            score_completion(&prompt.score, &answer, cut, ctx)
                .extracted
                .unwrap_or_else(|| answer.to_string())
        });
        grouped
            .entry((endpoint, prompt_id))
            .or_default()
            .entry(condition)
            .or_default()
            .push(Probe {
                repeat: rec.repeat,
                key,
                completion: rec
                    .completion
                    .content
                    .as_deref()
                    .unwrap_or_default()
                    .to_string(),
                tokens: rec.completion.token_texts(),
                fillers_at_send: r.fillers_at_send,
            });
    }
    let mut out = LoadResults {
        probe_failures,
        ..LoadResults::default()
    };
    // Endpoints and prompts of the run first, in its order; anything else after, by name.
    let mut order: Vec<(String, String)> = endpoints
        .iter()
        .flat_map(|e| prompts.iter().map(move |p| (e.clone(), p.clone())))
        .filter(|k| grouped.contains_key(k))
        .collect();
    order.extend(
        grouped
            .keys()
            .filter(|k| !order.contains(k))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let mut names: Vec<String> = Vec::new();
    for (e, _) in &order {
        if !names.contains(e) {
            names.push(e.clone());
        }
    }
    for name in &names {
        let per_prompt: Vec<(&str, &ByCondition)> = order
            .iter()
            .filter(|(e, _)| e == name)
            .filter_map(|k| grouped.get(k).map(|g| (k.1.as_str(), g)))
            .collect();
        let (rows, verdict) = under_load::analyze(name, &per_prompt);
        out.under_load.extend(rows);
        out.load_verdicts.extend(verdict);
        let (rows, verdict) = cache_state::analyze(name, &per_prompt);
        out.cache_states.extend(rows);
        out.cache_verdicts.extend(verdict);
        out.samples.extend(samples::analyze(name, &per_prompt));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_verdict(endpoint: &str, verdict: LoadVerdictKind) -> LoadVerdict {
        LoadVerdict {
            endpoint: endpoint.into(),
            verdict,
            changes_at: (verdict == LoadVerdictKind::ChangesAtLoad).then_some(4),
            completions_change_at: None,
            levels: vec![0, 4],
            prompts: 2,
            prompts_changed: 0,
            statement: String::new(),
        }
    }

    fn cache_verdict(endpoint: &str, verdict: CacheVerdictKind) -> CacheVerdict {
        CacheVerdict {
            endpoint: endpoint.into(),
            verdict,
            prompts: 2,
            dependent: Vec::new(),
            completions_dependent: Vec::new(),
            statement: String::new(),
        }
    }

    #[test]
    fn gate_counts_are_endpoints_with_the_verdict_and_undefined_without_the_phase() {
        let none = LoadResults::default();
        assert_eq!(
            (none.changes_at_load(), none.cache_dependent()),
            (None, None)
        );
        let r = LoadResults {
            load_verdicts: vec![
                load_verdict("a", LoadVerdictKind::ChangesAtLoad),
                load_verdict("b", LoadVerdictKind::BatchInvariant),
                load_verdict("c", LoadVerdictKind::VariesAlone),
                load_verdict("d", LoadVerdictKind::ChangesAtLoad),
            ],
            cache_verdicts: vec![
                cache_verdict("a", CacheVerdictKind::CacheIndependent),
                cache_verdict("b", CacheVerdictKind::NoData),
            ],
            ..LoadResults::default()
        };
        assert_eq!(r.changes_at_load(), Some(2));
        assert_eq!(
            r.cache_dependent(),
            Some(0),
            "measured, and none depended on it"
        );
        let cached = LoadResults {
            cache_verdicts: vec![cache_verdict("a", CacheVerdictKind::CacheDependent)],
            ..LoadResults::default()
        };
        assert_eq!(cached.cache_dependent(), Some(1));
        assert_eq!(cached.changes_at_load(), None);
    }
}
