//! Calibration of the generated families on the reference (`--difficulty auto`), before any
//! measured item is sent: per family, the adaptive search of `analysis/calibration.rs` asks the
//! reference alone a few items at a time, drawn from the calibration stream
//! (`generator::calibration_item`, never a measured item), until the level nearest the target
//! accuracy is settled (at most 24 requests a family); where half a look's answers were cut at
//! the budget, the family's budget doubles (at most four times its own). Every answer is
//! journalled to `calibration.jsonl`, which nothing compares or counts in a verdict; a resumed
//! run replays it (the search is deterministic in its answers) and goes on where it stopped.
//! Then the run's generated items are made at the chosen levels, families at the floor are left
//! out of what is sent, and the manifest records each family's outcome (`difficulty`).

use std::sync::Arc;

use crate::analysis::behaviour::calibration::{Look, Search, BATCH, MOST_BUDGET_FACTOR};
use crate::catalogue::generator::{self, FamilyLevel, LevelStatus, Levels};
use crate::catalogue::{Prompt, Suite};
use crate::run::journal::{merge, Journal};
use crate::run::record::RecordKey;
use crate::run::{send_jobs, Job, Line, RunError, RunPlan, Session};
use crate::run_folder::compare;
use crate::score::{score_completion, ScoreContext};

/// One family's search and what it has asked so far.
struct Family {
    name: &'static str,
    search: Search,
    /// Calibration items asked so far (the next look asks items `asked..asked + BATCH`).
    asked: usize,
}

impl Family {
    /// The budget of the next look: the family's own at its level, grown by the search.
    fn max_tokens(&self, plan: &RunPlan, level: u8) -> u32 {
        let own = generator::max_tokens(self.name, level);
        plan.max_tokens_for(own) * self.search.budget_factor
    }

    /// The next look's items and budget.
    fn next_look(&self, plan: &RunPlan) -> (Vec<Arc<Prompt>>, u32) {
        let level = self.search.next_level();
        let seed = plan.catalogue.suites.seed;
        let items = (self.asked..self.asked + BATCH)
            .filter_map(|k| generator::calibration_item(seed, self.name, level, k))
            .map(Arc::new)
            .collect();
        (items, self.max_tokens(plan, level))
    }
}

/// Calibrate `plan`'s generated families on the reference, or go on calibrating a resumed run;
/// then remake the generated items at the chosen levels and record them. Returns whether the
/// run stopped before measuring (interrupted, or a calibration request failed): then nothing
/// measured is sent and the run is incomplete.
pub async fn calibrate(plan: &mut RunPlan, session: &mut Session) -> Result<bool, RunError> {
    let Some(target) = plan.calibrate else {
        return Ok(false);
    };
    session.manifest.target_accuracy = Some(target);
    let mut journal =
        Journal::open_kept_in(&plan.dir, compare::CALIBRATION).map_err(RunError::Folder)?;
    let reference = session.targets[0].name.clone();
    let ctx = ScoreContext::for_catalogue(&plan.catalogue.dir);
    let mut families: Vec<Family> = generator::families()
        .map(|name| Family {
            name,
            search: Search::new(target),
            asked: 0,
        })
        .collect();
    let mut first = true;
    loop {
        let looks: Vec<(usize, Vec<Arc<Prompt>>, u32)> = families
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.search.settled())
            .map(|(i, f)| {
                let (items, max_tokens) = f.next_look(plan);
                (i, items, max_tokens)
            })
            .collect();
        if looks.is_empty() {
            break;
        }
        let answered = |journal: &Journal, p: &Prompt, max_tokens: u32| {
            let key = RecordKey {
                prompt: p.id.clone(),
                endpoint: reference.clone(),
                max_tokens,
                repeat: 0,
            };
            merge(journal.kept())
                .get(&key)
                .is_some_and(|(_, r)| !r.is_request_failure())
        };
        let jobs: Vec<Job> = looks
            .iter()
            .flat_map(|(_, items, max_tokens)| items.iter().map(move |p| (p, *max_tokens)))
            .filter(|(p, max_tokens)| !answered(&journal, p, *max_tokens))
            .map(|(p, max_tokens)| Job {
                prompt: p.clone(),
                endpoint: 0,
                max_tokens,
                repeat: 0,
                note: Some("calibration".into()),
            })
            .collect();
        if !jobs.is_empty() {
            let mut notes = Vec::new();
            if std::mem::take(&mut first) {
                notes.push(format!(
                    "calibrating {} generated families on {reference} (target accuracy {:.0}%, at most {} requests a family, never sent to the other endpoints)",
                    looks.len(),
                    target * 100.0,
                    crate::analysis::behaviour::calibration::MOST_REQUESTS
                ));
            }
            let how = crate::run::Sending {
                concurrency: plan.concurrency,
                sampling: &session.manifest.sampling,
                reasoning_retry_budget: 0,
                quiet: plan.quiet,
            };
            let only_reference = &session.targets[..1];
            let execution = send_jobs(jobs, only_reference, &mut journal, &how, &notes)
                .await
                .map_err(RunError::Send)?;
            if execution.interrupted {
                return Ok(true);
            }
        }
        let merged = merge(journal.kept());
        let failed = looks
            .iter()
            .flat_map(|(_, items, max_tokens)| items.iter().map(move |p| (p, *max_tokens)))
            .filter(|(p, max_tokens)| !answered(&journal, p, *max_tokens))
            .count();
        if failed > 0 {
            // A failed request says nothing of the level: calibration stops, and the run with
            // it, before anything is measured (`--resume` sends the failed requests again).
            if !plan.quiet {
                eprintln!(
                    "calibration: {failed} requests to {reference} failed; nothing measured was sent (continue with --resume)"
                );
            }
            return Ok(true);
        }
        for (i, items, max_tokens) in looks {
            let family = &mut families[i];
            for p in &items {
                let key = RecordKey {
                    prompt: p.id.clone(),
                    endpoint: reference.clone(),
                    max_tokens,
                    repeat: 0,
                };
                let record = merged.get(&key).map(|(_, r)| *r);
                // Every item of the look has a response (checked above); one without an answer
                // to score (an error the server sent back as a result) is not right.
                let (right, cut) = match record.filter(|r| r.is_usable()) {
                    Some(r) => {
                        let cut = r.completion.finish_reason.as_deref() == Some("length");
                        let text = r.scored_text(&p.score);
                        let score = score_completion(&p.score, &text, cut, &ctx);
                        (score.correct == Some(true), cut)
                    }
                    None => (false, false),
                };
                family.search.add(Look {
                    level: generator::difficulty(p).unwrap_or(1),
                    right,
                    cut,
                });
            }
            family.asked += items.len();
            if family.search.cut_share(items.len()) >= 0.5
                && family.search.budget_factor < MOST_BUDGET_FACTOR
            {
                family.search.budget_factor *= 2;
            }
        }
    }
    let seed = plan.catalogue.suites.seed;
    let outcomes: Vec<FamilyLevel> = families
        .iter()
        .map(|f| {
            let constant_share = generator::constant_share(seed, f.name, generator::LOWEST);
            let (level, status) = f.search.outcome(constant_share);
            FamilyLevel {
                family: f.name.to_string(),
                level,
                status,
                requests: f.search.requests(),
                right: f.search.right(),
                at_level: f
                    .search
                    .observed(level)
                    .map_or((0, 0), |(right, n)| (n, right)),
                constant_share,
                max_tokens: f.max_tokens(plan, level),
            }
        })
        .collect();
    apply(plan, &outcomes);
    session.manifest.difficulty = outcomes;
    session.widen(plan)?;
    Ok(false)
}

/// The run's generated items remade at the levels of `outcomes`, with their budgets; the items
/// of families at the floor left out of what is sent.
pub fn apply(plan: &mut RunPlan, outcomes: &[FamilyLevel]) {
    let mut levels = Levels::default();
    for o in outcomes {
        levels.set(&o.family, o.level);
        if o.max_tokens != plan.max_tokens_for(generator::max_tokens(&o.family, o.level)) {
            levels.set_max_tokens(&o.family, o.max_tokens);
        }
    }
    plan.catalogue.set_levels(levels);
    let catalogue = &plan.catalogue;
    let kept = |id: &String| !at_floor(outcomes, catalogue.get(id));
    plan.scope.retain(kept);
    plan.send.retain(kept);
}

/// Whether `prompt` is a generated item of a family `outcomes` put at the floor.
pub fn at_floor(outcomes: &[FamilyLevel], prompt: Option<&Prompt>) -> bool {
    prompt.is_some_and(|p| {
        p.suite == Suite::Generated
            && outcomes
                .iter()
                .any(|o| o.status == LevelStatus::Floor && o.family == p.category)
    })
}
