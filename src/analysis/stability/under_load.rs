//! Batch invariance: a prompt's answers at each load level against the same prompt sent alone
//! (load 0), and the endpoint's verdict: the smallest load at which an answer appears that the
//! prompt never gave alone; else, when answers hold but a completion appears that the prompt
//! never returned alone, text that changes with load (batch non-invariance in text); else
//! batch-invariant.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::probe::{histogram, unique_completions, ByCondition, Probe};
use crate::analysis::answers::divergence::{first_divergence, Divergence};
use crate::probes::journal::ProbeCondition;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnderLoad {
    pub prompt: String,
    pub endpoint: String,
    /// Filler requests kept in flight while the probes ran (0: alone).
    pub load: u32,
    pub requests: u32,
    pub unique_completions: u32,
    /// How often each answer came back; failures count as "(fail)".
    pub histogram: BTreeMap<String, u32>,
    /// An answer the prompt never gave alone came back at this load.
    pub changed: bool,
    /// Distinct completions never returned alone.
    pub new_completions: u32,
    /// Load 0: where its repeats first differ; above: where the first completion that differs
    /// from the first one returned alone departs from it.
    pub first_divergence: Option<Divergence>,
    /// Mean fillers in flight (as the client counted them) when each probe was sent.
    pub fillers_in_flight: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadVerdictKind {
    /// No answer changed at any load.
    BatchInvariant,
    /// Some answer changed at `changes_at`.
    ChangesAtLoad,
    /// No answer changed, but some completion text did at `completions_change_at`: the text
    /// changes with load (batch non-invariance), the extracted answers do not.
    TextChangesAtLoad,
    /// Answers vary even alone, and load brings no answer not seen alone.
    VariesAlone,
    /// No probe sent alone was answered.
    NoData,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadVerdict {
    pub endpoint: String,
    pub verdict: LoadVerdictKind,
    /// The smallest load at which some prompt gave an answer it never gave alone.
    pub changes_at: Option<u32>,
    /// The smallest load at which some prompt returned a completion it never returned alone.
    pub completions_change_at: Option<u32>,
    pub levels: Vec<u32>,
    pub prompts: usize,
    /// Prompts whose answers changed at some load.
    pub prompts_changed: usize,
    /// In words, e.g. "batch-invariant: no answer changed at load 4 or 16 (5 prompts)".
    pub statement: String,
}

impl LoadVerdict {
    /// "batch-invariant", "changes at load 4" or "text changes at load 4".
    pub fn label(&self) -> String {
        match (self.verdict, self.changes_at) {
            (LoadVerdictKind::ChangesAtLoad, Some(k)) => format!("changes at load {k}"),
            (LoadVerdictKind::TextChangesAtLoad, _) => match self.completions_change_at {
                Some(k) => format!("text changes at load {k}"),
                None => "text changes under load".into(),
            },
            (LoadVerdictKind::BatchInvariant, _) => "batch-invariant".into(),
            (LoadVerdictKind::VariesAlone, _) => "varies alone".into(),
            _ => "no data".into(),
        }
    }
}

pub fn analyze(
    endpoint: &str,
    prompts: &[(&str, &ByCondition)],
) -> (Vec<UnderLoad>, Option<LoadVerdict>) {
    let mut rows = Vec::new();
    let mut levels: BTreeSet<u32> = BTreeSet::new();
    let (mut judged, mut varies_alone) = (0, false);
    let (mut changed_prompts, mut text_changed_prompts) = (BTreeSet::new(), BTreeSet::new());
    let (mut changes_at, mut completions_change_at): (Option<u32>, Option<u32>) = (None, None);
    for (id, by) in prompts {
        let at: Vec<(u32, &Vec<Probe>)> = by
            .iter()
            .filter_map(|(c, p)| match c {
                ProbeCondition::Load { load } => Some((*load, p)),
                _ => None,
            })
            .collect();
        if at.is_empty() {
            continue;
        }
        let alone: Vec<&Probe> = at
            .iter()
            .filter(|(l, _)| *l == 0)
            .flat_map(|(_, p)| p.iter())
            .filter(|p| p.key.is_some())
            .collect();
        let alone_answers: BTreeSet<&str> = alone.iter().filter_map(|p| p.key.as_deref()).collect();
        let alone_texts: BTreeSet<&str> = alone.iter().map(|p| p.completion.as_str()).collect();
        if !alone.is_empty() {
            judged += 1;
        }
        varies_alone |= alone_answers.len() > 1;
        let reference = alone.first();
        for (load, probes) in at {
            levels.insert(load);
            let usable: Vec<&Probe> = probes.iter().filter(|p| p.key.is_some()).collect();
            let changed = load > 0
                && !alone.is_empty()
                && usable
                    .iter()
                    .any(|p| !alone_answers.contains(p.key.as_deref().unwrap_or_default()));
            let new_texts: BTreeSet<&str> = usable
                .iter()
                .map(|p| p.completion.as_str())
                .filter(|t| load > 0 && !alone.is_empty() && !alone_texts.contains(t))
                .collect();
            if changed {
                changed_prompts.insert(id.to_string());
                changes_at = Some(changes_at.map_or(load, |c| c.min(load)));
            }
            if !new_texts.is_empty() {
                text_changed_prompts.insert(id.to_string());
                completions_change_at = Some(completions_change_at.map_or(load, |c| c.min(load)));
            }
            let base = if load == 0 { usable.first() } else { reference };
            let first = base.and_then(|b| {
                usable.iter().find_map(|p| {
                    first_divergence(&b.completion, &p.completion, b.tokens.as_deref())
                })
            });
            let in_flight: Vec<f64> = probes
                .iter()
                .filter_map(|p| p.fillers_at_send.map(f64::from))
                .collect();
            rows.push(UnderLoad {
                prompt: id.to_string(),
                endpoint: endpoint.to_string(),
                load,
                requests: probes.len() as u32,
                unique_completions: unique_completions(probes),
                histogram: histogram(probes),
                changed,
                new_completions: new_texts.len() as u32,
                first_divergence: first,
                fillers_in_flight: (!in_flight.is_empty())
                    .then(|| in_flight.iter().sum::<f64>() / in_flight.len() as f64),
            });
        }
    }
    if rows.is_empty() {
        return (rows, None);
    }
    let levels: Vec<u32> = levels.into_iter().collect();
    let loaded: Vec<String> = levels
        .iter()
        .filter(|l| **l > 0)
        .map(u32::to_string)
        .collect();
    let verdict = if judged == 0 {
        LoadVerdictKind::NoData
    } else if changes_at.is_some() {
        LoadVerdictKind::ChangesAtLoad
    } else if varies_alone {
        LoadVerdictKind::VariesAlone
    } else if completions_change_at.is_some() {
        LoadVerdictKind::TextChangesAtLoad
    } else {
        LoadVerdictKind::BatchInvariant
    };
    let statement = match verdict {
        LoadVerdictKind::BatchInvariant => format!(
            "batch-invariant: no answer changed at load {} ({judged} prompts)",
            loaded.join(", ")
        ),
        LoadVerdictKind::ChangesAtLoad => format!(
            "answers change at load {}: {} of {judged} prompts gave an answer they never gave alone",
            changes_at.unwrap_or_default(),
            changed_prompts.len()
        ),
        LoadVerdictKind::TextChangesAtLoad => format!(
            "not batch-invariant: the text changes with load from load {}: {} of {judged} prompts \
             returned completions they never returned alone, though no extracted answer changed",
            completions_change_at.unwrap_or_default(),
            text_changed_prompts.len()
        ),
        LoadVerdictKind::VariesAlone => format!(
            "answers vary even alone; load {} brought no answer not seen alone ({judged} prompts)",
            loaded.join(", ")
        ),
        LoadVerdictKind::NoData => "no probe sent alone was answered".to_string(),
    };
    let verdict = LoadVerdict {
        endpoint: endpoint.to_string(),
        verdict,
        changes_at,
        completions_change_at,
        levels,
        prompts: judged,
        prompts_changed: changed_prompts.len(),
        statement,
    };
    (rows, Some(verdict))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(repeat: u32, answer: &str) -> Probe {
        Probe {
            repeat,
            key: Some(answer.into()),
            completion: format!("The answer is {answer}."),
            tokens: None,
            fillers_at_send: None,
        }
    }

    fn by(levels: &[(u32, &[&str])]) -> ByCondition {
        levels
            .iter()
            .map(|(load, answers)| {
                (
                    ProbeCondition::Load { load: *load },
                    answers
                        .iter()
                        .enumerate()
                        .map(|(i, a)| probe(i as u32, a))
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn the_smallest_load_with_a_new_answer_is_the_verdict() {
        let a = by(&[(0, &["3", "3"]), (4, &["3", "5"]), (16, &["5", "5"])]);
        let b = by(&[(0, &["7", "7"]), (4, &["7", "7"]), (16, &["8", "7"])]);
        let (rows, v) = analyze("e", &[("a", &a), ("b", &b)]);
        let v = v.unwrap();
        assert_eq!(v.verdict, LoadVerdictKind::ChangesAtLoad);
        assert_eq!(v.changes_at, Some(4));
        assert_eq!(v.prompts_changed, 2);
        assert_eq!(v.label(), "changes at load 4");
        let a4 = &rows[1];
        assert_eq!((a4.load, a4.changed, a4.new_completions), (4, true, 1));
        assert_eq!(a4.first_divergence.as_ref().unwrap().char_offset, 14);
        assert!(!rows[0].changed);
    }

    #[test]
    fn stable_answers_are_batch_invariant_and_alone_noise_is_not_load() {
        let a = by(&[(0, &["3", "3"]), (4, &["3", "3"])]);
        let (_, v) = analyze("e", &[("a", &a)]);
        assert_eq!(v.unwrap().verdict, LoadVerdictKind::BatchInvariant);
        let noisy = by(&[(0, &["3", "5"]), (4, &["5", "3"])]);
        let (_, v) = analyze("e", &[("a", &noisy)]);
        assert_eq!(v.unwrap().verdict, LoadVerdictKind::VariesAlone);
        assert!(analyze("e", &[]).1.is_none());
    }
}
