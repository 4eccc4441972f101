//! Runs `coherence soak`: mixed agent-shaped traffic until `--duration` has passed (requests in
//! flight then are awaited), closed loop (`--concurrency` workers, one request each at a time) or
//! open loop (`--rate`: requests arrive on their own schedule, answered or not; a list of rates
//! runs each in turn and stops at the first the server cannot keep up with). Every answer is appended to
//! `soak.jsonl` and flushed as it arrives, so Ctrl-C, SIGTERM or even a kill leaves a journal
//! that `coherence soak --report DIR` turns into the report.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;

use super::arrivals::Arrivals as ArrivalSchedule;
use super::degenerate::is_degenerate;
use super::error::BenchError;
use super::live::Live;
use super::log::{read, write_files, JsonLines, SOAK_JSON, SOAK_MD, SOAK_META, SOAK_RECORDS};
use super::plan::{Graded, Load, SoakPlan};
use super::prompts::{chat_body, user};
use super::render;
use super::sample::{measure, Sample, SampleOutcome};
use super::soak_report::{
    step_summaries, summarize, GradedMark, SoakMeta, SoakRecord, SoakReport, SoakSettings,
    SoakStatus, StepMeta,
};
use super::target::{self, EndpointSummary};
use super::traffic::{self, BUDGETS, TEMPERATURES};
use crate::catalogue::PromptRequest;
use crate::run::interrupted;
use crate::run_folder::write_atomic;
use crate::score::score;

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

/// What every request of the soak shares: where to send, what to send, the time origin and the
/// running request count (also the next request's `seq`).
#[derive(Clone)]
struct Sender {
    client: crate::endpoint::Client,
    model: String,
    kinds: Arc<Vec<traffic::Kind>>,
    params: Arc<serde_json::Map<String, serde_json::Value>>,
    long_context: u64,
    origin: Instant,
    started: Arc<AtomicU64>,
    graded: Option<Arc<Graded>>,
}

impl Sender {
    fn in_flight(&self, arrived: usize) -> u64 {
        self.started
            .load(Ordering::SeqCst)
            .saturating_sub(arrived as u64)
    }

    /// Send the next request of the rotation and measure it.
    async fn send(
        &self,
        worker: usize,
        step: usize,
        scheduled: Option<f64>,
        waited: bool,
    ) -> SoakRecord {
        let seq = self.started.fetch_add(1, Ordering::SeqCst);
        let prompt = self.graded.as_ref().and_then(|g| g.pick(seq));
        let (shape, body) = match prompt {
            Some(p) => graded_request(&self.model, p, &self.params),
            None => {
                let n = self.graded.as_ref().map_or(seq, |g| g.regular_index(seq));
                let shape = traffic::shape(&self.kinds, n);
                let body = traffic::request(&self.model, shape, n, self.long_context, &self.params);
                (shape, body)
            }
        };
        let started_at = chrono::Utc::now();
        let sample = measure(&self.client, &body, self.origin).await;
        let degenerate = sample.outcome == SampleOutcome::Ok
            && sample.answer.as_deref().is_some_and(is_degenerate);
        let snippet =
            degenerate.then(|| crate::text::clip(sample.answer.as_deref().unwrap_or(""), 160));
        let graded = match (prompt, &self.graded) {
            (Some(p), Some(g)) => Some(grade(p, &sample, &g.context)),
            _ => None,
        };
        SoakRecord {
            graded,
            worker,
            seq,
            kind: shape.kind,
            temperature: shape.temperature,
            max_tokens: shape.max_tokens,
            started_at,
            sample,
            degenerate,
            snippet,
            step,
            scheduled_s: scheduled,
            waited_for_slot: waited,
        }
    }
}

/// The body of a graded request: the prompt's conversation at temperature 0 with its own budget
/// (512 when it sets none), the extra `--param` fields as for every request.
fn graded_request(
    model: &str,
    p: &crate::catalogue::Prompt,
    params: &serde_json::Map<String, serde_json::Value>,
) -> (traffic::Shape, serde_json::Value) {
    let messages = match &p.request {
        PromptRequest::Chat { messages } => serde_json::to_value(messages).unwrap_or_default(),
        PromptRequest::Completion { prompt } => user(prompt),
    };
    let shape = traffic::Shape {
        kind: traffic::Kind::Graded,
        temperature: 0.0,
        max_tokens: p.max_tokens.unwrap_or(GRADED_BUDGET),
    };
    (
        shape,
        chat_body(model, messages, shape.max_tokens, 0.0, params),
    )
}

/// The budget of a graded prompt that names none.
const GRADED_BUDGET: u32 = 512;

/// Score a graded reply: a completion is scored (an empty one is wrong), a failure is not.
fn grade(
    p: &crate::catalogue::Prompt,
    sample: &Sample,
    ctx: &crate::score::ScoreContext,
) -> GradedMark {
    match (sample.outcome, sample.answer.as_deref()) {
        (SampleOutcome::Error, _) => GradedMark {
            prompt: p.id.clone(),
            correct: None,
            answer: None,
        },
        (SampleOutcome::Ok, Some(answer)) => {
            let s = score(&p.score, answer, ctx);
            GradedMark {
                prompt: p.id.clone(),
                correct: Some(s.correct == Some(true)),
                answer: Some(
                    s.extracted
                        .unwrap_or_else(|| crate::text::clip(answer.trim(), 80)),
                ),
            }
        }
        _ => GradedMark {
            prompt: p.id.clone(),
            correct: Some(false),
            answer: None,
        },
    }
}

/// One step's traffic in flight: its records as they arrive, and the tasks sending them.
struct Traffic {
    deadline: Instant,
    records: mpsc::UnboundedReceiver<SoakRecord>,
    tasks: JoinSet<()>,
    /// Open loop: arrivals never sent (the step ended while they waited for a slot).
    dropped: Arc<AtomicU64>,
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
    let load = match &plan.load {
        Load::Closed { levels } if levels.len() == 1 => format!("{} workers", levels[0]),
        Load::Closed { levels } => format!(
            "closed loop at concurrency {}, each level in turn",
            levels
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Load::Open {
            rates, burstiness, ..
        } => format!(
            "open loop at {} req/s (burstiness {burstiness}){}",
            rates
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if rates.len() > 1 {
                ", each rate in turn until saturation"
            } else {
                ""
            }
        ),
    };
    live.note(&format!(
        "soak {} ({}, model {}) for {}, {load}; journal {}",
        meta.endpoint.name,
        meta.endpoint.base_url,
        meta.endpoint.model,
        clock(plan.duration),
        plan.dir.join(SOAK_RECORDS).display()
    ));
    let sender = Sender {
        client: target.client.clone(),
        model: target.model.clone(),
        kinds: Arc::new(plan.kinds.clone()),
        params: Arc::new(plan.params.clone()),
        long_context,
        origin: Instant::now(),
        started: Arc::new(AtomicU64::new(0)),
        graded: plan.graded.clone().map(Arc::new),
    };
    let mut arrivals = Arrivals {
        journal,
        records: Vec::new(),
        totals: RunningTotals::default(),
        write_error: None,
    };
    let steps = match &plan.load {
        Load::Closed { levels } => levels.len(),
        Load::Open { rates, .. } => rates.len(),
    };
    let mut ended = SoakStatus::Finished;
    for step in 0..steps {
        let start_s = sender.origin.elapsed().as_secs_f64();
        let mut traffic = match &plan.load {
            Load::Closed { levels } => {
                if levels.len() > 1 {
                    live.note(&format!(
                        "concurrency {} for {}",
                        levels[step],
                        clock(plan.duration)
                    ));
                }
                spawn_workers(&sender, levels[step], step, plan.duration)
            }
            Load::Open {
                rates,
                burstiness,
                max_in_flight,
            } => {
                live.note(&format!(
                    "rate {} req/s for {}",
                    rates[step],
                    clock(plan.duration)
                ));
                spawn_arrivals(
                    &sender,
                    rates[step],
                    *burstiness,
                    *max_in_flight,
                    step,
                    plan.duration,
                )
            }
        };
        let status = collect(
            &sender,
            &mut traffic,
            &mut arrivals,
            &mut live,
            plan.duration,
        )
        .await;
        meta.steps.push(StepMeta {
            index: step,
            concurrency: match &plan.load {
                Load::Closed { levels } => Some(levels[step]),
                Load::Open { .. } => None,
            },
            rate: match &plan.load {
                Load::Open { rates, .. } => Some(rates[step]),
                Load::Closed { .. } => None,
            },
            start_s,
            end_s: sender.origin.elapsed().as_secs_f64(),
            dropped: traffic.dropped.load(Ordering::SeqCst),
        });
        if status != SoakStatus::Finished {
            ended = status;
            break;
        }
        if let Load::Open { rates, .. } = &plan.load {
            let summaries = step_summaries(&meta, &arrivals.records);
            if let Some(why) = summaries.last().and_then(|s| s.saturated.clone()) {
                if step + 1 < rates.len() {
                    let note = format!(
                        "saturated at {} req/s ({why}); the sweep stops here",
                        rates[step]
                    );
                    live.note(&note);
                    meta.stopped = Some(note);
                }
                break;
            }
        }
        write_meta(&plan.dir, &meta).map_err(BenchError::Output)?;
    }
    let in_flight = sender.in_flight(arrivals.totals.requests);
    live.status(
        &arrivals.totals.line(
            sender.origin.elapsed(),
            plan.duration * steps as u32,
            in_flight,
        ),
        true,
    );
    live.finish();
    if let Some(e) = arrivals.write_error {
        return Err(BenchError::Output(e));
    }
    meta.status = ended;
    meta.finished_at = Some(chrono::Utc::now());
    write_meta(&plan.dir, &meta).map_err(BenchError::Output)?;
    let report = summarize(&meta, &arrivals.records, &[]);
    write_report(&plan.dir, &report).map_err(BenchError::Output)?;
    Ok(report)
}

/// `soak-run.json` as the soak starts.
fn soak_meta(plan: &SoakPlan, endpoint: EndpointSummary, long_context: u64) -> SoakMeta {
    let (concurrency, rates, burstiness, max_in_flight) = match &plan.load {
        Load::Closed { levels } => (
            levels.iter().copied().max().unwrap_or(1),
            Vec::new(),
            None,
            None,
        ),
        Load::Open {
            rates,
            burstiness,
            max_in_flight,
        } => (0, rates.clone(), Some(*burstiness), Some(*max_in_flight)),
    };
    SoakMeta {
        tool: crate::run_folder::tool_version(),
        endpoint,
        settings: SoakSettings {
            duration_s: plan.duration.as_secs_f64(),
            concurrency,
            rates,
            burstiness,
            max_in_flight,
            slo: plan.slo,
            levels: match &plan.load {
                Load::Closed { levels } if levels.len() > 1 => levels.clone(),
                _ => Vec::new(),
            },
            sanity: plan.sanity,
            graded_share: plan.graded.as_ref().map(|g| g.share),
            graded_prompts: plan
                .graded
                .as_ref()
                .map(|g| g.prompts.iter().map(|p| p.id.clone()).collect())
                .unwrap_or_default(),
            catalogue_hash: plan.graded.as_ref().map(|g| g.catalogue_hash.clone()),
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
        steps: Vec::new(),
        stopped: None,
    }
}

/// Closed loop: `workers` tasks, each sending one request at a time until the step's time is up.
fn spawn_workers(sender: &Sender, workers: usize, step: usize, duration: Duration) -> Traffic {
    let deadline = Instant::now() + duration;
    let (tx, records) = mpsc::unbounded_channel::<SoakRecord>();
    let mut tasks = JoinSet::new();
    for worker in 0..workers {
        let (sender, tx) = (sender.clone(), tx.clone());
        tasks.spawn(async move {
            while Instant::now() < deadline {
                let record = sender.send(worker, step, None, false).await;
                if tx.send(record).is_err() {
                    break;
                }
            }
        });
    }
    Traffic {
        deadline,
        records,
        tasks,
        dropped: Arc::new(AtomicU64::new(0)),
    }
}

/// Open loop: requests arrive on a seeded gamma schedule at `rate` req/s until the step's time is
/// up, each sent at its arrival whatever is still in flight. Beyond `cap` outstanding requests
/// an arrival waits for a slot (and says so); one still waiting when the time is up is dropped,
/// with every later arrival of the schedule, and counted.
fn spawn_arrivals(
    sender: &Sender,
    rate: f64,
    burstiness: f64,
    cap: usize,
    step: usize,
    duration: Duration,
) -> Traffic {
    let begin = Instant::now();
    let deadline = begin + duration;
    let (tx, records) = mpsc::unbounded_channel::<SoakRecord>();
    let dropped = Arc::new(AtomicU64::new(0));
    let mut tasks = JoinSet::new();
    let (sender, count) = (sender.clone(), dropped.clone());
    tasks.spawn(async move {
        let slots = Arc::new(Semaphore::new(cap.max(1)));
        let mut schedule = ArrivalSchedule::new(rate, burstiness, ARRIVAL_SEED + step as u64);
        let mut requests = JoinSet::new();
        let mut at = 0.0;
        loop {
            at += schedule.next_gap();
            if at >= duration.as_secs_f64() {
                break;
            }
            let when = begin + Duration::from_secs_f64(at);
            tokio::time::sleep_until(when.into()).await;
            let scheduled = when.duration_since(sender.origin).as_secs_f64();
            let (permit, waited) = match slots.clone().try_acquire_owned() {
                Ok(p) => (p, false),
                Err(_) => {
                    match tokio::time::timeout_at(deadline.into(), slots.clone().acquire_owned())
                        .await
                    {
                        Ok(Ok(p)) => (p, true),
                        _ => {
                            // Time is up while waiting: this arrival and the rest of the schedule.
                            let mut lost = 1;
                            while {
                                at += schedule.next_gap();
                                at < duration.as_secs_f64()
                            } {
                                lost += 1;
                            }
                            count.fetch_add(lost, Ordering::SeqCst);
                            break;
                        }
                    }
                }
            };
            let (sender, tx) = (sender.clone(), tx.clone());
            requests.spawn(async move {
                let record = sender.send(0, step, Some(scheduled), waited).await;
                drop(permit);
                let _ = tx.send(record);
            });
        }
        drop(tx);
        while requests.join_next().await.is_some() {}
    });
    Traffic {
        deadline,
        records,
        tasks,
        dropped,
    }
}

/// The arrival schedule of step `n` is seeded with this plus `n`: the same flags send at the
/// same moments on every run.
const ARRIVAL_SEED: u64 = 0x5eed;

/// Take every record as it arrives and redraw the live line each second, until the step's
/// traffic is done (`Finished`) or Ctrl-C / SIGTERM stops it (`Interrupted`, keeping what had
/// arrived).
async fn collect(
    sender: &Sender,
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
                let in_flight = sender.in_flight(arrivals.totals.requests);
                if !announced_end && Instant::now() >= traffic.deadline {
                    announced_end = true;
                    live.note(&format!("duration reached; waiting for {in_flight} request(s) in flight"));
                }
                live.status(&arrivals.totals.line(sender.origin.elapsed(), total, in_flight), false);
            }
            _ = &mut interrupt => {
                traffic.tasks.abort_all();
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
