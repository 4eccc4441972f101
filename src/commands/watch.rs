//! `coherence watch NAME --baseline RUN`: check an endpoint against a pinned baseline run, once
//! (`--once`, for cron and CI) or on a schedule (`--every`), each check a small probe sent as a
//! comparison against the baseline (its own run folder), read on both axes, estimated for a
//! substituted share, stored in the history and printed as one line (or one JSON object).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail};

use super::baseline_plan::{plan_against, AgainstBaselines};
use super::flags::{checked_base_url, client_options, with_keys};
use super::saved_run::SavedRun;
use super::score::catalogue_for_run;
use super::stdout;
use crate::analysis::identity::numerics::IdentityVerdict;
use crate::analysis::BehaviourVerdict;
use crate::analysis::Results;
use crate::cli::WatchArgs;
use crate::compare::run_and_score;
use crate::endpoint::EndpointSpec;
use crate::error::{CliError, Exit, UsageContext};
use crate::history::{default_db, Check, CheckStatus, History};
use crate::probes::LoadPlan;
use crate::run::RunPlan;
use crate::watch::alert::{alerts, run_alert, ALERT_TIMEOUT};
use crate::watch::probe::{self, Probe, Role};
use crate::watch::share::substituted;

/// Time between checks when neither `--once` nor `--every` is given.
const DEFAULT_EVERY: Duration = Duration::from_secs(3600);

pub fn watch(args: &WatchArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    check_name(&args.name).usage_err()?;
    let db = args.db.clone().unwrap_or_else(default_db);
    let baseline = SavedRun::read(&args.baseline)
        .map_err(|e| CliError::unreadable(anyhow!("--baseline: {e:#}")))?;
    let watched = Watched::of(args, &baseline).usage_err()?;
    let probe = choose_probe(&baseline, args.probe).usage_err()?;
    // Planned once (the baseline read, its catalogue made, its answers checked, a key in the
    // URL refused before anything prints it); each check only gets its own folder.
    let mut plan = check_plan(args, &baseline, &watched, &probe, &db).usage_err()?;
    let mut history = History::open_for_writing(&db).usage_err()?;
    announce(args, &probe, &watched, &db);
    let every = args.every.unwrap_or(DEFAULT_EVERY);
    let mut exit = Exit::Success;
    let mut done = 0;
    loop {
        let started = chrono::Utc::now();
        plan.dir = check_dir(&db, &args.name, started);
        let (check, interrupted) = if let Some(gone) = baseline_gone(&args.baseline) {
            // Its answers are replayed from the folder: without them nothing can be compared.
            (not_run(args, &watched, &plan, started, gone), false)
        } else {
            match run_and_score(&plan, &LoadPlan::default(), None, argv.clone()) {
                Ok((results, interrupted)) => (
                    check_of(args, &watched, &plan, &results, interrupted, started),
                    interrupted,
                ),
                Err(e) => {
                    let e = CliError::from(e);
                    if e.exit() == Exit::Usage {
                        return Err(e);
                    }
                    // An endpoint down for one check is that check's finding, not the watch's end.
                    (not_run(args, &watched, &plan, started, &e), false)
                }
            }
        };
        history
            .insert(&check)
            .map_err(|e| CliError::incomplete(anyhow!("{}: {e:#}", db.display())))?;
        print_check(&check, args.json)?;
        if let Some(command) = args.on_alert.as_deref().filter(|_| alerts(&check)) {
            if let Err(e) = run_alert(command, &check, ALERT_TIMEOUT) {
                eprintln!("warning: --on-alert: {e:#}");
            }
        }
        if let Some(keep) = args.keep_runs {
            remove_old_runs(&history, &args.name, &check_root(&db, &args.name), keep);
        }
        exit = worse(exit, exit_of(&check));
        done += 1;
        if interrupted || args.once || args.checks.is_some_and(|n| done >= n) {
            break;
        }
        let elapsed = (chrono::Utc::now() - started)
            .to_std()
            .unwrap_or(Duration::ZERO);
        let wait = every.saturating_sub(elapsed);
        if interrupted_while_waiting(wait)? {
            break;
        }
    }
    Ok(exit)
}

/// The endpoint a watch checks, as the check's run names it.
struct Watched {
    spec: EndpointSpec,
}

impl Watched {
    /// The endpoint of `--endpoint`, else the baseline reference's URL; the baseline's model
    /// and key variable unless given.
    fn of(args: &WatchArgs, baseline: &SavedRun) -> anyhow::Result<Watched> {
        let reference = baseline.manifest.endpoints.first().ok_or_else(|| {
            anyhow!(
                "--baseline {}: the run has no endpoint",
                baseline.dir.display()
            )
        })?;
        if !reference.replayed_from.is_empty() {
            bail!(
                "--baseline {}: its reference `{}` was itself replayed from another run; give that run",
                baseline.dir.display(),
                reference.spec.name
            );
        }
        let name = if args.name == reference.spec.name {
            format!("{}-now", args.name)
        } else {
            args.name.clone()
        };
        // Checked as compare checks it: no credentials (never printed), query or fragment.
        let base_url = match &args.endpoint {
            Some(url) => {
                checked_base_url(&format!("--endpoint `{url}`"), "--api-key-env ENVVAR", url)?
            }
            None => reference.spec.base_url.clone(),
        };
        let model = args.model.clone().or_else(|| {
            reference.spec.model.clone().or_else(|| {
                reference
                    .models
                    .as_ref()
                    .and_then(|m| m.ids.first().cloned())
            })
        });
        Ok(Watched {
            spec: EndpointSpec {
                name,
                base_url,
                model,
                api_key_env: args
                    .api_key_env
                    .clone()
                    .or_else(|| reference.spec.api_key_env.clone()),
                sampling_override: Default::default(),
            },
        })
    }
}

/// Why the baseline can no longer be replayed, when its folder or its answers are gone
/// (deleted or moved since the watch started).
fn baseline_gone(baseline: &Path) -> Option<String> {
    let records =
        crate::run_folder::compare::folder(baseline).file(crate::run_folder::compare::RECORDS);
    (!records.is_file()).then(|| {
        format!(
            "the baseline {} is gone ({} is missing: deleted or moved since the watch started); nothing decided",
            baseline.display(),
            records.display()
        )
    })
}

/// A name the history and a folder can both carry.
fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        bail!("NAME `{name}`: give a watch name of letters, digits, `.`, `_` and `-` (at most 64, not starting with `.`)");
    }
    Ok(())
}

/// The probe, chosen once from the baseline's reference answers.
fn choose_probe(baseline: &SavedRun, size: usize) -> anyhow::Result<Probe> {
    let m = &baseline.manifest;
    let catalogue = catalogue_for_run(None, m)
        .map_err(|e| anyhow!("--baseline {}: {e:#}", baseline.dir.display()))?;
    let records = crate::run::journal::load_for_scoring(&baseline.dir)
        .map_err(|e| anyhow!("--baseline {}: {e:#}", baseline.dir.display()))?;
    let reference = &m.endpoints[0].spec.name;
    probe::choose(&records.records, reference, &m.prompts, &catalogue, size)
        .map_err(|e| anyhow!("--baseline {}: {e}", baseline.dir.display()))
}

fn announce(args: &WatchArgs, probe: &Probe, watched: &Watched, db: &Path) {
    if args.quiet {
        return;
    }
    let schedule = match (args.once, args.every) {
        (true, _) => "one check".to_string(),
        (false, every) => format!(
            "a check every {}",
            humantime::format_duration(every.unwrap_or(DEFAULT_EVERY))
        ),
    };
    eprintln!(
        "watch {}: {} at {} against {}; probe of {} prompts ({} border, {} stable, {} graded); {schedule}; history {}",
        args.name,
        watched.spec.name,
        watched.spec.base_url,
        args.baseline.display(),
        probe.items.len(),
        probe.count(Role::Border),
        probe.count(Role::Stable),
        probe.count(Role::Graded),
        db.display()
    );
    for note in &probe.notes {
        eprintln!("note: {note}");
    }
}

/// `DB_DIR/checks/NAME`: where a watch's checks write their run folders.
fn check_root(db: &Path, name: &str) -> PathBuf {
    db.parent()
        .unwrap_or(Path::new("."))
        .join("checks")
        .join(name)
}

/// `DB_DIR/checks/NAME/20261203T100000.123Z` (a suffix when a check of the same millisecond
/// exists).
fn check_dir(db: &Path, name: &str, started: chrono::DateTime<chrono::Utc>) -> PathBuf {
    let base = check_root(db, name);
    let stamp = started.format("%Y%m%dT%H%M%S%.3fZ").to_string();
    let mut dir = base.join(&stamp);
    let mut n = 2;
    while dir.exists() {
        dir = base.join(format!("{stamp}-{n}"));
        n += 1;
    }
    dir
}

/// A check's run: the probe sent once to the watched endpoint, the baseline's reference
/// replayed, identity decided at the watch's level (each check sets its own `dir`).
fn check_plan(
    args: &WatchArgs,
    baseline: &SavedRun,
    watched: &Watched,
    probe: &Probe,
    db: &Path,
) -> anyhow::Result<RunPlan> {
    let mut plan = plan_against(AgainstBaselines {
        baselines: std::slice::from_ref(&baseline.dir),
        allow_catalogue_change: false,
        catalogue: None,
        fresh: with_keys(vec![watched.spec.clone()])?,
        out: Some(check_dir(db, &args.name, chrono::Utc::now())),
        concurrency: args.concurrency,
        client: client_options(&args.client)?,
        quiet: true,
        fail_on: None,
        margin: None,
        reasoning_retry_budget: 0,
    })?;
    let ids = probe.ids();
    plan.scope.retain(|id| ids.contains(id));
    plan.send.retain(|id| ids.contains(id));
    plan.repeats = 1;
    plan.identity_alpha = Some(args.alpha);
    Ok(plan)
}

/// What one check found, as the history keeps it.
fn check_of(
    args: &WatchArgs,
    watched: &Watched,
    plan: &RunPlan,
    results: &Results,
    interrupted: bool,
    started: chrono::DateTime<chrono::Utc>,
) -> Check {
    let identity = results.summary.identity.as_ref();
    let pair = identity.and_then(|i| i.evidence.first());
    let test = pair.map(|p| p.test.clone()).unwrap_or_default();
    let identity_verdict = identity.map_or(IdentityVerdict::Undecided, |i| i.verdict);
    let behaviour = results.summary.behaviour.as_ref();
    let behaviour_verdict = behaviour.map_or(BehaviourVerdict::Undecided, |b| b.verdict);
    let quality = results.quality.first();
    let share = substituted(test.pair_further, test.control_further, test.ties);
    let flagged = matches!(
        identity_verdict,
        IdentityVerdict::Perturbed | IdentityVerdict::Different
    ) || behaviour_verdict == BehaviourVerdict::Different;
    let incomplete = interrupted || !results.complete;
    let status = if incomplete && !flagged {
        CheckStatus::Incomplete
    } else if flagged {
        CheckStatus::Flagged
    } else {
        CheckStatus::Unchanged
    };
    let because = if incomplete && !flagged {
        format!(
            "{} of {} requests failed after retries{}; nothing decided (the run folder keeps every record)",
            results.request_failures,
            plan.send.len(),
            if interrupted { ", interrupted" } else { "" }
        )
    } else {
        let why = |v: &[String]| v.first().cloned().unwrap_or_default();
        let identity_why = identity.map(|i| why(&i.because)).unwrap_or_default();
        match (flagged, behaviour_verdict) {
            (true, BehaviourVerdict::Different)
                if !matches!(
                    identity_verdict,
                    IdentityVerdict::Perturbed | IdentityVerdict::Different
                ) =>
            {
                format!(
                    "behaviour: {}",
                    behaviour.map(|b| why(&b.because)).unwrap_or_default()
                )
            }
            _ => format!("identity: {identity_why}"),
        }
    };
    Check {
        status,
        identity: identity_verdict.as_str().to_string(),
        behaviour: behaviour_verdict.as_str().to_string(),
        because,
        e_value: test.e_value,
        pair_further: test.pair_further as u32,
        control_further: test.control_further as u32,
        ties: test.ties as u32,
        substituted_share: share.map(|s| s.estimate),
        substituted_low: share.map(|s| s.low),
        substituted_high: share.map(|s| s.high),
        quality_difference: quality
            .filter(|q| q.graded > 0)
            .map(|q| q.difference.estimate),
        quality_low: quality.filter(|q| q.graded > 0).map(|q| q.difference.low),
        quality_high: quality.filter(|q| q.graded > 0).map(|q| q.difference.high),
        graded: quality.map_or(0, |q| q.graded as u32),
        failed: results.request_failures as u32,
        ..not_run(args, watched, plan, started, "")
    }
}

/// A check that could not run (the endpoint unreachable, say): `incomplete`, nothing decided,
/// `why` kept. Its figures are those of no evidence; [`check_of`] fills them in for a run.
fn not_run(
    args: &WatchArgs,
    watched: &Watched,
    plan: &RunPlan,
    started: chrono::DateTime<chrono::Utc>,
    why: impl std::fmt::Display,
) -> Check {
    Check {
        name: args.name.clone(),
        started_at: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        endpoint: watched.spec.base_url.clone(),
        baseline: absolute(&args.baseline),
        status: CheckStatus::Incomplete,
        identity: IdentityVerdict::Undecided.as_str().into(),
        behaviour: BehaviourVerdict::Undecided.as_str().into(),
        because: format!("the check could not run: {why}; nothing decided"),
        e_value: 1.0,
        pair_further: 0,
        control_further: 0,
        ties: 0,
        substituted_share: None,
        substituted_low: None,
        substituted_high: None,
        quality_difference: None,
        quality_low: None,
        quality_high: None,
        graded: 0,
        requests: plan.send.len() as u32,
        failed: plan.send.len() as u32,
        run_dir: absolute(&plan.dir),
    }
}

fn absolute(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// One line per check, or the check as one JSON object per line.
fn print_check(check: &Check, json: bool) -> Result<(), CliError> {
    if json {
        let line = serde_json::to_string(check).map_err(CliError::incomplete)?;
        return stdout::print(&format!("{line}\n"));
    }
    let share = match check.substituted_share {
        Some(_) => format!("; substituted {}", check.substituted_text()),
        None => String::new(),
    };
    stdout::print(&format!(
        "{} {} {}: identity {}, behaviour {}{share} — {} ({})\n",
        check.started_at,
        check.name,
        check.status.as_str().to_uppercase(),
        check.identity,
        check.behaviour,
        check.because,
        check.run_dir
    ))
}

/// 1 for a flagged check, 3 for an incomplete one, else 0.
fn exit_of(check: &Check) -> Exit {
    match check.status {
        CheckStatus::Flagged => Exit::GateFailed,
        CheckStatus::Incomplete => Exit::Incomplete,
        CheckStatus::Unchanged => Exit::Success,
    }
}

/// The exit of several checks: any flagged one flags the watch, else any incomplete one.
fn worse(a: Exit, b: Exit) -> Exit {
    let rank = |e: Exit| match e {
        Exit::GateFailed => 2,
        Exit::Incomplete => 1,
        _ => 0,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// Wait `wait` for the next check; true when Ctrl-C came first.
fn interrupted_while_waiting(wait: Duration) -> Result<bool, CliError> {
    let rt = super::runtime()?;
    Ok(rt.block_on(async {
        tokio::select! {
            _ = tokio::time::sleep(wait) => false,
            _ = tokio::signal::ctrl_c() => true,
        }
    }))
}

/// `--keep-runs N`: remove the run folders of this watch's unchanged checks but the newest
/// `keep`, only folders under `root` (the watch's own); what cannot be removed is said on
/// stderr and left.
fn remove_old_runs(history: &History, name: &str, root: &Path, keep: usize) {
    let checks = match history.checks(Some(name)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("warning: --keep-runs: {e:#}");
            return;
        }
    };
    let Ok(root) = root.canonicalize() else {
        return;
    };
    let unchanged: Vec<&Check> = checks
        .iter()
        .map(|(_, c)| c)
        .filter(|c| c.status == CheckStatus::Unchanged)
        .collect();
    let old = unchanged.len().saturating_sub(keep);
    // A folder another check still points at (a name reused after a removal) stays.
    let kept: Vec<&str> = checks
        .iter()
        .map(|(_, c)| c)
        .filter(|c| !unchanged[..old].iter().any(|o| std::ptr::eq(*o, *c)))
        .map(|c| c.run_dir.as_str())
        .collect();
    for c in unchanged[..old]
        .iter()
        .filter(|c| !kept.contains(&c.run_dir.as_str()))
    {
        let Ok(dir) = Path::new(&c.run_dir).canonicalize() else {
            continue;
        };
        if dir.starts_with(&root) && dir != root {
            if let Err(e) = std::fs::remove_dir_all(&dir) {
                eprintln!("warning: --keep-runs: {}: {e}", dir.display());
            }
        }
    }
}
