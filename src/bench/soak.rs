//! Runs `coherence soak`: mixed agent-shaped traffic until `--duration` has passed (requests in
//! flight then are awaited), closed loop (`--concurrency` workers, one request each at a time) or
//! open loop (`--rate`: requests arrive on their own schedule, answered or not; a list of rates
//! runs each in turn and stops at the first the server cannot keep up with), on the request
//! engine (`engine::drive`). Every answer is appended to
//! `soak.jsonl` and flushed as it arrives, so Ctrl-C, SIGTERM or even a kill leaves a journal
//! that `coherence soak --report DIR` turns into the report.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::arrivals::Arrivals as ArrivalSchedule;
use super::degenerate::is_degenerate;
use super::error::BenchError;
use super::plan::{Graded, Load, SoakPlan};
use super::prompts::{chat_body, user};
use super::render;
use super::sample::{measure, Sample, SampleOutcome};
use super::soak_report::{
    soak_folder, soak_report_of, step_summaries, GradedMark, SoakMeta, SoakRecord, SoakReport,
    SoakSettings, SoakStatus, StepMeta, SOAK_JSON, SOAK_MD, SOAK_RECORDS,
};
use super::target::{self, EndpointSummary};
use super::traffic::{self, BUDGETS, TEMPERATURES};
use crate::catalogue::PromptRequest;
use crate::engine::{self, drive, Driven, Lane, Progress, Sink, Slot};
use crate::run_folder::{JsonLines, RunFolder};
use crate::score::score_completion;

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
            let cut = sample.finish_reason.as_deref() == Some("length");
            let s = score_completion(&p.score, answer, cut, ctx);
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

pub async fn run_soak(plan: &SoakPlan) -> Result<SoakReport, BenchError> {
    let (target, endpoint) = target::resolve(&plan.endpoint, &plan.client).await?;
    let folder = soak_folder(&plan.dir);
    folder.create().map_err(BenchError::Setup)?;
    let mut live = Progress::status_line(plan.quiet, Duration::from_secs(10));
    let (long_context, refit) = plan.long_context_for(endpoint.max_model_len);
    if let Some(note) = refit {
        live.note(&note);
    }
    let mut meta = soak_meta(plan, endpoint, long_context);
    folder.write_manifest(&meta).map_err(BenchError::Setup)?;
    let journal = folder
        .create_journal(SOAK_RECORDS)
        .map_err(BenchError::Setup)?;
    engine::watch();
    let load = plan.load.describe();
    live.note(&format!(
        "soak {} ({}, model {}) for {}, {load}; journal {}",
        meta.endpoint.name,
        meta.endpoint.base_url,
        meta.endpoint.model,
        clock(plan.duration),
        folder.file(SOAK_RECORDS).display()
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
    let ended = run_steps(plan, &folder, &sender, &mut arrivals, &mut live, &mut meta).await?;
    let in_flight = sender.in_flight(arrivals.totals.requests);
    live.status(
        &arrivals.totals.line(
            sender.origin.elapsed(),
            plan.duration * plan.load.steps() as u32,
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
    folder.write_manifest(&meta).map_err(BenchError::Output)?;
    let report = soak_report_of(&meta, &arrivals.records, &[]);
    write_report(&folder, &report).map_err(BenchError::Output)?;
    Ok(report)
}

/// Write soak.json and soak.md, each atomically.
fn write_report(folder: &RunFolder, report: &SoakReport) -> anyhow::Result<()> {
    folder.write(SOAK_JSON, render::soak_json(report).as_bytes())?;
    folder.write(SOAK_MD, render::soak_markdown(report).as_bytes())
}

/// Runs the load's steps in turn, each for `--duration`, recording each in `meta`; stops early on
/// Ctrl-C (status `Interrupted`) or when an open-loop rate saturates the server.
async fn run_steps(
    plan: &SoakPlan,
    folder: &RunFolder,
    sender: &Sender,
    arrivals: &mut Arrivals,
    live: &mut Progress,
    meta: &mut SoakMeta,
) -> Result<SoakStatus, BenchError> {
    let steps = plan.load.steps();
    for step in 0..steps {
        let start_s = sender.origin.elapsed().as_secs_f64();
        announce_step(plan, step, live);
        let mut collect = Collect {
            sender,
            arrivals: &mut *arrivals,
            live: &mut *live,
            deadline: Instant::now() + plan.duration,
            total: plan.duration,
            announced_end: false,
        };
        let driven = send_step(sender, &plan.load, step, plan.duration, &mut collect)
            .await
            .map_err(BenchError::Output)?;
        meta.steps.push(StepMeta {
            index: step,
            concurrency: plan.load.concurrency(step),
            rate: plan.load.rate(step),
            start_s,
            end_s: sender.origin.elapsed().as_secs_f64(),
            dropped: driven.dropped.iter().sum(),
        });
        if driven.interrupted {
            live.note("interrupted: writing the report from what has arrived");
            return Ok(SoakStatus::Interrupted);
        }
        if saturated(plan, step, &arrivals.records, live, meta) {
            break;
        }
        folder.write_manifest(meta).map_err(BenchError::Output)?;
    }
    Ok(SoakStatus::Finished)
}

/// Says on stderr which concurrency level or rate a step of a sweep runs.
fn announce_step(plan: &SoakPlan, step: usize, live: &mut Progress) {
    match (plan.load.concurrency(step), plan.load.rate(step)) {
        (Some(n), _) if plan.load.steps() > 1 => {
            live.note(&format!("concurrency {n} for {}", clock(plan.duration)))
        }
        (_, Some(rate)) => live.note(&format!("rate {rate} req/s for {}", clock(plan.duration))),
        _ => {}
    }
}

/// Whether an open-loop step saturated the server, which ends the sweep (noted in `meta` when
/// steps were left).
fn saturated(
    plan: &SoakPlan,
    step: usize,
    records: &[SoakRecord],
    live: &mut Progress,
    meta: &mut SoakMeta,
) -> bool {
    let Some(rate) = plan.load.rate(step) else {
        return false;
    };
    let summaries = step_summaries(meta, records);
    let Some(why) = summaries.last().and_then(|s| s.saturated.clone()) else {
        return false;
    };
    if step + 1 < plan.load.steps() {
        let note = format!("saturated at {rate} req/s ({why}); the sweep stops here");
        live.note(&note);
        meta.stopped = Some(note);
    }
    true
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

/// Send one step's traffic on the engine until its time is up (requests in flight then are
/// awaited), or until Ctrl-C / SIGTERM stops it, keeping what had arrived.
///
/// Closed loop: `--concurrency` workers, each sending its next request as soon as one answers.
/// Open loop: requests arrive on a seeded gamma schedule at the step's rate, each sent at its
/// arrival whatever is still in flight; beyond `max_in_flight` outstanding an arrival waits for a
/// slot (and says so); one still waiting when the time is up is dropped, with every later
/// arrival of the schedule, and counted.
async fn send_step(
    sender: &Sender,
    load: &Load,
    step: usize,
    duration: Duration,
    collect: &mut Collect<'_>,
) -> anyhow::Result<Driven> {
    let begin = Instant::now();
    let deadline = begin + duration;
    let send = |scheduled: Option<f64>, slot: Slot| {
        let worker = if scheduled.is_some() { 0 } else { slot.worker };
        sender.send(worker, step, scheduled, slot.waited)
    };
    let lane = match load {
        Load::Closed { levels } => {
            let more = std::iter::from_fn(move || (Instant::now() < deadline).then_some(None));
            Lane::new(more, levels.get(step).copied().unwrap_or(1))
        }
        Load::Open {
            rates,
            burstiness,
            max_in_flight,
        } => {
            let rate = rates.get(step).copied().unwrap_or(1.0);
            let origin = sender.origin;
            let arrivals = schedule(rate, *burstiness, step, begin, duration)
                .map(move |at| (at, Some(at.duration_since(origin).as_secs_f64())));
            Lane::paced(arrivals, *max_in_flight).until(deadline)
        }
    };
    drive(vec![lane], send, collect).await
}

/// The arrival instants of step `step` at `rate` req/s from `begin`, for `duration`.
fn schedule(
    rate: f64,
    burstiness: f64,
    step: usize,
    begin: Instant,
    duration: Duration,
) -> impl Iterator<Item = Instant> + Send {
    let mut gaps = ArrivalSchedule::new(rate, burstiness, ARRIVAL_SEED + step as u64);
    let end = duration.as_secs_f64();
    let mut at = 0.0;
    std::iter::from_fn(move || {
        at += gaps.next_gap();
        (at < end).then(|| begin + Duration::from_secs_f64(at))
    })
}

/// The arrival schedule of step `n` is seeded with this plus `n`: the same flags send at the
/// same moments on every run.
const ARRIVAL_SEED: u64 = 0x5eed;

/// Takes every record as it arrives and redraws the live line each second.
struct Collect<'a> {
    sender: &'a Sender,
    arrivals: &'a mut Arrivals,
    live: &'a mut Progress,
    deadline: Instant,
    total: Duration,
    announced_end: bool,
}

impl Sink<Option<f64>, SoakRecord> for Collect<'_> {
    fn take(&mut self, r: SoakRecord) -> anyhow::Result<Option<Option<f64>>> {
        self.arrivals.add(r);
        Ok(None)
    }

    fn tick(&mut self) {
        let in_flight = self.sender.in_flight(self.arrivals.totals.requests);
        if !self.announced_end && Instant::now() >= self.deadline {
            self.announced_end = true;
            self.live.note(&format!(
                "duration reached; waiting for {in_flight} request(s) in flight"
            ));
        }
        let line = self
            .arrivals
            .totals
            .line(self.sender.origin.elapsed(), self.total, in_flight);
        self.live.status(&line, false);
    }
}

/// Rebuild the report of the soak in `dir` from its journal (also after an interruption or kill).
pub fn rerender(dir: &Path) -> anyhow::Result<SoakReport> {
    let folder = soak_folder(dir);
    let meta: SoakMeta = folder.read_manifest()?;
    let journal = folder.read_lines::<SoakRecord>(SOAK_RECORDS)?;
    let report = soak_report_of(&meta, &journal.values, &journal.skipped);
    write_report(&folder, &report)?;
    Ok(report)
}
