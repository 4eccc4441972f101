//! Cache state: a prompt's answers cold, warm, and behind a shared preamble (cold, then cached),
//! and whether they depend on it. Within a repeat, `cold`/`warm` are the same request, as are
//! `prefix_cold`/`prefix_cached`; a different answer within either pair depends on the cache.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::probe::{histogram, unique_completions, ByCondition, Probe};
use crate::probes::journal::{CacheState, ProbeCondition};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheStateResult {
    pub prompt: String,
    pub endpoint: String,
    pub state: CacheState,
    pub requests: u32,
    pub unique_completions: u32,
    pub histogram: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheVerdictKind {
    /// The same request gave the same answer whatever was cached.
    CacheIndependent,
    /// Some prompt's answer changed with the cache state.
    CacheDependent,
    /// No pair of states was answered.
    NoData,
}

impl CacheVerdictKind {
    pub fn label(self) -> &'static str {
        match self {
            CacheVerdictKind::CacheIndependent => "cache-independent",
            CacheVerdictKind::CacheDependent => "cache-dependent",
            CacheVerdictKind::NoData => "no data",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheVerdict {
    pub endpoint: String,
    pub verdict: CacheVerdictKind,
    /// Prompts with at least one answered pair of states.
    pub prompts: usize,
    /// Prompts whose answer differed within a pair (cold/warm or prefix cold/cached).
    pub dependent: Vec<String>,
    /// Prompts whose completion text differed within a pair.
    pub completions_dependent: Vec<String>,
    pub statement: String,
}

pub fn analyze(
    endpoint: &str,
    prompts: &[(&str, &ByCondition)],
) -> (Vec<CacheStateResult>, Option<CacheVerdict>) {
    let mut rows = Vec::new();
    let (mut judged, mut dependent, mut texts) = (0, Vec::new(), Vec::new());
    for (id, by) in prompts {
        let of = |state| by.get(&ProbeCondition::Cache { state });
        if CacheState::ALL.iter().all(|s| of(*s).is_none()) {
            continue;
        }
        for state in CacheState::ALL {
            if let Some(probes) = of(state) {
                rows.push(CacheStateResult {
                    prompt: id.to_string(),
                    endpoint: endpoint.to_string(),
                    state,
                    requests: probes.len() as u32,
                    unique_completions: unique_completions(probes),
                    histogram: histogram(probes),
                });
            }
        }
        let pairs = [
            (CacheState::Cold, CacheState::Warm),
            (CacheState::PrefixCold, CacheState::PrefixCached),
        ];
        let mut compared = Vec::new();
        for (a, b) in pairs {
            if let (Some(a), Some(b)) = (of(a), of(b)) {
                compared.extend(paired(a, b));
            }
        }
        if compared.is_empty() {
            continue;
        }
        judged += 1;
        if compared.iter().any(|(x, y)| x.key != y.key) {
            dependent.push(id.to_string());
        }
        if compared.iter().any(|(x, y)| x.completion != y.completion) {
            texts.push(id.to_string());
        }
    }
    if rows.is_empty() {
        return (rows, None);
    }
    let verdict = if judged == 0 {
        CacheVerdictKind::NoData
    } else if dependent.is_empty() {
        CacheVerdictKind::CacheIndependent
    } else {
        CacheVerdictKind::CacheDependent
    };
    let statement = match verdict {
        CacheVerdictKind::CacheIndependent if texts.is_empty() => format!(
            "cache-independent: every prompt gave the same completion cold, warm and behind a cached prefix ({judged} prompts)"
        ),
        CacheVerdictKind::CacheIndependent => format!(
            "cache-independent answers ({judged} prompts), but the completion text of {} depends on the cache",
            texts.len()
        ),
        CacheVerdictKind::CacheDependent => format!(
            "cache-dependent: {} of {judged} prompts gave a different answer to the same request depending on what was cached",
            dependent.len()
        ),
        CacheVerdictKind::NoData => "no pair of cache states was answered".to_string(),
    };
    let verdict = CacheVerdict {
        endpoint: endpoint.to_string(),
        verdict,
        prompts: judged,
        dependent,
        completions_dependent: texts,
        statement,
    };
    (rows, Some(verdict))
}

/// The usable probes of the same repeat in two states.
fn paired<'a>(a: &'a [Probe], b: &'a [Probe]) -> Vec<(&'a Probe, &'a Probe)> {
    a.iter()
        .filter(|x| x.key.is_some())
        .filter_map(|x| {
            b.iter()
                .find(|y| y.repeat == x.repeat && y.key.is_some())
                .map(|y| (x, y))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probes(answers: &[&str]) -> Vec<Probe> {
        answers
            .iter()
            .enumerate()
            .map(|(i, a)| Probe {
                repeat: i as u32,
                key: Some(a.to_string()),
                completion: a.to_string(),
                tokens: None,
                fillers_at_send: None,
            })
            .collect()
    }

    fn states(cold: &[&str], warm: &[&str]) -> ByCondition {
        let c = |state| ProbeCondition::Cache { state };
        ByCondition::from([
            (c(CacheState::Cold), probes(cold)),
            (c(CacheState::Warm), probes(warm)),
            (c(CacheState::PrefixCold), probes(warm)),
            (c(CacheState::PrefixCached), probes(warm)),
        ])
    }

    #[test]
    fn a_cold_answer_unlike_the_warm_one_is_cache_dependent() {
        let flaky = states(&["5", "5"], &["3", "3"]);
        let stable = states(&["3", "3"], &["3", "3"]);
        let (rows, v) = analyze("e", &[("a", &flaky), ("b", &stable)]);
        assert_eq!(rows.len(), 8);
        let v = v.unwrap();
        assert_eq!(v.verdict, CacheVerdictKind::CacheDependent);
        assert_eq!(v.dependent, ["a"]);
        let (_, v) = analyze("e", &[("b", &stable)]);
        assert_eq!(v.unwrap().verdict, CacheVerdictKind::CacheIndependent);
    }
}
