//! The `--under-load` phase on one endpoint: for each load level K, keep K fillers in flight
//! and send every probe (prompt x repeat) one at a time among them; level 0 is the probe alone.

use std::sync::Arc;

use super::journal::ProbeCondition;
use super::pool::FillerPool;
use super::probe::Probes;
use crate::catalogue::Prompt;

/// A probe of the phase: the prompt, its budget and the repeat.
pub type ProbeJob = (Arc<Prompt>, u32, u32);

/// Run every level, lowest first; probes of one level share one pool of fillers. Returns
/// whether Ctrl-C or SIGTERM stopped it.
pub async fn run(
    probes: &mut Probes<'_>,
    levels: &[u32],
    jobs: &[ProbeJob],
    filler_tokens: u32,
) -> anyhow::Result<bool> {
    for &load in levels {
        let condition = ProbeCondition::Load { load };
        let todo: Vec<&ProbeJob> = jobs
            .iter()
            .filter(|(p, _, r)| !probes.is_done(condition, &p.id, *r))
            .collect();
        if todo.is_empty() {
            continue;
        }
        let pool = (load > 0).then(|| {
            FillerPool::start(probes.target, load as usize, probes.sampling, filler_tokens)
        });
        if let Some(pool) = &pool {
            pool.settle().await;
        }
        let (to, fillers) = (probes.destination(), pool.as_ref());
        let stopped = probes
            .drive(todo, 1, |(prompt, max_tokens, repeat)| async move {
                vec![
                    to.probe(prompt, *max_tokens, *repeat, condition, fillers)
                        .await,
                ]
            })
            .await?;
        if stopped {
            // Dropping the pool abandons its fillers: an interruption stops at once.
            return Ok(true);
        }
        if let Some(pool) = pool {
            let stats = pool.stop().await;
            if stats.failed > 0 {
                probes.progress.note(&format!(
                    "{}: load {load}: {} of {} filler requests failed; the probes saw less load than asked",
                    probes.target.name, stats.failed, stats.sent
                ));
            }
        }
    }
    Ok(false)
}
