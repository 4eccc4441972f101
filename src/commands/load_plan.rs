//! `--under-load`, `--cache-states` and `--samples` to a validated [`LoadPlan`]; on `--resume`
//! without them, the run's own.

use anyhow::bail;

use super::compare_plan::Mode;
use crate::cli::LoadArgs;
use crate::probes::LoadPlan;
use crate::run::RunPlan;

pub fn plan_load(args: &LoadArgs, mode: Mode, plan: &RunPlan) -> anyhow::Result<LoadPlan> {
    let asked = !args.under_load.is_empty() || args.cache_states || args.samples.is_some();
    if asked && mode == Mode::Compare {
        bail!("--under-load/--cache-states/--samples: only for `coherence determinism`");
    }
    if !asked {
        if plan.previous.is_some() {
            return Ok(LoadPlan::read(&plan.dir)?.unwrap_or_default());
        }
        return Ok(LoadPlan::default());
    }
    if args.samples.is_some() && plan.send.len() != 1 {
        bail!(
            "--samples: name exactly one prompt with --only ID (this selection has {})",
            plan.send.len()
        );
    }
    let mut levels = args.under_load.clone();
    if !levels.is_empty() {
        levels.push(0);
    }
    levels.sort_unstable();
    levels.dedup();
    Ok(LoadPlan {
        levels,
        cache_states: args.cache_states,
        samples: args.samples,
        filler_tokens: args.filler_tokens,
    })
}
