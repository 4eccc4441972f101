//! The long suite's passages under `compare --suite long --logprobs`: each long item's text
//! (its first user message, no chat template) teacher-forced whole as plain text on every
//! endpoint, and once more on the reference as the control (its own noise floor). `forced` sends
//! them with the completions; these are their texts and their lines in `teacher_forcing.jsonl`.

use serde::{Deserialize, Serialize};

use super::align::Predicted;
use super::run::Problem;
use crate::catalogue::Suite;
use crate::catalogue::{PromptRequest, Role};
use crate::run::RunPlan;

/// One long item's passage scored by one endpoint: its tokens in text order, each with the
/// distribution that predicts it (offset applied), so a token's index is its position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredPassage {
    /// The long item's id.
    pub passage: String,
    pub endpoint: String,
    /// The reference's second request of the same passage (the control).
    #[serde(default)]
    pub control: bool,
    /// The first 16 hex digits of the sha256 of the passage.
    pub text_hash: String,
    pub tokens: Vec<Predicted>,
}

/// A passage that could not be scored by one endpoint, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PassageProblem {
    #[serde(default)]
    pub control: bool,
    pub problem: Problem,
}

/// Whether a passage's scoring (its `control` or not) is planned on the endpoint at `index`
/// (0 is the reference): every endpoint scores each passage; the control is the reference's.
pub fn is_planned(index: usize, control: bool) -> bool {
    !control || index == 0
}

/// Every scoring the run plans for `passages` on `endpoints` endpoints, in the order they are
/// sent: each passage on every endpoint, then each once more on the reference (its control).
/// Yields (passage, endpoint index, control).
pub fn planned<P>(passages: &[P], endpoints: usize) -> impl Iterator<Item = (&P, usize, bool)> {
    [false, true].into_iter().flat_map(move |control| {
        passages.iter().flat_map(move |p| {
            (0..endpoints)
                .filter(move |&e| is_planned(e, control))
                .map(move |e| (p, e, control))
        })
    })
}

/// (item id, passage) of every long item in the run's scope, in scope order.
pub fn long_passages(plan: &RunPlan) -> Vec<(String, String)> {
    plan.scope
        .iter()
        .filter(|id| plan.catalogue.suite_of(id) == Some(Suite::Long))
        .filter_map(|id| {
            let text = match &plan.catalogue.get(id)?.request {
                PromptRequest::Chat { messages } => messages
                    .iter()
                    .find(|m| m.role == Role::User)?
                    .content
                    .clone(),
                PromptRequest::Completion { prompt } => prompt.clone(),
            };
            (!text.is_empty()).then(|| (id.clone(), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_passage_is_planned_on_every_endpoint_then_once_more_on_the_reference() {
        let planned: Vec<(&str, usize, bool)> = planned(&["a", "b"], 3)
            .map(|(p, e, control)| (*p, e, control))
            .collect();
        assert_eq!(
            planned,
            vec![
                ("a", 0, false),
                ("a", 1, false),
                ("a", 2, false),
                ("b", 0, false),
                ("b", 1, false),
                ("b", 2, false),
                ("a", 0, true),
                ("b", 0, true),
            ]
        );
        assert!(is_planned(2, false) && is_planned(0, true) && !is_planned(1, true));
        assert_eq!(
            super::planned(&["a"], 0).count(),
            0,
            "no endpoint, nothing sent"
        );
    }
}
