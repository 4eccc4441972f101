//! `coherence diff RUN_A RUN_B`: two saved runs compared offline. One endpoint of each is played
//! again from its records as a run of two replayed endpoints, which goes through the same
//! pipeline as a live comparison (nothing is sent), so the verdicts are the live ones.

use anyhow::bail;

use super::compare_plan::resolve_gate;
use super::saved_run::{common_prompts, replayed, SavedRun};
use super::score::{catalogue_for_run, exit_for, print_outcome};
use crate::analysis::DEFAULT_MARGIN_POINTS;
use crate::catalogue::Catalogue;
use crate::cli::DiffArgs;
use crate::compare::run_and_score;
use crate::endpoint::ClientOptions;
use crate::error::{CliError, Exit, UsageContext};
use crate::gate::Gate;
use crate::probes::LoadPlan;
use crate::run::replay::leave_out_unanswered;
use crate::run::{RepeatOrder, RunPlan};
use crate::run_folder::{compare, new_run_dir};

pub fn diff(args: &DiffArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    let a = SavedRun::read(&args.run_a).map_err(CliError::unreadable)?;
    let b = SavedRun::read(&args.run_b).map_err(CliError::unreadable)?;
    let plan = plan_diff(args, &a, &b).usage_err()?;
    let (results, interrupted) = run_and_score(&plan, &LoadPlan::default(), None, argv)?;
    print_outcome(&plan.dir, &results, interrupted, args.json)?;
    Ok(exit_for(&results, interrupted))
}

/// The endpoint names in the new run: their own, or, when both are called the same,
/// `NAME-a` and `NAME-b`.
fn names(a: &str, b: &str) -> (String, String) {
    if a == b {
        (format!("{a}-a"), format!("{b}-b"))
    } else {
        (a.to_string(), b.to_string())
    }
}

/// The prompts both runs cover and the catalogue has, in RUN_A's order; a note when some are
/// left out, an error when none is left.
fn shared_scope(
    a: &SavedRun,
    b: &SavedRun,
    catalogue: &Catalogue,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<String>> {
    let scope: Vec<String> = common_prompts(&a.manifest.prompts, &[&b.manifest.prompts])
        .into_iter()
        .filter(|id| catalogue.get(id).is_some())
        .collect();
    if scope.is_empty() {
        bail!(
            "{} and {} have no prompt in common",
            a.dir.display(),
            b.dir.display()
        );
    }
    let left_out = a.manifest.prompts.len().max(b.manifest.prompts.len()) - scope.len();
    if left_out > 0 {
        notes.push(format!(
            "{} prompts are compared; {left_out} that only one run covers (or the catalogue lacks) are left out",
            scope.len()
        ));
    }
    Ok(scope)
}

/// A run of RUN_A's endpoint (the reference) and RUN_B's, both replayed, on the prompts both
/// runs cover, with RUN_A's catalogue, sampling and margin.
fn plan_diff(args: &DiffArgs, a: &SavedRun, b: &SavedRun) -> anyhow::Result<RunPlan> {
    let mut notes = Vec::new();
    if let Some(why) = a.same_items(b, args.allow_catalogue_change)? {
        notes.push(format!(
            "--allow-catalogue-change: {why}; only the prompts both runs have are compared"
        ));
    }
    let (ea, eb) = (
        a.endpoint(args.a.as_deref(), "--a")?,
        b.endpoint(args.b.as_deref(), "--b")?,
    );
    let (name_a, name_b) = names(&ea.spec.name, &eb.spec.name);
    let catalogue = catalogue_for_run(args.catalogue.as_deref(), &a.manifest)?;
    // Scored with RUN_A's catalogue as it is now: refused, as a baseline is, when it changed
    // since either run (RUN_B's is asked only when it differs from RUN_A's, already allowed).
    notes.extend(a.same_catalogue(&catalogue, args.allow_catalogue_change)?);
    if b.manifest.catalogue.hash != a.manifest.catalogue.hash {
        notes.extend(b.same_catalogue(&catalogue, args.allow_catalogue_change)?);
    }
    let scope = shared_scope(a, b, &catalogue, &mut notes)?;
    if a.manifest.sampling != b.manifest.sampling {
        notes.push(format!(
            "the runs were sent with different sampling: {} {}, {} {}",
            a.dir.display(),
            serde_json::to_string(&a.manifest.sampling)?,
            b.dir.display(),
            serde_json::to_string(&b.manifest.sampling)?
        ));
    }
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => new_run_dir(Some("diff"), &[&name_a, &name_b]),
    };
    if compare::folder(&dir).holds(compare::MANIFEST) {
        bail!("--out {}: this folder already holds a run", dir.display());
    }
    let endpoints = vec![
        replayed(&name_a, ea, vec![a.source(ea)]),
        replayed(&name_b, eb, vec![b.source(eb)]),
    ];
    let repeats = a
        .manifest
        .repeats_of(&ea.spec.name)
        .max(b.manifest.repeats_of(&eb.spec.name));
    let sampling = a.manifest.sampling.clone();
    let mut plan = RunPlan {
        dir,
        previous: None,
        catalogue,
        endpoints,
        send: Vec::new(),
        scope,
        repeats,
        control: 0,
        control_max: None,
        logprobs_auto: false,
        repeat_order: RepeatOrder::default(),
        max_tokens_override: sampling.max_tokens_override,
        sampling,
        concurrency: 1,
        client: ClientOptions::default(),
        quiet: true,
        fail_on: resolve_gate(args.gate.fail_on.as_ref(), None, Gate::default_compare()),
        margin: args
            .gate
            .margin
            .or(a.manifest.margin)
            .unwrap_or(DEFAULT_MARGIN_POINTS),
        identity_alpha: None,
        reasoning_retry_budget: 0,
        until_decided: None,
        calibrate: None,
        difficulty: a.manifest.difficulty.clone(),
        notes,
    };
    leave_out_unanswered(&mut plan)?;
    Ok(plan)
}
