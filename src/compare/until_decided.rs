//! A run sent in rounds until it is decided, on either axis. `compare --until-decided` sends the
//! generated items in rounds and stops growing them as soon as every endpoint pair's
//! anytime-valid verdict (`analysis/behaviour/decision.rs`) is `equivalent` or `different` (or the pair
//! serves another tokenizer), or when the cap is reached (the verdict then stays `undecided`).
//! `--control auto` grows the reference's A-vs-A control the same way until identity is decided
//! (`control.rs`); a round sends whatever either axis still asks for, interleaved. Looking after
//! every round is what the anytime-valid tests allow: their error rates hold at any stopping
//! time. One run session sends every round (the endpoints are asked for their models once); a
//! round scores only its own answers (`analysis::Rounds`); the run is scored and reported once,
//! when it ends or is stopped.

use crate::analysis::{Results, Rounds};
use crate::catalogue::generator::FamilyLevel;
use crate::logprobs::template::ChatTemplate;
use crate::probes::LoadPlan;
use crate::run::{pending_jobs, Execution, RunPlan, Session};

use super::{after_sending, calibrate, control, runtime, PipelineError};

/// Run `plan` round after round (its `--until-decided` rule and growing control); returns the
/// results and whether sending was interrupted.
pub fn run_until_decided(
    mut plan: RunPlan,
    load: &LoadPlan,
    template: Option<ChatTemplate>,
    argv: Vec<String>,
) -> Result<(Results, bool), PipelineError> {
    let rt = runtime().map_err(PipelineError::Input)?;
    let mut session = rt.block_on(Session::open(&plan, argv))?;
    if rt.block_on(calibrate::calibrate(&mut plan, &mut session))? {
        let outcome = session.finish(Execution {
            sent: 0,
            interrupted: true,
        })?;
        return after_sending(&rt, &plan, outcome, load, template);
    }
    let mut rounds = Rounds::new(session.manifest.endpoint_names(), plan.margin);
    let mut round = plan.scope.clone();
    let execution = loop {
        let execution = rt.block_on(session.send_missing(&plan))?;
        if execution.interrupted {
            break execution;
        }
        let more_items = plan.until_decided.and_then(|rule| {
            rounds.add(
                &session.manifest,
                &plan.catalogue,
                &round,
                session.records(),
            );
            let items = plan.catalogue.suites.items;
            if session.manifest.looks.last() != Some(&items) {
                session.manifest.looks.push(items);
            }
            if !rounds.complete() || rounds.decided() || items >= rule.max_items {
                return None;
            }
            let next = (items + rule.round_items).min(rule.max_items);
            if !plan.quiet {
                eprintln!(
                    "undecided after {items} generated items ({}); sending items {items} to {next} (--max-items {})",
                    rounds.undecided_pairs(),
                    rule.max_items
                );
            }
            Some(next)
        });
        let complete = pending_jobs(&plan, session.records()).is_empty();
        control::record_look(&plan, &mut session.manifest);
        let more_control = control::look(&plan, &session.manifest, session.records(), complete);
        if more_items.is_none() && more_control.is_none() {
            break execution;
        }
        round = match more_items {
            Some(items) => grow(&mut plan, items, &session.manifest.difficulty),
            None => Vec::new(),
        };
        plan.send = round.clone();
        if let Some(size) = more_control {
            plan.control = size;
        }
        session.widen(&plan)?;
    };
    let outcome = session.finish(execution)?;
    after_sending(&rt, &plan, outcome, load, template)
}

/// Grow the run's generated suite to `items` (at its calibrated levels): the scope takes the new
/// items of the families calibration did not put at the floor, which it returns.
fn grow(plan: &mut RunPlan, items: usize, difficulty: &[FamilyLevel]) -> Vec<String> {
    let before = plan.catalogue.prompts.len();
    plan.catalogue.set_generated_items(items);
    let added: Vec<String> = plan.catalogue.prompts[before..]
        .iter()
        .filter(|p| !calibrate::at_floor(difficulty, Some(p)))
        .map(|p| p.id.clone())
        .collect();
    plan.scope.extend(added.iter().cloned());
    added
}
