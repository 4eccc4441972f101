//! `compare --until-decided`: send the generated items in rounds, score after each, and stop as
//! soon as every endpoint pair's anytime-valid verdict (`analysis/decision.rs`) is `equivalent`
//! or `different` (or the pair serves another tokenizer), or when the cap is reached (the verdict
//! then stays `undecided`). Looking after every round is what the confidence sequence allows: its
//! error rates hold at any stopping time.

use crate::analysis::sequential::SequentialVerdict;
use crate::analysis::Results;
use crate::load::LoadPlan;
use crate::logprobs::template::ChatTemplate;
use crate::run::{Manifest, RunPlan, StoppingRule};

use super::{run_and_score, PipelineError};

/// Run `plan` round after round under `rule`; returns the last round's results and whether
/// sending was interrupted.
pub fn run_until_decided(
    mut plan: RunPlan,
    rule: StoppingRule,
    load: &LoadPlan,
    mut template: Option<ChatTemplate>,
    argv: Vec<String>,
) -> Result<(Results, bool), PipelineError> {
    loop {
        let (results, interrupted) = run_and_score(&plan, load, template.take(), argv.clone())?;
        let items = plan.catalogue.suites.items;
        if interrupted || !results.complete || decided(&results) || items >= rule.max_items {
            return Ok((results, interrupted));
        }
        let next = (items + rule.round_items).min(rule.max_items);
        if !plan.quiet {
            eprintln!(
                "undecided after {items} generated items ({}); sending items {items} to {next} (--max-items {})",
                undecided_pairs(&results),
                rule.max_items
            );
        }
        plan = with_items(plan, next)?;
    }
}

/// Every pair is decided: its sequential verdict is reached, or the two endpoints already count
/// different prompt tokens for the same prompts (another tokenizer or chat template: `same_model`
/// is `no` whatever more items would show). That evidence is deterministic, not a test looked
/// at after each round, so stopping on it costs no error rate; the per-family tests are
/// fixed-sample tests and are not stopped on.
fn decided(results: &Results) -> bool {
    !results.sequential.is_empty()
        && results.sequential.iter().all(|s| {
            s.decision.verdict != SequentialVerdict::Undecided
                || results.parity.iter().any(|p| {
                    p.reference == s.reference
                        && p.other == s.other
                        && p.prompt_tokens_mismatches > 0
                })
        })
}

/// "b: −1.2 points, [−4.0, +1.6]" for each pair still undecided.
fn undecided_pairs(results: &Results) -> String {
    results
        .sequential
        .iter()
        .filter(|s| s.decision.verdict == SequentialVerdict::Undecided)
        .map(|s| {
            format!(
                "{}: {:+.1} points, equivalence bounds [{:+.1}, {:+.1}]",
                s.other,
                s.decision.difference_points,
                s.decision.equivalence_lower_points,
                s.decision.equivalence_upper_points
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The plan of the next round: the run as it now stands (resumed), its generated suite grown to
/// `items`, sending only the new items.
fn with_items(mut plan: RunPlan, items: usize) -> Result<RunPlan, PipelineError> {
    let before = plan.catalogue.prompts.len();
    plan.catalogue = plan.catalogue.with_generated_items(items);
    let added: Vec<String> = plan.catalogue.prompts[before..]
        .iter()
        .map(|p| p.id.clone())
        .collect();
    plan.scope.extend(added.iter().cloned());
    plan.send = added;
    plan.previous = Some(Manifest::read(&plan.dir).map_err(PipelineError::Incomplete)?);
    Ok(plan)
}
