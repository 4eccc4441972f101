//! The long suite's passages under `compare --suite long --logprobs`: each long item's text
//! (its first user message, no chat template) teacher-forced whole as plain text on every
//! endpoint, and once more on the reference as the control (its own noise floor). `forced` sends
//! them with the completions; these are their texts and their lines in `teacher_forcing.jsonl`.

use serde::{Deserialize, Serialize};

use super::align::Predicted;
use super::run::Problem;
use crate::catalogue::long::is_long;
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

/// (item id, passage) of every long item in the run's scope, in scope order.
pub fn long_passages(plan: &RunPlan) -> Vec<(String, String)> {
    plan.scope
        .iter()
        .filter(|id| is_long(id))
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
