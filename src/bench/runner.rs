//! Runs `coherence bench`: warm-up, decode, concurrency sweep, prefill and the speculative
//! decoding window, in that order; every request is logged to `bench.jsonl` as it completes,
//! then `bench.json` and `bench.md` are written.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

use super::baseline::{compare, flatten};
use super::log::{write_files, JsonLines};
use super::metrics::{acceptance, default_metrics_url, MetricsProbe};
use super::plan::BenchPlan;
use super::prefill::Skipped;
use super::progress::Live;
use super::prompts::{chat_body, decode_prompt, sized_prompt, user};
use super::report::{BenchReport, Settings};
use super::round::{round, Round};
use super::sample::Sample;
use super::{concurrency, decode, prefill, render, target, warmup};
use crate::error::CliError;
use crate::run::Target;

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

    /// Send `bodies` together; log every sample and remember every problem.
    pub async fn round(&mut self, phase: &str, index: u32, bodies: Vec<Value>) -> Round {
        self.live.activity(&format!(
            "{phase}: {} request(s) in flight, {:.0} s elapsed",
            bodies.len(),
            self.origin.elapsed().as_secs_f64()
        ));
        let r = round(&self.target.client, &bodies, self.origin).await;
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
                self.problems.push(format!(
                    "{phase} (n={}, round {}): {t}",
                    bodies.len(),
                    index + 1
                ));
                self.live.note(&format!("  {phase}: {t}"));
            }
        }
        r
    }

    pub fn note(&self, line: &str) {
        self.live.note(line);
    }
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
    let before = probe.read().await;

    let runs = decode::run(&mut b, plan.runs).await;
    let decode = (plan.runs > 0).then(|| {
        let (cold, source) = match warm.decode.first() {
            Some(s) => (Some(s), "warm-up request 1"),
            None => (runs.first(), "first measured run (no warm-up)"),
        };
        decode::summarize(plan.max_tokens, &runs, cold, source)
    });

    let mut levels = Vec::new();
    for &n in &plan.concurrency {
        let rounds = concurrency::run(&mut b, n, plan.rounds).await;
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

    let after = probe.read().await;
    let spec_decode = acceptance(&probe.url, before, after);
    b.live.finish();

    let mut report = BenchReport {
        tool: format!("coherence {}", env!("CARGO_PKG_VERSION")),
        kind: "bench".into(),
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
    };
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
