//! Runs `coherence bench`: warm-up, decode, concurrency sweep, prefill and the speculative
//! decoding window, in that order; every request is logged to `bench.jsonl` as it completes,
//! then `bench.json` and `bench.md` are written. Ctrl-C or SIGTERM abandons the round in flight,
//! sends nothing more and writes both reports from what was measured, marked `interrupted`.

use std::path::Path;

use anyhow::Context;

use super::baseline::{compare, flatten};
use super::error::BenchError;
use super::log::{write_files, JsonLines, BENCH_JSON, BENCH_MD, BENCH_REQUESTS};
use super::metrics::{acceptance, default_metrics_url, MetricsProbe};
use super::plan::BenchPlan;
use super::prefill::Skipped;
use super::report::{BenchReport, BenchStatus};
use super::session::Session;
use super::{concurrency, decode, prefill, render, target, warmup};

/// Run every phase of the plan and write the run folder.
pub async fn run_bench(plan: &BenchPlan) -> Result<BenchReport, BenchError> {
    let (target, endpoint) = target::resolve(&plan.endpoint, &plan.client).await?;
    std::fs::create_dir_all(&plan.dir)
        .with_context(|| format!("cannot create run folder {}", plan.dir.display()))
        .map_err(BenchError::Setup)?;
    let log = JsonLines::create(&plan.dir.join(BENCH_REQUESTS)).map_err(BenchError::Setup)?;
    let started_at = chrono::Utc::now();
    let mut b = Session::start(&target, plan, log);
    b.note(&format!(
        "bench {} ({}, model {}), stream:false, tok/s = usage.completion_tokens / wall time",
        endpoint.name, endpoint.base_url, endpoint.model
    ));
    let (sizes, mut skipped) = prefill::fit(&plan.settings.prefill, endpoint.max_model_len);
    for s in &skipped {
        b.note(&format!("prefill {}: skipped, {}", s.tokens, s.reason));
    }

    let warm = warmup::run(&mut b, plan.settings.warmup, &plan.settings.concurrency).await;

    let metrics_url = plan
        .metrics_url
        .clone()
        .unwrap_or_else(|| default_metrics_url(&endpoint.base_url));
    let probe = MetricsProbe::new(&metrics_url, plan.endpoint.key.clone(), &plan.client)
        .map_err(BenchError::Setup)?;
    let before = if b.stopped() {
        Err("interrupted".to_string())
    } else {
        probe.read().await
    };

    let runs = decode::run(&mut b, plan.settings.runs).await;
    let decode = (!runs.is_empty()).then(|| {
        let (cold, source) = match warm.decode.first() {
            Some(s) => (Some(s), "warm-up request 1"),
            None => (runs.first(), "first measured run (no warm-up)"),
        };
        decode::summarize(plan.settings.max_tokens, &runs, cold, source)
    });

    let mut levels = Vec::new();
    for &n in &plan.settings.concurrency {
        let rounds = concurrency::run(&mut b, n, plan.settings.rounds).await;
        if rounds.is_empty() {
            continue; // interrupted before this level
        }
        let cold = warm.rounds.iter().find(|(m, _)| *m == n).map(|(_, r)| r);
        levels.push(concurrency::summarize(n, &rounds, cold));
    }

    let mut prefills = Vec::new();
    let mut rejected: Option<u64> = None;
    for &tokens in &sizes {
        if let Some(limit) = rejected.filter(|r| tokens >= *r) {
            skipped.push(Skipped {
                tokens,
                reason: format!("not sent: the server rejected {limit} tokens"),
            });
            continue;
        }
        let samples = prefill::run(&mut b, tokens, plan.settings.prefill_runs).await;
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
            None => prefills.push(prefill::summarize(tokens, &samples)),
        }
    }

    // After an interruption the window is not closed: abandoned requests may still be decoding.
    let (spec_decode, status) = if b.stopped() {
        (None, BenchStatus::Interrupted)
    } else {
        let after = probe.read().await;
        (
            Some(acceptance(&probe.url, before, after)),
            BenchStatus::Finished,
        )
    };
    let ended = b.finish();

    let mut report = BenchReport {
        tool: format!("coherence {}", env!("CARGO_PKG_VERSION")),
        kind: "bench".into(),
        status,
        endpoint,
        started_at,
        finished_at: chrono::Utc::now(),
        settings: plan.settings.clone(),
        warmup: warm.summary(),
        decode,
        concurrency: levels,
        prefill: prefills,
        prefill_skipped: skipped,
        spec_decode,
        problems: ended.problems,
        baseline: None,
        notes: Vec::new(),
    };
    if status == BenchStatus::Interrupted {
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
        let value = serde_json::to_value(&report).expect("report serialises");
        report.baseline = Some(compare(base, &flatten(&value)));
    }
    write_report(&plan.dir, &report).map_err(BenchError::Output)?;
    Ok(report)
}

fn write_report(dir: &Path, report: &BenchReport) -> anyhow::Result<()> {
    write_files(
        dir,
        &[
            (BENCH_JSON, render::bench_json(report)),
            (BENCH_MD, render::bench_markdown(report)),
        ],
    )
}
