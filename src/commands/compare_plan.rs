//! `coherence compare`, `coherence determinism` and `coherence selftest` flags to a validated
//! [`RunPlan`]. Every validation error names the flag it is about.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{anyhow, bail};

use super::flags::{
    client_options, load_catalogue_for, parse_params, refuse_keys_in_params, resolve_endpoints,
    with_keys, Sampled,
};
use super::long_plan::plan_long;
use super::saved_run::keep_replayed;
use crate::analysis::behaviour::calibration::DEFAULT_TARGET;
use crate::analysis::DEFAULT_MARGIN_POINTS;
use crate::catalogue::generator::Version;
use crate::catalogue::long::Texts;
use crate::catalogue::{Suite, SuiteChoice};
use crate::cli::{CompareArgs, ControlArg, Difficulty, RepeatOrderArg};
use crate::compare::control;
use crate::gate::Gate;
use crate::run::manifest::{Manifest, Sampling, StoppingRule, MAX_REPEATS};
use crate::run::plan::DEFAULT_MAX_TOKENS;
use crate::run::replay::leave_out_unanswered;
use crate::run::{RepeatOrder, RunPlan};
use crate::run_folder::{compare, new_run_dir};

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
    /// Exactly one endpoint (compared with itself by the selftest's controls), one repeat, the
    /// compare gate; the folder is named `selftest-…`.
    Selftest,
}

impl Mode {
    fn default_repeats(self) -> u32 {
        match self {
            Mode::Compare | Mode::Selftest => 1,
            Mode::Determinism => 5,
        }
    }

    fn default_gate(self) -> Gate {
        match self {
            Mode::Compare | Mode::Selftest => Gate::default_compare(),
            Mode::Determinism => Gate::default_determinism(),
        }
    }

    /// Refuse an endpoint count this mode cannot run.
    fn check_endpoints(self, count: usize) -> anyhow::Result<()> {
        match self {
            Mode::Compare if count < 2 => bail!(
                "--endpoint: give at least two endpoints (NAME=URL); the first is the reference"
            ),
            Mode::Determinism if count < 1 => {
                bail!("--endpoint: give at least one endpoint (NAME=URL)")
            }
            Mode::Selftest if count != 1 => bail!(
                "--endpoint: selftest takes exactly one endpoint (NAME=URL, or a name from the config file); it is compared with itself"
            ),
            _ => Ok(()),
        }
    }

    /// The command stamp of a new run folder's name.
    fn folder_prefix(self) -> Option<&'static str> {
        (self == Mode::Selftest).then_some("selftest")
    }
}

/// Where a run goes and what it covers: a new run's, or the resumed run's grown by the flags.
struct Scope {
    dir: PathBuf,
    /// Every prompt id the run covers.
    scope: Vec<String>,
    /// The prompt ids to send now.
    send: Vec<String>,
    repeats: u32,
    sampling: Sampling,
}

/// Build the plan for `coherence compare`, `coherence determinism` or a selftest.
pub fn plan_compare(args: &CompareArgs, mode: Mode) -> anyhow::Result<RunPlan> {
    if !args.baseline.is_empty() {
        bail!("--baseline: use it with compare");
    }
    if let Some(n) = args.repeats.filter(|n| *n > MAX_REPEATS) {
        bail!("--repeats {n}: at most {MAX_REPEATS} repeats of each prompt");
    }
    let previous = args.resume.as_deref().map(Manifest::read).transpose()?;
    let base_specs = previous
        .as_ref()
        .map(|m| m.endpoints.iter().map(|e| e.spec.clone()).collect())
        .unwrap_or_default();
    let resolved = resolve_endpoints(&args.endpoints, base_specs)?;
    mode.check_endpoints(resolved.specs.len())?;
    let mut endpoints = with_keys(resolved.specs)?;
    if let Some(m) = &previous {
        keep_replayed(&mut endpoints, m);
    }

    let catalogue_flag = args
        .catalogue
        .catalogue
        .clone()
        .or_else(|| previous.as_ref().map(|m| PathBuf::from(&m.catalogue.dir)));
    if args.until_decided && mode != Mode::Compare {
        bail!(
            "--until-decided decides whether two endpoints are the same model: use it with compare"
        );
    }
    let rule = StoppingRule {
        round_items: args.round_items.unwrap_or(DEFAULT_ROUND_ITEMS),
        max_items: args.max_items.unwrap_or(DEFAULT_MAX_ITEMS),
    };
    let until_decided = if previous.is_some() {
        args.until_decided
            .then_some(rule)
            .or_else(|| previous.as_ref().and_then(|m| m.until_decided))
    } else {
        (args.until_decided || decides_by_default(args, mode)).then_some(rule)
    };
    if until_decided.is_none() && (args.max_items.is_some() || args.round_items.is_some()) {
        bail!(
            "--max-items/--round-items shape the rounds of --until-decided: add --until-decided \
             (it is on by default only for a plain compare of the built-in catalogue)"
        );
    }
    let mut suites = plan_suites(args, previous.as_ref())?;
    if let Some(rule) = until_decided {
        suites = with_rounds(suites, rule, args.suite.items, previous.as_ref())?;
    }
    let client = client_options(&args.client)?;
    let long_notes = plan_long(&mut suites, args, &endpoints, &client, previous.is_some())?;
    // A dry run counts the long items' planned tokens from their ids: no haystack is built.
    let texts = if args.dry_run {
        Texts::Planned
    } else {
        Texts::Built
    };
    let catalogue = load_catalogue_for(catalogue_flag.as_deref())?.with_suites_as(suites, texts);
    let selected: Vec<String> = catalogue
        .select(&args.only, &args.category)
        .map_err(|e| anyhow!(e))?
        .into_iter()
        .map(|p| p.id.clone())
        .collect();
    let filtered = !args.only.is_empty() || !args.category.is_empty();
    if selected.is_empty() && !filtered {
        bail!("{}: the catalogue holds no prompt", catalogue.dir.display());
    }
    if selected.is_empty() {
        bail!("--only/--category: no prompt matches");
    }
    let mut run = match &previous {
        Some(m) => resumed_scope(args, m, selected),
        None => {
            let names: Vec<&str> = endpoints.iter().map(|e| e.spec.name.as_str()).collect();
            new_scope(args, mode, &names, selected)?
        }
    };
    run.sampling.params = parse_params(
        &args.params,
        std::mem::take(&mut run.sampling.params),
        Sampled::Greedy,
    )?;
    refuse_keys_in_params(&run.sampling.params, &endpoints)?;
    run.sampling.logprobs |= args.logprobs;
    if args.logprobs {
        run.sampling.teacher_forcing = Some(true);
        run.sampling.logprobs_note = Some("requested with --logprobs".to_string());
    } else if previous.is_none() {
        run.sampling.teacher_forcing = Some(false);
        if args.no_logprobs {
            run.sampling.logprobs_note = Some("off: --no-logprobs".to_string());
        }
    }
    let pair = mode == Mode::Compare && endpoints.len() > 1;
    // Decode logprobs where a probe finds them harmless, in every mode: a determinism run is
    // the baseline a watch reads, and its identity test is sharper with them.
    let logprobs_auto = previous.is_none() && !args.logprobs && !args.no_logprobs;
    // A resumed run keeps its control plan (and a growing one goes on from where it stopped).
    let (control, control_max) = match &previous {
        Some(m) => (m.control, m.control_max),
        None if pair && run.repeats == 1 => match args.control {
            ControlArg::Auto => (
                control::START.min(args.control_max).min(run.scope.len()),
                Some(args.control_max),
            ),
            ControlArg::Fixed(n) => (n, None),
        },
        None => (0, None),
    };
    let calibrate = calibration_target(args, mode, &catalogue, previous.as_ref())?;
    let mut plan = RunPlan {
        fail_on: resolve_gate(
            args.gate.fail_on.as_ref(),
            previous.as_ref().map(|m| &m.fail_on),
            mode.default_gate(),
        ),
        margin: args
            .gate
            .margin
            .or(previous.as_ref().and_then(|m| m.margin))
            .unwrap_or(DEFAULT_MARGIN_POINTS),
        max_tokens_override: args.max_tokens.or(run.sampling.max_tokens_override),
        dir: run.dir,
        previous,
        catalogue,
        endpoints,
        send: run.send,
        scope: run.scope,
        repeats: run.repeats,
        control,
        control_max,
        logprobs_auto,
        repeat_order: match args.repeat_order {
            RepeatOrderArg::Interleaved => RepeatOrder::Interleaved,
            RepeatOrderArg::BackToBack => RepeatOrder::BackToBack,
        },
        sampling: run.sampling,
        concurrency: concurrency(args, &resolved.concurrency),
        client,
        quiet: args.quiet,
        identity_alpha: None,
        reasoning_retry_budget: args.reasoning_retry_budget,
        until_decided,
        calibrate,
        difficulty: Vec::new(),
        notes: long_notes,
    };
    // A resumed baseline or diff made before its unanswered prompts were left out.
    if plan.replays() {
        leave_out_unanswered(&mut plan)?;
    }
    Ok(plan)
}

/// A resumed run: its folder, scope and budget rule; `--only`/`--category` add the prompts they
/// select to the scope and send only those.
fn resumed_scope(args: &CompareArgs, m: &Manifest, selected: Vec<String>) -> Scope {
    // On --resume, naming prompts, categories or suites adds what they select to the run.
    let filtered = !args.only.is_empty()
        || !args.category.is_empty()
        || !args.suite.suites.is_empty()
        || args.suite.items.is_some();
    let mut scope: Vec<String> = m.prompts.clone();
    if filtered {
        let known: BTreeSet<String> = scope.iter().cloned().collect();
        scope.extend(selected.iter().filter(|id| !known.contains(*id)).cloned());
    }
    Scope {
        dir: args.resume.clone().unwrap_or_default(),
        send: if filtered { selected } else { scope.clone() },
        scope,
        repeats: m.repeats.max(args.repeats.unwrap_or(0)),
        // The budget rule the run was started with stays the run's; a --max-tokens given now
        // applies to what this invocation sends.
        sampling: m.sampling.clone(),
    }
}

/// A new run: `--out` (which must not hold a run yet), else a new folder named after the
/// endpoints.
fn new_scope(
    args: &CompareArgs,
    mode: Mode,
    names: &[&str],
    selected: Vec<String>,
) -> anyhow::Result<Scope> {
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => new_run_dir(mode.folder_prefix(), names),
    };
    if compare::folder(&dir).holds(compare::MANIFEST) {
        bail!(
            "--out {}: this folder already holds a run; continue it with --resume {}",
            dir.display(),
            dir.display()
        );
    }
    Ok(Scope {
        dir,
        scope: selected.clone(),
        send: selected,
        repeats: args.repeats.unwrap_or(mode.default_repeats()),
        sampling: Sampling {
            max_tokens_override: args.max_tokens,
            ..Sampling::deterministic(DEFAULT_MAX_TOKENS)
        },
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
    let mut choice = SuiteChoice::new(suites, seed, items).map_err(|e| anyhow!(e))?;
    // The generated items a run sent stay the ones it sent, by the version that made them and at
    // the levels (and budgets) it made them at.
    if sent_generated {
        choice.generator = own.generator;
        choice.levels = own.levels.clone();
    }
    // The long items a run sent stay the ones it sent.
    if own.includes(Suite::Long) {
        choice.long = own.long;
        choice.seed = own.seed;
    } else {
        choice.long = asked.long;
    }
    Ok(choice)
}

/// Generated items sent at most by an `--until-decided` run, and added per round.
const DEFAULT_MAX_ITEMS: usize = 2000;
const DEFAULT_ROUND_ITEMS: usize = 200;

/// A plain `coherence compare A B` decides: with the built-in catalogue and nothing selected (no
/// --suite, --items, --only, --category), it sends the core prompts and generated items in rounds
/// until every pair is decided or --max-items is reached. The core prompts alone cannot prove
/// equivalence within ±5 points when a few percent of answers flip; rounds of generated items
/// can, and stop as soon as they do. Choosing any of those flags sends exactly what was chosen.
/// The target accuracy to calibrate the generated families at (`--difficulty auto`, the
/// default for a compare that sends generated items of version 3), or None: levels fixed by
/// `--difficulty N`, kept from the resumed run (which calibrated already, or fixed them), or no
/// generated suite. A resumed run whose calibration was stopped goes on with its target.
fn calibration_target(
    args: &CompareArgs,
    mode: Mode,
    catalogue: &crate::catalogue::Catalogue,
    previous: Option<&Manifest>,
) -> anyhow::Result<Option<f64>> {
    let fixed = matches!(args.suite.difficulty, Some(Difficulty::Fixed(_)));
    if fixed && args.target_accuracy.is_some() {
        bail!("--target-accuracy aims the calibration of --difficulty auto: leave out one or the other");
    }
    let choice = &catalogue.suites;
    let generated = choice.includes(Suite::Generated) && choice.generator == Version::V3;
    if !generated || fixed || mode != Mode::Compare {
        if args.target_accuracy.is_some() && !generated {
            bail!("--target-accuracy calibrates the generated suite: add --suite generated");
        }
        return Ok(None);
    }
    Ok(match previous {
        Some(m) if !m.difficulty.is_empty() || !choice.levels.is_empty() => None,
        Some(m) => m.target_accuracy.map(|t| args.target_accuracy.unwrap_or(t)),
        None => Some(args.target_accuracy.unwrap_or(DEFAULT_TARGET)),
    })
}

fn decides_by_default(args: &CompareArgs, mode: Mode) -> bool {
    mode == Mode::Compare
        && args.catalogue.catalogue.is_none()
        && args.suite.suites.is_empty()
        && args.suite.items.is_none()
        && args.only.is_empty()
        && args.category.is_empty()
}

/// The suites of an `--until-decided` run: the generated suite added, starting (when neither
/// `--items` nor the resumed run says how many) with one round of items.
fn with_rounds(
    suites: SuiteChoice,
    rule: StoppingRule,
    items_flag: Option<usize>,
    previous: Option<&Manifest>,
) -> anyhow::Result<SuiteChoice> {
    let sent_generated = previous
        .and_then(|m| m.catalogue.suite_choice().ok())
        .is_some_and(|c| c.includes(Suite::Generated));
    let items = if sent_generated || items_flag.is_some() {
        suites.items
    } else {
        rule.round_items.min(rule.max_items)
    };
    let mut list = suites.suites().to_vec();
    list.push(Suite::Generated);
    let mut choice = SuiteChoice::new(list, suites.seed, items).map_err(|e| anyhow!(e))?;
    choice.generator = suites.generator;
    choice.long = suites.long;
    Ok(choice)
}

/// One concurrency for every endpoint (the executor's rule): the flag, else the smallest the
/// config file gives the chosen endpoints (`config`), so none gets more than its own.
pub(super) fn concurrency(args: &CompareArgs, config: &[(String, usize)]) -> usize {
    args.concurrency
        .or_else(|| config.iter().map(|(_, n)| *n).min())
        .unwrap_or(DEFAULT_CONCURRENCY)
}

/// The gate in force: the flag, else the run's own, else the command's default.
pub fn resolve_gate(flag: Option<&Gate>, previous: Option<&Gate>, default: Gate) -> Gate {
    flag.or(previous.filter(|g| !g.is_empty()))
        .cloned()
        .unwrap_or(default)
}
