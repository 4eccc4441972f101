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
use super::journal::{CacheState, Condition};
use super::levels::ProbeJob;
use super::probe::Probes;
use crate::catalogue::{Message, Prompt, PromptRequest, Role};

pub async fn run(probes: &mut Probes<'_>, jobs: &[ProbeJob]) -> anyhow::Result<()> {
    let shared = preamble();
    let mut unrelated = 0;
    for (prompt, max_tokens, repeat) in jobs {
        let complete = CacheState::ALL
            .iter()
            .all(|&state| probes.is_done(Condition::Cache { state }, &prompt.id, *repeat));
        if complete {
            continue;
        }
        let behind = Arc::new(with_preamble(prompt, &shared));
        let state = |state| Condition::Cache { state };
        side_request(probes, unrelated_text(unrelated)).await;
        probes
            .send(prompt, *max_tokens, *repeat, state(CacheState::Cold), None)
            .await?;
        probes
            .send(prompt, *max_tokens, *repeat, state(CacheState::Warm), None)
            .await?;
        side_request(probes, unrelated_text(unrelated + 1)).await;
        probes
            .send(
                &behind,
                *max_tokens,
                *repeat,
                state(CacheState::PrefixCold),
                None,
            )
            .await?;
        side_request(probes, &format!("{shared}{PRIMER}")).await;
        probes
            .send(
                &behind,
                *max_tokens,
                *repeat,
                state(CacheState::PrefixCached),
                None,
            )
            .await?;
        unrelated += 2;
    }
    Ok(())
}

/// A short request that only changes what the server has cached; its answer is not kept.
async fn side_request(probes: &Probes<'_>, text: &str) {
    let body = chat_body(probes.target, text, SHORT_TOKENS, probes.sampling);
    let _ = probes
        .target
        .client
        .complete("chat/completions", &body)
        .await;
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
