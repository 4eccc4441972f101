//! `compare --baseline RUN_DIR --endpoint NAME=URL` to a [`RunPlan`]: the saved runs' reference
//! endpoint is replayed as the reference (several runs of one deployment pool their repeats),
//! and only the new endpoints are sent, with the first baseline's catalogue, suites, sampling,
//! budget rule, scope and repeats.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::compare_plan::{concurrency, resolve_gate};
use super::flags::{client_options, resolve_endpoints, with_keys};
use super::saved_run::{common_prompts, replayed, SavedRun};
use super::score::catalogue_for_run;
use crate::analysis::DEFAULT_MARGIN_POINTS;
use crate::cli::CompareArgs;
use crate::endpoint::ClientOptions;
use crate::gate::Gate;
use crate::run::replay::leave_out_unanswered;
use crate::run::{PlannedEndpoint, RepeatOrder, RunPlan};
use crate::run_folder::{compare, new_run_dir};

/// A comparison of fresh endpoints against saved baseline runs, whoever asks for it
/// (`compare --baseline`, each `watch` check).
pub(super) struct AgainstBaselines<'a> {
    pub baselines: &'a [PathBuf],
    pub allow_catalogue_change: bool,
    /// `--catalogue`: the baseline's own when not given.
    pub catalogue: Option<&'a Path>,
    /// The endpoints to send to, keys read.
    pub fresh: Vec<PlannedEndpoint>,
    /// The new run's folder (default: a new one under `runs/`).
    pub out: Option<PathBuf>,
    pub concurrency: usize,
    pub client: ClientOptions,
    pub quiet: bool,
    pub fail_on: Option<&'a Gate>,
    pub margin: Option<f64>,
    pub reasoning_retry_budget: u32,
}

/// The plan of a comparison against saved baselines (`args.baseline`, at least one).
pub fn plan_baseline(args: &CompareArgs) -> anyhow::Result<RunPlan> {
    let resolved = resolve_endpoints(&args.endpoints, Vec::new())?;
    plan_against(AgainstBaselines {
        baselines: &args.baseline,
        allow_catalogue_change: args.allow_catalogue_change,
        catalogue: args.catalogue.catalogue.as_deref(),
        concurrency: concurrency(args, &resolved.concurrency),
        fresh: with_keys(resolved.specs)?,
        out: args.out.clone(),
        client: client_options(&args.client)?,
        quiet: args.quiet,
        fail_on: args.gate.fail_on.as_ref(),
        margin: args.gate.margin,
        reasoning_retry_budget: args.reasoning_retry_budget,
    })
}

/// The saved runs' reference replayed as the reference, the fresh endpoints sent, with the
/// first baseline's catalogue, suites, sampling, budget rule, scope and repeats.
pub(super) fn plan_against(args: AgainstBaselines) -> anyhow::Result<RunPlan> {
    let baselines = args
        .baselines
        .iter()
        .map(|d| SavedRun::read(d).map_err(|e| anyhow::anyhow!("--baseline: {e:#}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let Some(first) = baselines.first() else {
        bail!("--baseline: give a saved run folder");
    };
    let mut notes = Vec::new();
    for other in &baselines[1..] {
        if let Some(why) = first.same_items(other, args.allow_catalogue_change)? {
            notes.push(format!(
                "--allow-catalogue-change: {why}; only the prompts every baseline has are compared"
            ));
        }
    }
    let catalogue = catalogue_for_run(args.catalogue, &first.manifest)?;
    let changed = first
        .same_catalogue(&catalogue, args.allow_catalogue_change)
        .map_err(|e| anyhow::anyhow!("--baseline: {e:#}"))?;
    notes.extend(changed);

    let reference = baselines
        .iter()
        .map(|b| b.endpoint(Some(&b.manifest.endpoints[0].spec.name), "--baseline"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let reference_name = reference[0].spec.name.clone();
    let fresh = args.fresh;
    if fresh.is_empty() {
        bail!("--endpoint: give the endpoint to compare with the baseline (NAME=URL)");
    }
    if let Some(e) = fresh.iter().find(|e| e.spec.name == reference_name) {
        bail!(
            "--endpoint {}: the baseline's reference is called `{reference_name}`; give the new endpoint another name",
            e.spec.name
        );
    }
    let sources = baselines
        .iter()
        .zip(&reference)
        .map(|(b, e)| b.source(e))
        .collect();
    let mut endpoints = vec![replayed(&reference_name, reference[0], sources)];
    endpoints.extend(fresh);

    let lists: Vec<&[String]> = baselines[1..]
        .iter()
        .map(|b| b.manifest.prompts.as_slice())
        .collect();
    let scope: Vec<String> = common_prompts(&first.manifest.prompts, &lists)
        .into_iter()
        .filter(|id| catalogue.get(id).is_some())
        .collect();
    if scope.is_empty() {
        bail!("--baseline: the baselines and the catalogue have no prompt in common");
    }
    let left_out = first.manifest.prompts.len() - scope.len();
    if left_out > 0 {
        notes.push(format!(
            "{} prompts are compared; {left_out} of the baseline's are left out (another baseline or the catalogue lacks them)",
            scope.len()
        ));
    }
    let names: Vec<&str> = endpoints.iter().map(|e| e.spec.name.as_str()).collect();
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => new_run_dir(None, &names),
    };
    if compare::folder(&dir).holds(compare::MANIFEST) {
        bail!("--out {}: this folder already holds a run", dir.display());
    }
    let m = &first.manifest;
    let mut plan = RunPlan {
        dir,
        previous: None,
        catalogue,
        send: scope.clone(),
        scope,
        repeats: m.repeats,
        control: 0,
        control_max: None,
        logprobs_auto: false,
        repeat_order: RepeatOrder::default(),
        max_tokens_override: m.sampling.max_tokens_override,
        sampling: m.sampling.clone(),
        concurrency: args.concurrency,
        client: args.client,
        quiet: args.quiet,
        fail_on: resolve_gate(args.fail_on, Some(&m.fail_on), Gate::default_compare()),
        margin: args.margin.or(m.margin).unwrap_or(DEFAULT_MARGIN_POINTS),
        identity_alpha: None,
        reasoning_retry_budget: args.reasoning_retry_budget,
        until_decided: None,
        calibrate: None,
        difficulty: m.difficulty.clone(),
        notes,
        endpoints,
    };
    leave_out_unanswered(&mut plan)?;
    Ok(plan)
}
