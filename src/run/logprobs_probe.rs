//! Whether decode logprobs cost nothing on these endpoints: before a new run, each endpoint
//! answers the run's first prompts twice, without and with `logprobs`, at a small budget. They
//! are requested for the whole run only when every endpoint returned them and gave the same
//! greedy text both ways (a server whose sampling path changes with logprobs would otherwise
//! have its answers changed by the measurement); the finding is kept in the manifest.

use std::sync::Arc;

use super::executor::{send, Job, Target};
use super::manifest::Sampling;
use crate::catalogue::Prompt;

/// Prompts each endpoint answers both ways.
pub const PROBE_PROMPTS: usize = 2;
/// The probe's budget: enough tokens for a sampling path to show a difference.
const PROBE_TOKENS: u32 = 48;

/// Whether to request decode logprobs, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub on: bool,
    pub note: String,
}

/// Probe `targets` with the first chat prompts of `prompts` under `sampling`.
pub async fn probe(targets: &[Target], prompts: &[Arc<Prompt>], sampling: &Sampling) -> Finding {
    let chosen: Vec<&Arc<Prompt>> = prompts
        .iter()
        .filter(|p| p.tool_use.is_none())
        .take(PROBE_PROMPTS)
        .collect();
    if chosen.is_empty() {
        return off("no prompt to probe with".to_string());
    }
    let with = Sampling {
        logprobs: true,
        ..sampling.clone()
    };
    let without = Sampling {
        logprobs: false,
        ..sampling.clone()
    };
    for target in targets {
        for prompt in &chosen {
            let job = Job {
                prompt: Arc::clone(prompt),
                endpoint: 0,
                max_tokens: PROBE_TOKENS,
                repeat: 0,
                note: None,
            };
            // One after the other: two requests batched together could differ by that alone.
            let plain = send(target, &job, &without).await;
            let listed = send(target, &job, &with).await;
            if let Some(e) = plain.error.as_ref().or(listed.error.as_ref()) {
                return off(format!("{}'s probe request failed ({e})", target.name));
            }
            if listed
                .completion
                .logprobs
                .as_ref()
                .is_none_or(Vec::is_empty)
            {
                return off(format!("{} returns no decode logprobs", target.name));
            }
            if plain.completion.answer != listed.completion.answer {
                return off(format!(
                    "{}'s greedy text on `{}` changes when logprobs are requested",
                    target.name, prompt.id
                ));
            }
        }
    }
    Finding {
        on: true,
        note: format!(
            "requested: every endpoint returned decode logprobs and the same greedy text with and without them on {} prompt{} ({PROBE_TOKENS} tokens)",
            chosen.len(),
            if chosen.len() == 1 { "" } else { "s" }
        ),
    }
}

fn off(why: String) -> Finding {
    Finding {
        on: false,
        note: format!("off: {why}; identity compares greedy texts"),
    }
}
