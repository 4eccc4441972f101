//! The `--samples N` phase on one endpoint: N completions of one prompt, `--concurrency` of
//! them in flight at once (as a batch-serving deployment sees them), each journalled on arrival.

use std::sync::Arc;

use futures::StreamExt;

use super::journal::{Condition, LoadRecord};
use super::probe::Probes;
use crate::catalogue::Prompt;
use crate::run::{send, Job};

pub async fn run(
    probes: &mut Probes<'_>,
    prompt: &Arc<Prompt>,
    max_tokens: u32,
    samples: u32,
    concurrency: usize,
) -> anyhow::Result<()> {
    let todo: Vec<u32> = (0..samples)
        .filter(|i| !probes.is_done(Condition::Sample, &prompt.id, *i))
        .collect();
    let (target, sampling, endpoint) = (probes.target, probes.sampling, probes.endpoint);
    let mut arrivals = futures::stream::iter(todo)
        .map(|repeat| {
            let job = Job {
                prompt: prompt.clone(),
                endpoint,
                max_tokens,
                repeat,
                note: None,
            };
            async move { send(target, &job, sampling).await }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some(record) = arrivals.next().await {
        probes.write(LoadRecord {
            condition: Condition::Sample,
            fillers_at_send: None,
            fillers_at_return: None,
            record,
        })?;
    }
    Ok(())
}
