//! The `--cache-states` phase on one endpoint. For every prompt and repeat, one request at a
//! time:
//!
//! 1. an unrelated short prompt, then the probe: `cold`;
//! 2. the same probe again at once: `warm`;
//! 3. another unrelated prompt, then the probe behind a long shared preamble: `prefix_cold`;
//! 4. a different question behind the same preamble, then the probe behind it: `prefix_cached`.
//!
//! `cold`/`warm` are the same request, as are `prefix_cold`/`prefix_cached`: a different answer
//! within either pair depends on what the server has cached. A sequence with any state missing
//! is sent again whole, because a state means something only right after its predecessor.

use std::sync::Arc;

use super::fillers::{chat_body, preamble, unrelated_text, PRIMER, SHORT_TOKENS};
use super::journal::{CacheState, LoadRecord, ProbeCondition};
use super::levels::ProbeJob;
use super::probe::{Destination, Probes};
use crate::catalogue::{Message, Prompt, PromptRequest, Role};

/// Returns whether Ctrl-C or SIGTERM stopped it (a sequence it cut short is not journalled).
pub async fn run(probes: &mut Probes<'_>, jobs: &[ProbeJob]) -> anyhow::Result<bool> {
    let shared = preamble();
    let todo: Vec<(usize, &ProbeJob)> = jobs
        .iter()
        .filter(|(prompt, _, repeat)| {
            !CacheState::ALL
                .iter()
                .all(|&state| probes.is_done(ProbeCondition::Cache { state }, &prompt.id, *repeat))
        })
        .enumerate()
        .collect();
    let to = probes.destination();
    let shared = &shared;
    probes
        .drive(todo, 1, |(n, job)| sequence(to, job, shared, 2 * n))
        .await
}

/// One whole sequence for a prompt and repeat, the four states in order.
async fn sequence(
    to: Destination<'_>,
    (prompt, max_tokens, repeat): &ProbeJob,
    shared: &str,
    unrelated: usize,
) -> Vec<LoadRecord> {
    let behind = Arc::new(with_preamble(prompt, shared));
    let state = |state| ProbeCondition::Cache { state };
    let mut records = Vec::new();
    side_request(to, unrelated_text(unrelated)).await;
    records.push(
        to.probe(prompt, *max_tokens, *repeat, state(CacheState::Cold), None)
            .await,
    );
    records.push(
        to.probe(prompt, *max_tokens, *repeat, state(CacheState::Warm), None)
            .await,
    );
    side_request(to, unrelated_text(unrelated + 1)).await;
    records.push(
        to.probe(
            &behind,
            *max_tokens,
            *repeat,
            state(CacheState::PrefixCold),
            None,
        )
        .await,
    );
    side_request(to, &format!("{shared}{PRIMER}")).await;
    records.push(
        to.probe(
            &behind,
            *max_tokens,
            *repeat,
            state(CacheState::PrefixCached),
            None,
        )
        .await,
    );
    records
}

/// A short request that only changes what the server has cached; its answer is not kept.
async fn side_request(to: Destination<'_>, text: &str) {
    let body = chat_body(to.target, text, SHORT_TOKENS, to.sampling);
    let _ = to.target.client.complete("chat/completions", &body).await;
}

/// The prompt with the preamble before everything it says: prepended to its first message
/// (a system message stays the only one), or to a raw completion prompt.
pub fn with_preamble(prompt: &Prompt, preamble: &str) -> Prompt {
    let request = match &prompt.request {
        PromptRequest::Chat { messages } => {
            let mut messages = messages.clone();
            match messages.first_mut() {
                Some(first) => first.content = format!("{preamble}{}", first.content),
                None => messages.push(Message {
                    role: Role::User,
                    content: preamble.to_string(),
                }),
            }
            PromptRequest::Chat { messages }
        }
        PromptRequest::Completion { prompt } => PromptRequest::Completion {
            prompt: format!("{preamble}{prompt}"),
        },
    };
    Prompt {
        request,
        ..prompt.clone()
    }
}
