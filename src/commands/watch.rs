//! `coherence watch NAME --baseline RUN`: check an endpoint against a pinned baseline run, once
//! (`--once`, for cron and CI) or on a schedule (`--every`), each check a small probe sent as a
//! comparison against the baseline (its own run folder), read on both axes, estimated for a
//! substituted share, stored in the history and printed as one line (or one JSON object).
//! NAME is `[endpoint.NAME]` of coherence.toml when the file defines it; `--all` watches every
//! endpoint there with a `baseline`, a round of checks side by side; `--metrics-file` writes the
//! latest checks for Prometheus.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, bail};

use super::baseline_plan::{plan_against, AgainstBaselines};
use super::config::{load_config, Config, DEFAULT_CONFIG};
use super::flags::{checked_base_url, client_options, named_spec, with_keys};
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
use crate::run::{probe_logprobs, RunPlan};
use crate::run_folder::write_atomic;
use crate::watch::alert::{alerts, run_alert, ALERT_TIMEOUT};
use crate::watch::fleet::{run_round, Slot};
use crate::watch::metrics;
use crate::watch::probe::{self, Probe, Role};
use crate::watch::share::substituted;

/// Time between checks when neither `--once` nor `--every` is given.
const DEFAULT_EVERY: Duration = Duration::from_secs(3600);
/// Requests in flight to a watched endpoint when neither `--concurrency` nor its
/// `[endpoint.NAME]` says.
const DEFAULT_CONCURRENCY: usize = 2;

pub fn watch(args: &WatchArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    let db = args.db.clone().unwrap_or_else(default_db);
    let config = load_config(args.config.as_deref()).usage_err()?;
    let chosen = chosen(args, config.as_ref()).usage_err()?;
    check_metrics_file(args.metrics_file.as_deref()).usage_err()?;
    let watches = chosen
        .into_iter()
        .map(|c| Watch::prepare(args, c, &db))
        .collect::<Result<Vec<_>, _>>()?;
    let mut history = History::open_for_writing(&db).usage_err()?;
    for w in &watches {
        announce(args, w, &db);
    }
    for w in &watches {
        warn_without_logprobs(w);
    }
    // Checks side by side each start a runtime of their own: one listener for Ctrl-C and
    // SIGTERM, alive as long as the watch, serves them all.
    let _signals = (watches.len() > 1).then(keep_listening).transpose()?;
    let every = args.every.unwrap_or(DEFAULT_EVERY);
    let slots: Vec<Slot> = watches.iter().map(Watch::slot).collect();
    let mut exit = Exit::Success;
    let mut done = 0;
    loop {
        let started = chrono::Utc::now();
        let mut interrupted = false;
        let mut failure: Option<CliError> = None;
        run_round(
            &slots,
            args.total_concurrency,
            |i| watches[i].check(&db, argv.clone()),
            |i, outcome| {
                if failure.is_some() {
                    return;
                }
                let stored = outcome.and_then(|(check, stopped)| {
                    interrupted |= stopped;
                    record(args, &watches[i], &mut history, &db, &check)?;
                    Ok(exit_of(&check))
                });
                match stored {
                    Ok(e) => exit = worse(exit, e),
                    Err(e) => failure = Some(e),
                }
            },
        );
        if let Some(e) = failure {
            return Err(e);
        }
        if let Some(path) = &args.metrics_file {
            if let Err(e) = write_metrics(path, &history) {
                eprintln!("warning: --metrics-file {}: {e:#}", path.display());
                exit = worse(exit, Exit::Incomplete);
            }
        }
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

/// A watch as the flags and the config file choose it, before its baseline is read.
struct Chosen {
    name: String,
    baseline: PathBuf,
    /// `[endpoint.NAME]` of the config file, when it defines the name.
    named: Option<EndpointSpec>,
    /// Its `concurrency`, when it sets one.
    concurrency: Option<usize>,
}

/// `--all`: every endpoint of the config file with a baseline; else NAME, with its
/// `[endpoint.NAME]` when the file defines it (a name it does not define keeps its meaning: a
/// watch of the baseline's reference, or of `--endpoint`).
fn chosen(args: &WatchArgs, config: Option<&Config>) -> anyhow::Result<Vec<Chosen>> {
    if args.all {
        let Some(config) = config else {
            bail!("--all watches the endpoints of {DEFAULT_CONFIG}, and there is none here; pass --config FILE");
        };
        let fleet = config
            .endpoints
            .iter()
            .filter_map(|e| e.baseline.as_ref().map(|b| (e, b)))
            .map(|(e, baseline)| {
                check_name(&e.name)?;
                Ok(Chosen {
                    name: e.name.clone(),
                    baseline: baseline.clone(),
                    named: Some(named_spec(config, e)?),
                    concurrency: e.concurrency,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if fleet.is_empty() {
            bail!(
                "--all: {} names no endpoint with a baseline; add `baseline = \"RUN_DIR\"` to each [endpoint.NAME] to watch",
                config.file.display()
            );
        }
        return Ok(fleet);
    }
    let name = args.name.clone().unwrap_or_default();
    check_name(&name)?;
    let entry = config.and_then(|c| c.get(&name).map(|e| (c, e)));
    let baseline = args
        .baseline
        .clone()
        .or_else(|| entry.and_then(|(_, e)| e.baseline.clone()))
        .ok_or_else(|| {
            anyhow!(
                "--baseline: give the pinned baseline run of `{name}` (or `baseline = \"RUN_DIR\"` in its [endpoint.{name}] of {DEFAULT_CONFIG})"
            )
        })?;
    Ok(vec![Chosen {
        name,
        baseline,
        named: entry.map(|(c, e)| named_spec(c, e)).transpose()?,
        concurrency: entry.and_then(|(_, e)| e.concurrency),
    }])
}

/// One watch: its baseline read, its endpoint, probe and check plan, made once.
struct Watch {
    name: String,
    /// The baseline as named (flag or config file).
    baseline: PathBuf,
    /// The baseline's sampling asked for decode logprobs.
    baseline_logprobs: bool,
    /// The command line that made the baseline (keys redacted), when its manifest kept it.
    baseline_command: Option<Vec<String>>,
    watched: Watched,
    probe: Probe,
    /// The plan of every check (each sets its own folder); one check of a watch at a time.
    plan: Mutex<RunPlan>,
}

impl Watch {
    /// Read the baseline, choose the probe, plan the checks; in a fleet, errors name the watch.
    fn prepare(args: &WatchArgs, chosen: Chosen, db: &Path) -> Result<Watch, CliError> {
        let named = |e: anyhow::Error| match args.all {
            true => anyhow!("watch {}: {e:#}", chosen.name),
            false => e,
        };
        let baseline = SavedRun::read(&chosen.baseline)
            .map_err(|e| CliError::unreadable(named(anyhow!("--baseline: {e:#}"))))?;
        let watched = Watched::of(args, &chosen, &baseline)
            .map_err(named)
            .usage_err()?;
        let probe = choose_probe(&baseline, args.probe)
            .map_err(named)
            .usage_err()?;
        let plan = check_plan(args, &chosen, &baseline, &watched, &probe, db)
            .map_err(named)
            .usage_err()?;
        Ok(Watch {
            baseline_logprobs: baseline.manifest.sampling.logprobs,
            baseline_command: baseline
                .manifest
                .header
                .invocations
                .first()
                .map(|i| i.args.clone()),
            name: chosen.name,
            baseline: chosen.baseline,
            watched,
            probe,
            plan: Mutex::new(plan),
        })
    }

    /// What its checks ask of a round's bounds.
    fn slot(&self) -> Slot {
        Slot {
            endpoint: self.watched.spec.base_url.clone(),
            requests: self.plan.lock().map_or(1, |p| p.concurrency),
        }
    }

    /// One check, run now in its own folder; whether it was interrupted. An endpoint down for
    /// one check is that check's finding, not the watch's end; a usage error ends the watch.
    fn check(&self, db: &Path, argv: Vec<String>) -> Result<(Check, bool), CliError> {
        let mut plan = self.plan.lock().unwrap_or_else(|e| e.into_inner());
        let started = chrono::Utc::now();
        plan.dir = check_dir(db, &self.name, started);
        if let Some(gone) = baseline_gone(&self.baseline) {
            // Its answers are replayed from the folder: without them nothing can be compared.
            return Ok((not_run(self, &plan, started, gone), false));
        }
        match run_and_score(&plan, &LoadPlan::default(), None, argv) {
            Ok((results, interrupted)) => Ok((
                check_of(self, &plan, &results, interrupted, started),
                interrupted,
            )),
            Err(e) => {
                let e = CliError::from(e);
                if e.exit() == Exit::Usage {
                    return Err(e);
                }
                Ok((not_run(self, &plan, started, &e), false))
            }
        }
    }
}

/// A check stored, printed, alerted on, and the watch's old run folders pruned.
fn record(
    args: &WatchArgs,
    w: &Watch,
    history: &mut History,
    db: &Path,
    check: &Check,
) -> Result<(), CliError> {
    history
        .insert(check)
        .map_err(|e| CliError::incomplete(anyhow!("{}: {e:#}", db.display())))?;
    print_check(check, args.json)?;
    if let Some(command) = args.on_alert.as_deref().filter(|_| alerts(check)) {
        if let Err(e) = run_alert(command, check, ALERT_TIMEOUT) {
            eprintln!("warning: --on-alert: {e:#}");
        }
    }
    if let Some(keep) = args.keep_runs {
        remove_old_runs(history, &w.name, &check_root(db, &w.name), keep);
    }
    Ok(())
}

/// `--metrics-file`: its folder must exist (the file is written there, then renamed).
fn check_metrics_file(path: Option<&Path>) -> anyhow::Result<()> {
    let Some(path) = path else { return Ok(()) };
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if path.file_name().is_none() || !folder.is_dir() {
        bail!(
            "--metrics-file {}: give a file in an existing folder",
            path.display()
        );
    }
    Ok(())
}

/// The latest check of every watch in the history, as Prometheus metrics, written atomically.
fn write_metrics(path: &Path, history: &History) -> anyhow::Result<()> {
    let latest = history.latest()?;
    write_atomic(path, metrics::render(&latest).as_bytes())
}

/// A runtime whose task listens for Ctrl-C and SIGTERM ([`crate::engine::interrupted`]) while
/// it lives, so a check's runtime ending does not take the listener with it.
fn keep_listening() -> Result<tokio::runtime::Runtime, CliError> {
    let rt = super::runtime()?;
    rt.block_on(async {
        let _ = tokio::time::timeout(Duration::ZERO, crate::engine::interrupted()).await;
    });
    Ok(rt)
}

/// A baseline without decode logprobs, of an endpoint that returns them harmlessly: each check
/// compares greedy texts alone and misses what only the logprobs show. Said on stderr, with the
/// command that makes the baseline again with them; an endpoint that does not answer the probe
/// is left to the check to report.
fn warn_without_logprobs(w: &Watch) {
    if w.baseline_logprobs {
        return;
    }
    let Ok(rt) = super::runtime() else { return };
    let plan = w.plan.lock().unwrap_or_else(|e| e.into_inner());
    let Ok(finding) = rt.block_on(probe_logprobs(&plan)) else {
        return;
    };
    if finding.on {
        eprintln!(
            "warning: watch {}: the baseline {} has no decode logprobs, but {} returns them \
             (and the same greedy text with them): each check compares greedy texts alone and can \
             miss a change of numerics the logprobs show. Make the baseline again with them:\n  {}\n\
             and watch with --baseline on the new folder.",
            w.name,
            w.baseline.display(),
            w.watched.spec.base_url,
            remade_with_logprobs(&w.baseline, w.baseline_command.as_deref())
        );
    }
}

/// The command that made the baseline (its first invocation, keys already redacted), asking
/// for logprobs and writing a new folder beside it.
fn remade_with_logprobs(baseline: &Path, recorded: Option<&[String]>) -> String {
    let out = format!(
        "{}-logprobs",
        baseline.display().to_string().trim_end_matches('/')
    );
    let mut words: Vec<String> = match recorded {
        Some(args) if args.len() > 1 => args[1..]
            .iter()
            .filter(|a| *a != "--no-logprobs" && *a != "--logprobs")
            .cloned()
            .collect(),
        _ => vec!["determinism".into(), "--repeats".into(), "2".into()],
    };
    match words.iter().position(|a| a == "--out") {
        Some(i) if i + 1 < words.len() => words[i + 1] = out,
        _ => {
            words.retain(|a| !a.starts_with("--out="));
            words.extend(["--out".into(), out]);
        }
    }
    words.push("--logprobs".into());
    let mut line = String::from("coherence");
    for w in words {
        line.push(' ');
        line.push_str(&shell_word(&w));
    }
    line
}

/// `w` as one shell word: as is when it needs no quoting, else single-quoted.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// The endpoint a watch checks, as the check's run names it.
struct Watched {
    spec: EndpointSpec,
}

impl Watched {
    /// The endpoint of `--endpoint`, else of `[endpoint.NAME]`, else the baseline reference's
    /// URL; the model and key variable likewise, the baseline's unless given.
    fn of(args: &WatchArgs, chosen: &Chosen, baseline: &SavedRun) -> anyhow::Result<Watched> {
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
        let named = chosen.named.as_ref();
        let name = if chosen.name == reference.spec.name {
            format!("{}-now", chosen.name)
        } else {
            chosen.name.clone()
        };
        // Checked as compare checks it: no credentials (never printed), query or fragment.
        let base_url = match &args.endpoint {
            Some(url) => {
                checked_base_url(&format!("--endpoint `{url}`"), "--api-key-env ENVVAR", url)?
            }
            None => named
                .map(|n| n.base_url.clone())
                .unwrap_or_else(|| reference.spec.base_url.clone()),
        };
        let model = args
            .model
            .clone()
            .or_else(|| named.and_then(|n| n.model.clone()))
            .or_else(|| {
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
                    .or_else(|| named.and_then(|n| n.api_key_env.clone()))
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

fn announce(args: &WatchArgs, w: &Watch, db: &Path) {
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
        w.name,
        w.watched.spec.name,
        w.watched.spec.base_url,
        w.baseline.display(),
        w.probe.items.len(),
        w.probe.count(Role::Border),
        w.probe.count(Role::Stable),
        w.probe.count(Role::Graded),
        db.display()
    );
    for note in &w.probe.notes {
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
    chosen: &Chosen,
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
        out: Some(check_dir(db, &chosen.name, chrono::Utc::now())),
        concurrency: {
            let own = args
                .concurrency
                .or(chosen.concurrency)
                .unwrap_or(DEFAULT_CONCURRENCY);
            // A fleet's round never has more than the total in flight.
            if args.all {
                own.min(args.total_concurrency)
            } else {
                own
            }
        },
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
    w: &Watch,
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
        ..not_run(w, plan, started, "")
    }
}

/// A check that could not run (the endpoint unreachable, say): `incomplete`, nothing decided,
/// `why` kept. Its figures are those of no evidence; [`check_of`] fills them in for a run.
fn not_run(
    w: &Watch,
    plan: &RunPlan,
    started: chrono::DateTime<chrono::Utc>,
    why: impl std::fmt::Display,
) -> Check {
    Check {
        name: w.name.clone(),
        started_at: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        endpoint: w.watched.spec.base_url.clone(),
        baseline: absolute(&w.baseline),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_remade_baseline_is_its_own_command_with_logprobs_into_a_new_folder() {
        let made = words(&[
            "/usr/bin/coherence",
            "determinism",
            "--endpoint",
            "prod=http://10.0.0.1:8000/v1",
            "--no-logprobs",
            "--out",
            "baselines/prod/",
            "--param",
            "stop=[\"\\n\"]",
        ]);
        assert_eq!(
            remade_with_logprobs(Path::new("baselines/prod/"), Some(&made)),
            "coherence determinism --endpoint prod=http://10.0.0.1:8000/v1 --out \
             baselines/prod-logprobs --param 'stop=[\"\\n\"]' --logprobs"
        );
        let no_out = words(&["coherence", "compare", "a", "b", "--out=x"]);
        assert_eq!(
            remade_with_logprobs(Path::new("x"), Some(&no_out)),
            "coherence compare a b --out x-logprobs --logprobs"
        );
        assert_eq!(
            remade_with_logprobs(Path::new("it's"), None),
            "coherence determinism --repeats 2 --out 'it'\\''s-logprobs' --logprobs"
        );
    }
}
