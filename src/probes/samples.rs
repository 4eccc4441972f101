//! The `--samples N` phase on one endpoint: N completions of one prompt, `--concurrency` of
//! them in flight at once (as a batch-serving deployment sees them), each journalled on arrival.

use std::sync::Arc;

use super::journal::ProbeCondition;
use super::probe::Probes;
use crate::catalogue::Prompt;

/// Returns whether Ctrl-C or SIGTERM stopped it.
pub async fn run(
    probes: &mut Probes<'_>,
    prompt: &Arc<Prompt>,
    max_tokens: u32,
    samples: u32,
    concurrency: usize,
) -> anyhow::Result<bool> {
    let todo: Vec<u32> = (0..samples)
        .filter(|i| !probes.is_done(ProbeCondition::Sample, &prompt.id, *i))
        .collect();
    let to = probes.destination();
    probes
        .drive(todo, concurrency, |repeat| async move {
            vec![
                to.probe(prompt, max_tokens, repeat, ProbeCondition::Sample, None)
                    .await,
            ]
        })
        .await
}
