//! Runs `coherence soak`: `--concurrency` workers send mixed agent-shaped traffic until
//! `--duration` has passed (requests in flight then are awaited). Every answer is appended to
//! `soak.jsonl` and flushed as it arrives, so Ctrl-C, SIGTERM or even a kill leaves a journal
//! that `coherence soak --report DIR` turns into the report.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::degenerate::is_degenerate;
use super::error::BenchError;
use super::live::Live;
use super::log::{read, write_files, JsonLines, SOAK_JSON, SOAK_MD, SOAK_META, SOAK_RECORDS};
use super::plan::SoakPlan;
use super::render;
use super::sample::{measure, SampleOutcome};
use super::soak_report::{summarize, SoakMeta, SoakRecord, SoakReport, SoakSettings, SoakStatus};
use super::target::{self, EndpointSummary};
use super::traffic::{self, BUDGETS, TEMPERATURES};
use crate::run::{interrupted, Target};
use crate::run_folder::write_atomic;

/// Running totals of what has arrived, for the live line.
#[derive(Default)]
struct RunningTotals {
    requests: usize,
    tokens: u64,
    errors: usize,
    soft_empty: usize,
    degenerate: usize,
}

impl RunningTotals {
    fn add(&mut self, r: &SoakRecord) {
        self.requests += 1;
        match r.sample.outcome {
            SampleOutcome::Error => self.errors += 1,
            SampleOutcome::SoftEmpty => self.soft_empty += 1,
            SampleOutcome::Ok => {}
        }
        if r.sample.has_completion() {
            self.tokens += r.sample.completion_tokens.unwrap_or(0);
        }
        self.degenerate += r.degenerate as usize;
    }

    fn line(&self, elapsed: Duration, total: Duration, in_flight: u64) -> String {
        let secs = elapsed.as_secs_f64().max(1e-9);
        format!(
            "soak {}/{}: {} requests, {:.1} tok/s, {} errors, {} soft-empty, {} degenerate, {in_flight} in flight",
            clock(elapsed),
            clock(total),
            self.requests,
            self.tokens as f64 / secs,
            self.errors,
            self.soft_empty,
            self.degenerate
        )
    }
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// Every record that has arrived: appended to the journal, counted and kept for the report. The
/// first journal write error is kept too; the soak goes on and fails at the end.
struct Arrivals {
    journal: JsonLines,
    records: Vec<SoakRecord>,
    totals: RunningTotals,
    write_error: Option<anyhow::Error>,
}

impl Arrivals {
    fn add(&mut self, r: SoakRecord) {
        if let Err(e) = self.journal.append(&r) {
            self.write_error.get_or_insert(e);
        }
        self.totals.add(&r);
        self.records.push(r);
    }
}

/// The workers sending traffic, and what they share.
struct Traffic {
    origin: Instant,
    deadline: Instant,
    /// Requests started so far (also the next request's `seq`).
    started: Arc<AtomicU64>,
    records: mpsc::UnboundedReceiver<SoakRecord>,
    workers: JoinSet<()>,
}

impl Traffic {
    fn in_flight(&self, arrived: usize) -> u64 {
        self.started
            .load(Ordering::SeqCst)
            .saturating_sub(arrived as u64)
    }
}

pub async fn run_soak(plan: &SoakPlan) -> Result<SoakReport, BenchError> {
    let (target, endpoint) = target::resolve(&plan.endpoint, &plan.client).await?;
    crate::run_folder::create_run_dir(&plan.dir).map_err(BenchError::Setup)?;
    let mut live = Live::new(plan.quiet, Duration::from_secs(10));
    let (long_context, refit) = plan.long_context_for(endpoint.max_model_len);
    if let Some(note) = refit {
        live.note(&note);
    }
    let mut meta = soak_meta(plan, endpoint, long_context);
    write_meta(&plan.dir, &meta).map_err(BenchError::Setup)?;
    let journal = JsonLines::create(&plan.dir.join(SOAK_RECORDS)).map_err(BenchError::Setup)?;
    live.note(&format!(
        "soak {} ({}, model {}) for {}, {} workers; journal {}",
        meta.endpoint.name,
        meta.endpoint.base_url,
        meta.endpoint.model,
        clock(plan.duration),
        plan.concurrency,
        plan.dir.join(SOAK_RECORDS).display()
    ));

    let mut traffic = spawn_workers(&target, plan, long_context);
    let mut arrivals = Arrivals {
        journal,
        records: Vec::new(),
        totals: RunningTotals::default(),
        write_error: None,
    };
    meta.status = collect(&mut traffic, &mut arrivals, &mut live, plan.duration).await;
    let in_flight = traffic.in_flight(arrivals.totals.requests);
    live.status(
        &arrivals
            .totals
            .line(traffic.origin.elapsed(), plan.duration, in_flight),
        true,
    );
    live.finish();
    if let Some(e) = arrivals.write_error {
        return Err(BenchError::Output(e));
    }
    meta.finished_at = Some(chrono::Utc::now());
    write_meta(&plan.dir, &meta).map_err(BenchError::Output)?;
    let report = summarize(&meta, &arrivals.records, &[]);
    write_report(&plan.dir, &report).map_err(BenchError::Output)?;
    Ok(report)
}

/// `soak-run.json` as the soak starts.
fn soak_meta(plan: &SoakPlan, endpoint: EndpointSummary, long_context: u64) -> SoakMeta {
    SoakMeta {
        tool: crate::run_folder::tool_version(),
        endpoint,
        settings: SoakSettings {
            duration_s: plan.duration.as_secs_f64(),
            concurrency: plan.concurrency,
            kinds: plan.kinds.clone(),
            long_context_tokens: long_context,
            temperatures: TEMPERATURES.to_vec(),
            budgets: BUDGETS.to_vec(),
            stream: false,
            params: plan.params.clone(),
        },
        started_at: chrono::Utc::now(),
        finished_at: None,
        status: SoakStatus::Running,
    }
}

/// Start `--concurrency` workers, each sending one request at a time until the deadline.
fn spawn_workers(target: &Target, plan: &SoakPlan, long_context: u64) -> Traffic {
    let origin = Instant::now();
    let deadline = origin + plan.duration;
    let started = Arc::new(AtomicU64::new(0));
    let (tx, records) = mpsc::unbounded_channel::<SoakRecord>();
    let mut workers = JoinSet::new();
    let kinds = Arc::new(plan.kinds.clone());
    let params = Arc::new(plan.params.clone());
    for worker in 0..plan.concurrency {
        let (client, model) = (target.client.clone(), target.model.clone());
        let (tx, started, kinds, params) =
            (tx.clone(), started.clone(), kinds.clone(), params.clone());
        workers.spawn(async move {
            while Instant::now() < deadline {
                let seq = started.fetch_add(1, Ordering::SeqCst);
                let shape = traffic::shape(&kinds, seq);
                let body = traffic::request(&model, shape, seq, long_context, &params);
                let started_at = chrono::Utc::now();
                let sample = measure(&client, &body, origin).await;
                let degenerate = sample.outcome == SampleOutcome::Ok
                    && sample.answer.as_deref().is_some_and(is_degenerate);
                let snippet = degenerate
                    .then(|| crate::score::clip(sample.answer.as_deref().unwrap_or(""), 160));
                let record = SoakRecord {
                    worker,
                    seq,
                    kind: shape.kind,
                    temperature: shape.temperature,
                    max_tokens: shape.max_tokens,
                    started_at,
                    sample,
                    degenerate,
                    snippet,
                };
                if tx.send(record).is_err() {
                    break;
                }
            }
        });
    }
    Traffic {
        origin,
        deadline,
        started,
        records,
        workers,
    }
}

/// Take every record as it arrives and redraw the live line each second, until the workers are
/// done (`Finished`) or Ctrl-C / SIGTERM stops them (`Interrupted`, keeping what had arrived).
async fn collect(
    traffic: &mut Traffic,
    arrivals: &mut Arrivals,
    live: &mut Live,
    total: Duration,
) -> SoakStatus {
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.tick().await; // the first tick is immediate; the first status comes after a second
    let interrupt = interrupted();
    tokio::pin!(interrupt);
    let mut announced_end = false;
    loop {
        tokio::select! {
            next = traffic.records.recv() => match next {
                Some(r) => arrivals.add(r),
                None => return SoakStatus::Finished,
            },
            _ = ticker.tick() => {
                let in_flight = traffic.in_flight(arrivals.totals.requests);
                if !announced_end && Instant::now() >= traffic.deadline {
                    announced_end = true;
                    live.note(&format!("duration reached; waiting for {in_flight} request(s) in flight"));
                }
                live.status(&arrivals.totals.line(traffic.origin.elapsed(), total, in_flight), false);
            }
            _ = &mut interrupt => {
                traffic.workers.abort_all();
                while let Ok(r) = traffic.records.try_recv() {
                    arrivals.add(r);
                }
                live.note("interrupted: writing the report from what has arrived");
                return SoakStatus::Interrupted;
            }
        }
    }
}

/// Rebuild the report of the soak in `dir` from its journal (also after an interruption or kill).
pub fn rerender(dir: &Path) -> anyhow::Result<SoakReport> {
    let meta_path = dir.join(SOAK_META);
    let text = std::fs::read_to_string(&meta_path).with_context(|| {
        format!(
            "{} is not a soak run folder (cannot read {})",
            dir.display(),
            meta_path.display()
        )
    })?;
    let meta: SoakMeta = serde_json::from_str(&text)
        .with_context(|| format!("{}: invalid soak settings", meta_path.display()))?;
    let path = dir.join(SOAK_RECORDS);
    let (records, skipped) = if path.exists() {
        read::<SoakRecord>(&path)?
    } else {
        (Vec::new(), Vec::new())
    };
    let report = summarize(&meta, &records, &skipped);
    write_report(dir, &report)?;
    Ok(report)
}

/// Atomically (temp file + rename), so a kill never leaves half a file.
fn write_meta(dir: &Path, meta: &SoakMeta) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(meta)? + "\n";
    write_atomic(&dir.join(SOAK_META), text.as_bytes())
}

fn write_report(dir: &Path, report: &SoakReport) -> anyhow::Result<()> {
    write_files(
        dir,
        &[
            (SOAK_JSON, render::soak_json(report)),
            (SOAK_MD, render::soak_markdown(report)),
        ],
    )
}
