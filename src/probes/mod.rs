//! Batch invariance and cache state: the probe phases `coherence determinism` runs after its
//! repeats when asked (`--under-load`, `--cache-states`, `--samples`). Probes go to `load.jsonl`
//! (resumable like `records.jsonl`); fillers and cache primers are never journalled.
//! The analysis of what they found is `analysis::stability::load`.

mod cache;
pub mod fillers;
pub mod journal;
mod levels;
mod pool;
mod probe;
mod samples;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::catalogue::Prompt;
use crate::engine::Progress;
pub use crate::run::Target;
use crate::run::{RunError, RunPlan};
use crate::run_folder::compare;
use journal::{CacheState, LoadJournal, ProbeCondition, ProbeKey};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadPlan {
    /// Filler requests in flight per level, ascending, starting with 0 (alone); empty: no
    /// load phase.
    pub levels: Vec<u32>,
    pub cache_states: bool,
    /// Completions of the one prompt of the run.
    pub samples: Option<u32>,
    /// Token budget of every filler request.
    pub filler_tokens: u32,
}

impl LoadPlan {
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty() && !self.cache_states && self.samples.is_none()
    }

    pub fn read(dir: &Path) -> anyhow::Result<Option<Self>> {
        let folder = compare::folder(dir);
        if !folder.holds(compare::LOAD_PLAN) {
            return Ok(None);
        }
        folder.read(compare::LOAD_PLAN, "load plan").map(Some)
    }

    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        compare::folder(dir).write_json(compare::LOAD_PLAN, self)
    }

    /// How many of the probes this plan sends to `endpoint` (for `prompts`, in run order, and
    /// `repeats`) are not `answered` (`journal::answered`): a phase stopped part-way leaves them
    /// missing.
    pub fn missing(
        &self,
        endpoint: &str,
        prompts: &[&Prompt],
        repeats: u32,
        answered: &BTreeSet<ProbeKey>,
    ) -> usize {
        let jobs: Vec<levels::ProbeJob> = (0..repeats)
            .flat_map(|r| prompts.iter().map(move |p| (Arc::new((*p).clone()), 0, r)))
            .collect();
        self.unanswered(endpoint, &jobs, answered)
    }

    /// How many of the probes the plan sends to `endpoint` for `jobs` are not `answered`.
    fn unanswered(
        &self,
        endpoint: &str,
        jobs: &[levels::ProbeJob],
        answered: &BTreeSet<ProbeKey>,
    ) -> usize {
        self.keys(endpoint, jobs)
            .iter()
            .filter(|k| !answered.contains(k))
            .count()
    }

    /// Every probe the plan sends to `endpoint`, for progress counts.
    fn keys(&self, endpoint: &str, jobs: &[levels::ProbeJob]) -> Vec<ProbeKey> {
        let mut conditions: Vec<ProbeCondition> = self
            .levels
            .iter()
            .map(|&load| ProbeCondition::Load { load })
            .collect();
        if self.cache_states {
            conditions.extend(CacheState::ALL.map(|state| ProbeCondition::Cache { state }));
        }
        let mut keys: Vec<ProbeKey> = conditions
            .iter()
            .flat_map(|c| {
                jobs.iter()
                    .map(move |(p, _, r)| (*c, p.id.clone(), endpoint.to_string(), *r))
            })
            .collect();
        if let (Some(n), Some((p, _, _))) = (self.samples, jobs.first()) {
            keys.extend((0..n).map(|i| {
                (
                    ProbeCondition::Sample,
                    p.id.clone(),
                    endpoint.to_string(),
                    i,
                )
            }));
        }
        keys
    }
}

/// Run the probe phases on every endpoint in turn: load levels, then cache states, then samples.
/// Returns whether Ctrl-C or SIGTERM stopped it (every probe that returned is journalled).
pub async fn run(plan: &RunPlan, targets: &[Target], load: &LoadPlan) -> Result<bool, RunError> {
    load.write(&plan.dir).map_err(RunError::Folder)?;
    let existing = journal::load(&plan.dir).map_err(RunError::Folder)?;
    let done = journal::answered(&existing.values);
    let mut journal = LoadJournal::open(&plan.dir).map_err(RunError::Folder)?;
    let prompts = plan.prompts_to_send();
    // Repeats interleaved: repeat r of every prompt before repeat r + 1 of any.
    let jobs: Vec<levels::ProbeJob> = (0..plan.repeats)
        .flat_map(|r| {
            prompts
                .iter()
                .map(move |p| (p.clone(), plan.max_tokens_for(p.max_tokens), r))
        })
        .collect();
    let work: Vec<(String, u64)> = targets
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                load.unanswered(&t.name, &jobs, &done) as u64,
            )
        })
        .collect();
    let mut progress = Progress::counting(plan.quiet, &work);
    for s in &existing.skipped {
        progress.note(&format!("warning: {s}"));
    }
    let phases = async {
        for (endpoint, target) in targets.iter().enumerate() {
            let mut probes = probe::Probes {
                target,
                endpoint,
                sampling: &plan.sampling,
                journal: &mut journal,
                progress: &mut progress,
                done: &done,
            };
            if levels::run(&mut probes, &load.levels, &jobs, load.filler_tokens).await? {
                return Ok(true);
            }
            if load.cache_states && cache::run(&mut probes, &jobs).await? {
                return Ok(true);
            }
            if let (Some(n), Some(p)) = (load.samples, prompts.first()) {
                let max_tokens = plan.max_tokens_for(p.max_tokens);
                if samples::run(&mut probes, p, max_tokens, n, plan.concurrency).await? {
                    return Ok(true);
                }
            }
        }
        anyhow::Ok(false)
    };
    let stopped = phases.await;
    progress.finish();
    stopped.map_err(RunError::Send)
}
