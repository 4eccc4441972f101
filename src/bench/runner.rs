//! Runs `coherence bench`: warm-up, decode, concurrency sweep, prefill and the speculative
//! decoding window, in that order; every request is logged to `bench.jsonl` as it completes,
//! then `bench.json` and `bench.md` are written. Ctrl-C or SIGTERM abandons the round in flight,
//! sends nothing more and writes both reports from what was measured, marked `interrupted` (a
//! metrics probe in flight is abandoned too).

use super::baseline::{compare, flatten};
use super::concurrency::Level;
use super::decode::Decode;
use super::error::BenchError;
use super::metrics::{acceptance, default_metrics_url, MetricsProbe};
use super::plan::{BenchPlan, BenchSet, BenchSettings};
use super::prefill::{Prefill, Skipped};
use super::schema::{bench_folder, BenchReport, BenchStatus, BENCH_JSON, BENCH_MD, BENCH_REQUESTS};
use super::session::{Ended, Session};
use super::warmup::Warmup;
use super::{concurrency, decode, prefill, render, target, warmup};
use crate::engine::unless_interrupted;

/// Bench every endpoint of the set, one after the other, and with more than one write the
/// side-by-side `bench.md` into the top folder. After an interruption the remaining endpoints
/// are not benched (their absence is noted in the side-by-side report).
pub async fn run_benches(set: &BenchSet) -> Result<Vec<BenchReport>, BenchError> {
    let mut reports = Vec::new();
    for plan in &set.plans {
        let report = run_bench(plan).await?;
        let stop = report.status == BenchStatus::Interrupted;
        reports.push(report);
        if stop {
            break;
        }
    }
    if set.plans.len() > 1 {
        let names: Vec<&str> = set
            .plans
            .iter()
            .map(|p| p.endpoint.spec.name.as_str())
            .collect();
        let side_by_side = render::side_by_side_markdown(&reports, &names);
        bench_folder(&set.dir)
            .write(BENCH_MD, side_by_side.as_bytes())
            .map_err(BenchError::Output)?;
    }
    Ok(reports)
}

/// Run every phase of the plan and write the run folder.
pub async fn run_bench(plan: &BenchPlan) -> Result<BenchReport, BenchError> {
    let (target, endpoint) = target::resolve(&plan.endpoint, &plan.client).await?;
    let folder = bench_folder(&plan.dir);
    folder.create().map_err(BenchError::Setup)?;
    let log = folder
        .create_journal(BENCH_REQUESTS)
        .map_err(BenchError::Setup)?;
    let started_at = chrono::Utc::now();
    let mut session = Session::start(&target, plan, log);
    session.note(&format!(
        "bench {} ({}, model {}), stream:false, tok/s = usage.completion_tokens / wall time",
        endpoint.name, endpoint.base_url, endpoint.model
    ));
    let settings = &plan.settings;
    let (sizes, skipped) = prefill::fit(&settings.prefill, endpoint.max_model_len);
    for s in &skipped {
        session.note(&format!("prefill {}: skipped, {}", s.tokens, s.reason));
    }

    let warm = warmup::run(&mut session, settings.warmup, &settings.concurrency).await;
    let metrics_url = plan
        .metrics_url
        .clone()
        .unwrap_or_else(|| default_metrics_url(&endpoint.base_url));
    let probe = MetricsProbe::new(&metrics_url, plan.endpoint.key.clone(), &plan.client)
        .map_err(BenchError::Setup)?;
    let interrupted = || Err("interrupted".to_string());
    let before = if session.stopped() {
        interrupted()
    } else {
        unless_interrupted(probe.read())
            .await
            .unwrap_or_else(interrupted)
    };
    let decode = measure_decode(&mut session, settings, &warm).await;
    let levels = measure_concurrency(&mut session, settings, &warm).await;
    let (prefills, skipped) = measure_prefill(&mut session, settings, &sizes, skipped).await;
    // After an interruption the window is not closed: abandoned requests may still be decoding.
    // A probe that hangs does not hold up an interruption either.
    let after = if session.stopped() {
        None
    } else {
        unless_interrupted(probe.read()).await
    };
    let (spec_decode, status) = match after {
        Some(after) => (
            Some(acceptance(&probe.url, before, after)),
            BenchStatus::Finished,
        ),
        None => (None, BenchStatus::Interrupted),
    };
    let ended = session.finish();

    let mut report = BenchReport {
        tool: crate::run_folder::tool_version(),
        kind: "bench".into(),
        status,
        endpoint,
        started_at,
        finished_at: chrono::Utc::now(),
        settings: settings.clone(),
        warmup: warm.summary(),
        decode,
        concurrency: levels,
        prefill: prefills,
        prefill_skipped: skipped,
        spec_decode,
        problems: Vec::new(),
        baseline: None,
        notes: Vec::new(),
    };
    conclude(&mut report, plan, ended);
    folder
        .write(BENCH_JSON, render::bench_json(&report).as_bytes())
        .and_then(|()| folder.write(BENCH_MD, render::bench_markdown(&report).as_bytes()))
        .map_err(BenchError::Output)?;
    Ok(report)
}

/// `--runs` decode requests; the cold rate comes from the first warm-up request, else the first
/// measured run. None when nothing was measured (`--runs 0`, or interrupted before).
async fn measure_decode(
    session: &mut Session<'_>,
    settings: &BenchSettings,
    warm: &Warmup,
) -> Option<Decode> {
    let runs = decode::run(session, settings.runs).await;
    (!runs.is_empty()).then(|| {
        let (cold, source) = match warm.decode.first() {
            Some(s) => (Some(s), "warm-up request 1"),
            None => (runs.first(), "first measured run (no warm-up)"),
        };
        decode::decode_of(settings.max_tokens, &runs, cold, source)
    })
}

/// Every concurrency level reached, with its warm-up round as the cold number.
async fn measure_concurrency(
    session: &mut Session<'_>,
    settings: &BenchSettings,
    warm: &Warmup,
) -> Vec<Level> {
    let mut levels = Vec::new();
    for &n in &settings.concurrency {
        let rounds = concurrency::run(session, n, settings.rounds).await;
        if rounds.is_empty() {
            continue; // interrupted before this level
        }
        let cold = warm.rounds.iter().find(|(m, _)| *m == n).map(|(_, r)| r);
        levels.push(concurrency::level_of(n, &rounds, cold));
    }
    levels
}

/// Every size that fits, smallest first as given. Once the server rejects a size, it and every
/// larger one join `skipped` with the reason.
async fn measure_prefill(
    session: &mut Session<'_>,
    settings: &BenchSettings,
    sizes: &[u64],
    mut skipped: Vec<Skipped>,
) -> (Vec<Prefill>, Vec<Skipped>) {
    let mut prefills = Vec::new();
    let mut rejected: Option<u64> = None;
    for &tokens in sizes {
        if let Some(limit) = rejected.filter(|r| tokens >= *r) {
            skipped.push(Skipped {
                tokens,
                reason: format!("not sent: the server rejected {limit} tokens"),
            });
            continue;
        }
        let samples = prefill::run(session, tokens, settings.prefill_runs).await;
        if samples.is_empty() {
            continue; // interrupted before this size
        }
        match samples.first().and_then(|s| s.rejection()) {
            Some(reason) => {
                rejected = Some(tokens);
                skipped.push(Skipped {
                    tokens,
                    reason: format!("rejected by the server ({reason})"),
                });
            }
            None => prefills.push(prefill::prefill_of(tokens, &samples)),
        }
    }
    (prefills, skipped)
}

/// What follows the measurements: the problems, the notes on an interruption (where it came,
/// what was not reached) and the comparison with `--baseline`.
fn conclude(report: &mut BenchReport, plan: &BenchPlan, ended: Ended) {
    report.problems = ended.problems;
    if report.status == BenchStatus::Interrupted {
        let when = ended
            .stopped_in
            .as_deref()
            .unwrap_or("after the last request");
        report
            .notes
            .push(format!("interrupted (Ctrl-C or SIGTERM) {when}"));
        let missing = report.not_reached();
        if !missing.is_empty() {
            report
                .notes
                .push(format!("not measured: {}", missing.join("; ")));
        }
    }
    if let Some(base) = &plan.baseline {
        let value = serde_json::to_value(&*report).expect("report serialises");
        report.baseline = Some(compare(base, &flatten(&value)));
    }
}
