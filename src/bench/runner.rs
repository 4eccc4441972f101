//! Runs `coherence bench`: warm-up, decode, concurrency sweep, prefill and the speculative
//! decoding window, in that order; every request is logged to `bench.jsonl` as it completes,
//! then `bench.json` and `bench.md` are written. Ctrl-C or SIGTERM abandons the round in flight,
//! sends nothing more and writes both reports from what was measured, marked `interrupted`.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;

use super::baseline::{compare, flatten};
use super::log::{write_files, JsonLines};
use super::metrics::{acceptance, default_metrics_url, MetricsProbe};
use super::plan::BenchPlan;
use super::prefill::Skipped;
use super::progress::Live;
use super::prompts::{chat_body, decode_prompt, sized_prompt, user};
use super::report::{BenchReport, BenchStatus, Settings};
use super::round::{round, Round};
use super::sample::Sample;
use super::{concurrency, decode, prefill, render, target, warmup};
use crate::error::CliError;
use crate::run::{interrupted, Target};

pub const REPORT_JSON: &str = "bench.json";
pub const REPORT_MD: &str = "bench.md";
pub const REQUESTS_FILE: &str = "bench.jsonl";

/// The state shared by the phases: where to send, the time origin, the request log.
pub struct Bencher<'a> {
    target: &'a Target,
    plan: &'a BenchPlan,
    origin: Instant,
    log: JsonLines,
    live: Live,
    sent: u64,
    /// Turns true on Ctrl-C or SIGTERM.
    stop: watch::Receiver<bool>,
    /// When the interruption came (`during <round>` or `before <round>`); once set, no
    /// request is sent.
    stopped_in: Option<String>,
    /// One line per failed or unusable request.
    pub problems: Vec<String>,
}

#[derive(Serialize)]
struct Line<'a> {
    phase: &'a str,
    n: usize,
    round: u32,
    #[serde(flatten)]
    sample: &'a Sample,
}

impl Bencher<'_> {
    /// A decode-shaped request: a long essay, `--max-tokens` budget.
    pub fn decode_body(&mut self) -> Value {
        self.sent += 1;
        chat_body(
            &self.target.model,
            user(&decode_prompt(self.sent)),
            self.plan.max_tokens,
            0.0,
            &self.plan.params,
        )
    }

    /// A prompt of about `tokens` tokens, unique to this request, answered with one token.
    pub fn prefill_body(&mut self, tokens: u64) -> Value {
        self.sent += 1;
        let nonce = self.origin.elapsed().as_nanos() as u64 ^ (self.sent << 48);
        chat_body(
            &self.target.model,
            user(&sized_prompt(tokens, nonce)),
            1,
            0.0,
            &self.plan.params,
        )
    }

    /// Send `bodies` together; log every sample and remember every problem. None, with nothing
    /// sent or logged, once the bench is interrupted (also while this round is in flight).
    pub async fn round(&mut self, phase: &str, index: u32, bodies: Vec<Value>) -> Option<Round> {
        let at = format!("{phase} (n={}, round {})", bodies.len(), index + 1);
        if self.stopped() {
            if self.stopped_in.is_none() {
                self.stop_at(format!("before {at}"));
            }
            return None;
        }
        self.live.activity(&format!(
            "{phase}: {} request(s) in flight, {:.0} s elapsed",
            bodies.len(),
            self.origin.elapsed().as_secs_f64()
        ));
        let mut stop = self.stop.clone();
        let r = tokio::select! {
            r = round(&self.target.client, &bodies, self.origin) => r,
            Ok(_) = stop.wait_for(|s| *s) => {
                self.stop_at(format!(
                    "during {at}; the requests then in flight were abandoned and are not counted"
                ));
                return None;
            }
        };
        for s in &r.samples {
            let line = Line {
                phase,
                n: bodies.len(),
                round: index,
                sample: s,
            };
            if let Err(e) = self.log.append(&line) {
                self.problems.push(format!("{e:#}"));
            }
            // A prompt the server rejects as too long becomes a skipped size, not a failure.
            let skipped_size = phase == "prefill" && prefill::rejection(s).is_some();
            if let Some(t) = unmeasurable(s).filter(|_| !skipped_size) {
                self.problems.push(format!("{at}: {t}"));
                self.live.note(&format!("  {phase}: {t}"));
            }
        }
        Some(r)
    }

    pub fn note(&self, line: &str) {
        self.live.note(line);
    }

    pub fn stopped(&self) -> bool {
        self.stopped_in.is_some() || *self.stop.borrow()
    }

    fn stop_at(&mut self, when: String) {
        self.live.note(&format!(
            "interrupted {when}: writing the report from what was measured"
        ));
        self.stopped_in = Some(when);
    }
}

/// A flag that turns true on Ctrl-C or SIGTERM (the handlers are installed when the watching
/// task first runs, at the caller's next await).
fn interrupt_flag() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        interrupted().await;
        let _ = tx.send(true);
    });
    rx
}

/// Why a sample cannot be measured: no completion, or no token count. An empty reply is not a
/// problem here: the server generated (and counted) its tokens all the same.
fn unmeasurable(s: &Sample) -> Option<String> {
    if !s.has_completion() {
        s.trouble()
    } else if s.completion_tokens.is_none() || s.prompt_tokens.is_none() {
        Some("the server reported no usage token counts; rates cannot be computed".into())
    } else {
        None
    }
}

/// Run every phase of the plan and write the run folder.
pub async fn run_bench(plan: &BenchPlan) -> Result<BenchReport, CliError> {
    let (target, endpoint) = target::resolve(&plan.endpoint, &plan.client).await?;
    std::fs::create_dir_all(&plan.dir)
        .with_context(|| format!("cannot create run folder {}", plan.dir.display()))
        .map_err(CliError::usage)?;
    let log = JsonLines::create(&plan.dir.join(REQUESTS_FILE)).map_err(CliError::usage)?;
    let started_at = chrono::Utc::now();
    let mut b = Bencher {
        target: &target,
        plan,
        origin: Instant::now(),
        log,
        live: Live::new(plan.quiet, Duration::from_secs(10)),
        sent: 0,
        stop: interrupt_flag(),
        stopped_in: None,
        problems: Vec::new(),
    };
    b.note(&format!(
        "bench {} ({}, model {}), stream:false, tok/s = usage.completion_tokens / wall time",
        endpoint.name, endpoint.base_url, endpoint.model
    ));
    let (sizes, mut skipped) = prefill::fit(&plan.prefill, endpoint.max_model_len);
    for s in &skipped {
        b.note(&format!("prefill {}: skipped, {}", s.tokens, s.reason));
    }

    let warm = warmup::run(&mut b, plan.warmup, &plan.concurrency).await;

    let metrics_url = plan
        .metrics_url
        .clone()
        .unwrap_or_else(|| default_metrics_url(&endpoint.base_url));
    let probe = MetricsProbe::new(&metrics_url, plan.endpoint.key.clone(), &plan.client)
        .map_err(CliError::usage)?;
    let before = if b.stopped() {
        Err("interrupted".to_string())
    } else {
        probe.read().await
    };

    let runs = decode::run(&mut b, plan.runs).await;
    let decode = (!runs.is_empty()).then(|| {
        let (cold, source) = match warm.decode.first() {
            Some(s) => (Some(s), "warm-up request 1"),
            None => (runs.first(), "first measured run (no warm-up)"),
        };
        decode::summarize(plan.max_tokens, &runs, cold, source)
    });

    let mut levels = Vec::new();
    for &n in &plan.concurrency {
        let rounds = concurrency::run(&mut b, n, plan.rounds).await;
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
        let samples = prefill::run(&mut b, tokens, plan.prefill_runs).await;
        if samples.is_empty() {
            continue; // interrupted before this size
        }
        match samples.first().and_then(prefill::rejection) {
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
    b.live.finish();

    let mut report = BenchReport {
        tool: format!("coherence {}", env!("CARGO_PKG_VERSION")),
        kind: "bench".into(),
        status,
        endpoint,
        started_at,
        finished_at: chrono::Utc::now(),
        settings: Settings {
            warmup: plan.warmup,
            runs: plan.runs,
            max_tokens: plan.max_tokens,
            concurrency: plan.concurrency.clone(),
            rounds: plan.rounds,
            prefill: plan.prefill.clone(),
            prefill_runs: plan.prefill_runs,
            stream: false,
            params: plan.params.clone(),
        },
        warmup: warm.summary(),
        decode,
        concurrency: levels,
        prefill: prefills,
        prefill_skipped: skipped,
        spec_decode,
        problems: b.problems,
        baseline: None,
        notes: Vec::new(),
    };
    if status == BenchStatus::Interrupted {
        let when = b.stopped_in.as_deref().unwrap_or("after the last request");
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
    write_report(&plan.dir, &report).map_err(CliError::incomplete)?;
    Ok(report)
}

fn write_report(dir: &Path, report: &BenchReport) -> anyhow::Result<()> {
    write_files(
        dir,
        &[
            (REPORT_JSON, render::bench_json(report)),
            (REPORT_MD, render::bench_markdown(report)),
        ],
    )
}
