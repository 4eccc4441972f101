//! `coherence compare` and `coherence determinism` flags to a validated [`RunPlan`]. Every
//! validation error names the flag it is about.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{anyhow, bail};

use super::flags::{
    client_options, load_catalogue_for, parse_params, resolve_endpoints, with_keys,
};
use crate::analysis::DEFAULT_MARGIN_POINTS;
use crate::catalogue::{Suite, SuiteChoice};
use crate::cli::{CompareArgs, RepeatOrderArg};
use crate::gate::Gate;
use crate::run::manifest::{Manifest, Sampling, MANIFEST_FILE};
use crate::run::plan::DEFAULT_MAX_TOKENS;
use crate::run::{RepeatOrder, RunPlan};
use crate::run_folder::new_run_dir;

/// Requests in flight per endpoint when neither the flag nor the config file says.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// What the run is for: it decides the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// At least two endpoints, one repeat, gate `different>0,fail>0`.
    Compare,
    /// One endpoint or more, five repeats, gate
    /// `nondeterministic>0,fail>0,changes_at_load>0,cache_dependent>0`.
    Determinism,
}

/// Build the plan for `coherence compare` or `coherence determinism`.
pub fn plan_compare(args: &CompareArgs, mode: Mode) -> anyhow::Result<RunPlan> {
    let (min_endpoints, default_repeats, default_gate) = match mode {
        Mode::Compare => (2, 1, Gate::default_compare()),
        Mode::Determinism => (1, 5, Gate::default_determinism()),
    };
    let repeats_flag = args.repeats.unwrap_or(default_repeats);
    let previous = args.resume.as_deref().map(Manifest::read).transpose()?;
    let base_specs = previous
        .as_ref()
        .map(|m| m.endpoints.iter().map(|e| e.spec.clone()).collect())
        .unwrap_or_default();
    let resolved = resolve_endpoints(&args.endpoints, base_specs)?;
    let specs = resolved.specs;
    if specs.len() < min_endpoints {
        match mode {
            Mode::Compare => bail!(
                "--endpoint: give at least two endpoints (NAME=URL); the first is the reference"
            ),
            Mode::Determinism => bail!("--endpoint: give at least one endpoint (NAME=URL)"),
        }
    }
    let endpoints = with_keys(specs)?;

    let catalogue_flag = args
        .catalogue
        .catalogue
        .clone()
        .or_else(|| previous.as_ref().map(|m| PathBuf::from(&m.catalogue.dir)));
    let suites = plan_suites(args, previous.as_ref())?;
    let catalogue = load_catalogue_for(catalogue_flag.as_deref())?.with_suites(suites);
    let selected: Vec<String> = catalogue
        .select(&args.only, &args.category)
        .map_err(|e| anyhow!(e))?
        .into_iter()
        .map(|p| p.id.clone())
        .collect();
    if selected.is_empty() {
        bail!("--only/--category: no prompt matches");
    }

    // On --resume, naming prompts, categories or suites adds what they select to the run.
    let filtered = !args.only.is_empty()
        || !args.category.is_empty()
        || !args.suite.suites.is_empty()
        || args.suite.items.is_some();
    let (dir, scope, repeats, mut sampling) = match &previous {
        Some(m) => {
            // Resuming adds prompts to the run only when --only/--category name them.
            let mut scope: Vec<String> = m.prompts.clone();
            if filtered {
                let known: BTreeSet<String> = scope.iter().cloned().collect();
                scope.extend(selected.iter().filter(|id| !known.contains(*id)).cloned());
            }
            (
                args.resume.clone().unwrap_or_default(),
                scope,
                m.repeats.max(args.repeats.unwrap_or(0)),
                // The budget rule the run was started with stays the run's; a --max-tokens given
                // now applies to what this invocation sends.
                m.sampling.clone(),
            )
        }
        None => {
            let names: Vec<&str> = endpoints.iter().map(|e| e.spec.name.as_str()).collect();
            let dir = match &args.out {
                Some(d) => d.clone(),
                None => new_run_dir(None, &names),
            };
            if dir.join(MANIFEST_FILE).exists() {
                bail!(
                    "--out {}: this folder already holds a run; continue it with --resume {}",
                    dir.display(),
                    dir.display()
                );
            }
            (
                dir,
                selected.clone(),
                repeats_flag,
                Sampling {
                    max_tokens_override: args.max_tokens,
                    ..Sampling::deterministic(DEFAULT_MAX_TOKENS)
                },
            )
        }
    };
    let send = if previous.is_some() && !filtered {
        scope.clone()
    } else {
        selected
    };
    sampling.params = parse_params(&args.params, std::mem::take(&mut sampling.params))?;
    sampling.logprobs |= args.logprobs;
    let fail_on = resolve_gate(
        args.gate.fail_on.as_ref(),
        previous.as_ref().map(|m| &m.fail_on),
        default_gate,
    );
    let max_tokens_override = args.max_tokens.or(sampling.max_tokens_override);
    let margin = args
        .gate
        .margin
        .or(previous.as_ref().and_then(|m| m.margin))
        .unwrap_or(DEFAULT_MARGIN_POINTS);
    Ok(RunPlan {
        dir,
        previous,
        catalogue,
        endpoints,
        send,
        scope,
        repeats,
        repeat_order: match args.repeat_order {
            RepeatOrderArg::Interleaved => RepeatOrder::Interleaved,
            RepeatOrderArg::BackToBack => RepeatOrder::BackToBack,
        },
        max_tokens_override,
        sampling,
        // One concurrency for every endpoint (the executor's rule): the flag, else the
        // smallest the config file gives the chosen endpoints, so none gets more than its own.
        concurrency: args
            .concurrency
            .or_else(|| resolved.concurrency.iter().map(|(_, n)| *n).min())
            .unwrap_or(DEFAULT_CONCURRENCY),
        client: client_options(&args.client)?,
        quiet: args.quiet,
        fail_on,
        margin,
        reasoning_retry_budget: args.reasoning_retry_budget,
    })
}

/// The suites the run sends: the flags, else (on --resume) the run's own. A resumed run keeps
/// what it sent: `--suite` adds suites, `--items` can only add items, `--seed` cannot change
/// them.
fn plan_suites(args: &CompareArgs, previous: Option<&Manifest>) -> anyhow::Result<SuiteChoice> {
    let Some(m) = previous else {
        return args
            .suite
            .choice(&SuiteChoice::default())
            .map_err(|e| anyhow!(e));
    };
    let own = m
        .catalogue
        .suite_choice()
        .map_err(|e| anyhow!("--resume: {e}"))?;
    let sent_generated = own.includes(Suite::Generated);
    if sent_generated && args.suite.seed.is_some_and(|s| s != own.seed) {
        bail!(
            "--seed: the run's generated items were made with seed {}; a resumed run keeps them",
            own.seed
        );
    }
    let asked = args.suite.choice(&own).map_err(|e| anyhow!(e))?;
    // What the run sent stays in it: the suites add up, the generated items only grow.
    let mut suites = asked.suites().to_vec();
    suites.extend(own.suites());
    let (seed, items) = if sent_generated {
        (own.seed, asked.items.max(own.items))
    } else {
        (asked.seed, asked.items)
    };
    SuiteChoice::new(suites, seed, items).map_err(|e| anyhow!(e))
}

/// The gate in force: the flag, else the run's own, else the command's default.
pub fn resolve_gate(flag: Option<&Gate>, previous: Option<&Gate>, default: Gate) -> Gate {
    flag.or(previous.filter(|g| !g.is_empty()))
        .cloned()
        .unwrap_or(default)
}
