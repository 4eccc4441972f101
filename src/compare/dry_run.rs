//! `compare … --dry-run` and `determinism … --dry-run`: the plan without sending anything, not
//! even `GET /models`. It counts the requests [`pending_jobs`] would send (with `--resume`, only
//! what the run folder is missing), their token ceiling, and estimates the time. A new run's
//! counts are computed, not listed, so a large `--repeats` costs nothing to show.
//!
//! The estimate is an upper bound under a stated assumption: every request generates its whole
//! `max_tokens` at `--assume-tps` tokens per second (default 30, a single stream of a mid-sized
//! model on one GPU; answers that stop early take less), `concurrency` of them at once per
//! endpoint, endpoints in parallel (as the executor sends them); prompt processing, retries and
//! reasoning re-runs are not counted.
//!
//! Prompt processing is estimated apart: the planned prompt tokens of every request (characters
//! over `CHARS_PER_TOKEN`, as the long suite plans its lengths) at `--assume-prefill-tps` tokens
//! per second per request, the same requests in flight; long prompts dominate it.
//!
//! With `--logprobs` and long items, the passages' scoring requests (each long item's passage on
//! every endpoint, and once more on the reference as the control) are counted apart, with their
//! planned prompt tokens and their prompt processing on the reference, which sends the most.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Value};

use crate::catalogue::long::{planned_prompt_tokens, CHARS_PER_TOKEN};
use crate::catalogue::Suite;
use crate::logprobs::passages::planned;
use crate::run::{journal, pending_jobs, RunPlan};

/// The most calibration requests a run sends (every family's most).
fn calibration_ceiling() -> usize {
    crate::catalogue::generator::families().count()
        * crate::analysis::behaviour::calibration::MOST_REQUESTS
}

/// With `--logprobs`, at most this many teacher-forcing requests follow the answers: one per
/// prompt per endpoint (the reference's completion scored), and per endpoint and condition a mode
/// probe and three self-consistency checks (a decode and a re-score each).
/// The long passages' scoring requests are counted in it too.
fn teacher_forcing_ceiling(plan: &RunPlan) -> usize {
    if !plan.sampling.teacher_forces() || plan.replays() {
        return 0;
    }
    (plan.scope.len() + 2 * (1 + 3 * 2)) * plan.endpoints.len()
        + PassageScoring::of(plan).requests() as usize
}

/// With `--logprobs`, the long passages to score (see [`planned`]).
#[derive(Debug, Clone, Default)]
struct PassageScoring {
    /// Planned tokens of each passage.
    tokens: Vec<u64>,
    endpoints: usize,
}

impl PassageScoring {
    fn of(plan: &RunPlan) -> PassageScoring {
        if !plan.sampling.teacher_forces() || plan.replays() {
            return PassageScoring::default();
        }
        PassageScoring {
            tokens: plan
                .scope
                .iter()
                .filter(|id| plan.catalogue.suite_of(id) == Some(Suite::Long))
                .filter_map(|id| plan.catalogue.get(id))
                .map(planned_prompt_tokens)
                .collect(),
            endpoints: plan.endpoints.len(),
        }
    }

    /// Scoring requests, every endpoint together.
    fn requests(&self) -> u64 {
        planned(&self.tokens, self.endpoints).count() as u64
    }

    /// Planned prompt tokens of those requests.
    fn prompt_tokens(&self) -> u64 {
        planned(&self.tokens, self.endpoints)
            .map(|(t, _, _)| *t)
            .sum()
    }

    /// The prompt processing on the reference (each passage and its control), the run's
    /// concurrency in flight.
    fn reference_prefill_seconds(&self, plan: &RunPlan, assume_prefill_tps: f64) -> f64 {
        let (requests, tokens) = planned(&self.tokens, self.endpoints)
            .filter(|(_, endpoint, _)| *endpoint == 0)
            .fold((0u64, 0u64), |(n, sum), (t, _, _)| (n + 1, sum + t));
        tokens as f64 / assume_prefill_tps / in_flight(plan, requests)
    }
}

/// What one endpoint would be sent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct EndpointPlan {
    requests: u64,
    token_ceiling: u64,
    seconds: f64,
    /// Planned prompt tokens over the requests, and the time to process them.
    prompt_tokens: u64,
    prefill_seconds: f64,
}

/// One request a resumed run is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Missing {
    prompt: String,
    endpoint: usize,
    repeat: u32,
    max_tokens: u32,
}

/// What an `--until-decided` run sends at most: the rounds after the first, up to `--max-items`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct AtCap {
    max_items: usize,
    /// Requests and token ceiling of the later rounds, every endpoint together.
    more_requests: u64,
    more_tokens: u64,
    /// The whole run at the cap, slowest endpoint.
    seconds: f64,
}

/// What the plan would send.
#[derive(Debug)]
pub struct DryRun {
    per_endpoint: Vec<EndpointPlan>,
    /// With `--resume`: every planned request, and the ones still missing.
    resume: Option<(u64, Vec<Missing>)>,
    /// With `--until-decided`: what the rounds after this one may add.
    at_cap: Option<AtCap>,
    assume_tps: f64,
    assume_prefill_tps: f64,
}

impl DryRun {
    /// Count what `plan` would send, assuming `assume_tps` tokens per second per request. A
    /// resumed run's journal is read to find what is missing.
    pub fn of(plan: &RunPlan, assume_tps: f64, assume_prefill_tps: f64) -> anyhow::Result<DryRun> {
        let mut per_endpoint = vec![EndpointPlan::default(); plan.endpoints.len()];
        let resume = if plan.previous.is_some() {
            Some(count_resumed(plan, &mut per_endpoint)?)
        } else {
            count_new(plan, &mut per_endpoint);
            None
        };
        for e in &mut per_endpoint {
            e.seconds = e.token_ceiling as f64 / assume_tps / in_flight(plan, e.requests);
            e.prefill_seconds =
                e.prompt_tokens as f64 / assume_prefill_tps / in_flight(plan, e.requests);
        }
        let at_cap = plan
            .until_decided
            .map(|rule| at_cap(plan, rule.max_items, &per_endpoint, assume_tps));
        Ok(DryRun {
            per_endpoint,
            resume,
            at_cap,
            assume_tps,
            assume_prefill_tps,
        })
    }

    /// Requests to send, over every endpoint.
    pub fn requests(&self) -> u64 {
        self.per_endpoint.iter().map(|e| e.requests).sum()
    }

    /// The sum of `max_tokens` over the requests.
    pub fn token_ceiling(&self) -> u64 {
        self.per_endpoint.iter().map(|e| e.token_ceiling).sum()
    }

    /// The estimated time: the slowest endpoint's, as they are sent side by side.
    pub fn seconds(&self) -> f64 {
        self.per_endpoint
            .iter()
            .map(|e| e.seconds)
            .fold(0.0, f64::max)
    }

    /// Planned prompt tokens over every request.
    pub fn prompt_tokens(&self) -> u64 {
        self.per_endpoint.iter().map(|e| e.prompt_tokens).sum()
    }

    /// The estimated prompt-processing time: the slowest endpoint's.
    pub fn prefill_seconds(&self) -> f64 {
        self.per_endpoint
            .iter()
            .map(|e| e.prefill_seconds)
            .fold(0.0, f64::max)
    }

    /// The plan as `--dry-run --json` prints it.
    pub fn json(&self, plan: &RunPlan) -> Value {
        let passages = PassageScoring::of(plan);
        json!({
            "dry_run": true,
            "sent": 0,
            "run_dir": plan.dir.display().to_string(),
            "catalogue": {"dir": plan.catalogue.dir.display().to_string(), "hash": plan.catalogue.hash},
            "prompts": plan.send.len(),
            "repeats": plan.repeats,
            "concurrency": plan.concurrency,
            "assume_tps": self.assume_tps,
            "requests": self.requests(),
            "teacher_forcing_requests": teacher_forcing_ceiling(plan),
            "long_passage_requests": passages.requests(),
            "long_passage_prompt_tokens": passages.prompt_tokens(),
            "estimated_long_passage_prefill_seconds": passages
                .reference_prefill_seconds(plan, self.assume_prefill_tps)
                .ceil(),
            "token_ceiling": self.token_ceiling(),
            "estimated_seconds": self.seconds().ceil(),
            "assume_prefill_tps": self.assume_prefill_tps,
            "prompt_tokens": self.prompt_tokens(),
            "estimated_prefill_seconds": self.prefill_seconds().ceil(),
            "endpoints": plan.endpoints.iter().zip(&self.per_endpoint).map(|(e, p)| json!({
                "name": e.spec.name,
                "base_url": e.spec.base_url,
                "model": e.spec.model,
                "requests": p.requests,
                "token_ceiling": p.token_ceiling,
                "estimated_seconds": p.seconds.ceil(),
                "prompt_tokens": p.prompt_tokens,
                "estimated_prefill_seconds": p.prefill_seconds.ceil(),
            })).collect::<Vec<Value>>(),
            "control": {
                "prompts": control_prompts(plan, plan.control).count(),
                "max": plan.grows_control().then(|| plan.control_cap()),
            },
            "until_decided": self.at_cap.map(|c| json!({
                "max_items": c.max_items,
                "more_requests_at_cap": c.more_requests,
                "more_token_ceiling_at_cap": c.more_tokens,
                "estimated_seconds_at_cap": c.seconds.ceil(),
            })),
            "calibration": plan.calibrate.map(|target| json!({
                "endpoint": plan.endpoints.first().map(|e| e.spec.name.clone()),
                "target_accuracy": target,
                "families": crate::catalogue::generator::families().count(),
                "max_requests": calibration_ceiling(),
            })),
            "notes": plan.notes,
            "resume": self.resume.as_ref().map(|(planned, missing)| json!({
                "planned": planned,
                "missing": missing.iter().map(|m| json!({
                    "prompt": m.prompt,
                    "endpoint": plan.endpoints[m.endpoint].spec.name,
                    "repeat": m.repeat,
                    "max_tokens": m.max_tokens,
                })).collect::<Vec<Value>>(),
            })),
        })
    }

    /// The plan as `--dry-run` prints it.
    pub fn text(&self, plan: &RunPlan) -> String {
        let mut out = self.header(plan);
        for note in &plan.notes {
            let _ = writeln!(out, "note: {note}");
        }
        if let Some(target) = plan.calibrate {
            let _ = writeln!(
                out,
                "first, calibration: at most {} requests to the reference {} only ({} generated families, at most {} each, adaptive, stopping early once a family's level is settled), choosing each family's level nearest {:.0}% accuracy; never sent to the other endpoints, never counted in a verdict (the measured items below are counted at level {}, before calibration chooses)",
                calibration_ceiling(),
                plan.endpoints.first().map_or("", |e| e.spec.name.as_str()),
                crate::catalogue::generator::families().count(),
                crate::analysis::behaviour::calibration::MOST_REQUESTS,
                target * 100.0,
                crate::catalogue::generator::DEFAULT_LEVEL
            );
        }
        let _ = writeln!(out, "{} requests", self.requests());
        let forcing = teacher_forcing_ceiling(plan);
        if forcing > 0 {
            let _ = writeln!(
                out,
                "then, with --logprobs, at most {forcing} teacher-forcing requests (one per reference completion per endpoint, 1 token each, plus each endpoint's mode probe and self-checks; on --resume only what is missing)"
            );
        }
        let passages = PassageScoring::of(plan);
        if passages.requests() > 0 {
            let _ = writeln!(
                out,
                "of them, {} score the long items' passages (each on every endpoint, and once more on the reference as the control): about {} prompt tokens, about {} of prompt processing on the reference at {} tokens/s per request",
                passages.requests(),
                passages.prompt_tokens(),
                duration(passages.reference_prefill_seconds(plan, self.assume_prefill_tps)),
                self.assume_prefill_tps
            );
        }
        let _ = writeln!(
            out,
            "token ceiling: {} completion tokens (the sum of max_tokens over the requests)",
            self.token_ceiling()
        );
        let _ = writeln!(
            out,
            "estimated time: at most {}, assuming every request generates its whole max_tokens at {} tokens/s \
             (--assume-tps) with {} in flight per endpoint and the endpoints in parallel; prompt processing, \
             retries and reasoning re-runs not counted",
            duration(self.seconds()),
            self.assume_tps,
            plan.concurrency
        );
        let _ = writeln!(
            out,
            "prompt tokens: about {} (planned at {CHARS_PER_TOKEN} characters per token); prompt processing about {} more at {} tokens/s per request (--assume-prefill-tps)",
            self.prompt_tokens(),
            duration(self.prefill_seconds()),
            self.assume_prefill_tps
        );
        let control = control_prompts(plan, plan.control).count();
        if control > 0 {
            let _ = writeln!(
                out,
                "the A-vs-A control: the reference answers {control} prompts a second time (counted above){}",
                if plan.grows_control() {
                    format!(
                        "; with --control auto, up to {} more as it grows until identity is decided (--control-max)",
                        plan.control_cap().saturating_sub(control)
                    )
                } else {
                    String::new()
                }
            );
        }
        if let Some(cap) = self.at_cap {
            let _ = writeln!(
                out,
                "--until-decided: the counts above are the first round; if it does not decide, later rounds \
                 send up to {} more requests (token ceiling {} more) until --max-items {}, at most {} in all",
                cap.more_requests,
                cap.more_tokens,
                cap.max_items,
                duration(cap.seconds)
            );
        }
        if let Some((planned, missing)) = &self.resume {
            out += &missing_text(plan, *planned, missing);
        }
        out
    }

    /// The folder, the catalogue and each endpoint's share.
    fn header(&self, plan: &RunPlan) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "dry run: nothing was sent, not even GET /models (model discovery is skipped; unnamed models are looked up when the run starts)"
        );
        let _ = writeln!(
            out,
            "run folder: {}{}",
            plan.dir.display(),
            if plan.previous.is_some() {
                " (resumed)"
            } else {
                " (not created)"
            }
        );
        let _ = writeln!(
            out,
            "catalogue: {} ({} prompt{} × {} repeat{}), concurrency {} per endpoint",
            plan.catalogue.dir.display(),
            plan.send.len(),
            if plan.send.len() == 1 { "" } else { "s" },
            plan.repeats,
            if plan.repeats == 1 { "" } else { "s" },
            plan.concurrency
        );
        for (e, p) in plan.endpoints.iter().zip(&self.per_endpoint) {
            let model = e
                .spec
                .model
                .as_deref()
                .map_or("model from GET /models".to_string(), |m| {
                    format!("model {m}")
                });
            let _ = writeln!(
                out,
                "  {} ({}, {model}): {} requests, token ceiling {}, about {}",
                e.spec.name,
                e.spec.base_url,
                p.requests,
                p.token_ceiling,
                duration(p.seconds)
            );
        }
        out
    }
}

/// Requests in flight on one endpoint sending `requests`.
fn in_flight(plan: &RunPlan, requests: u64) -> f64 {
    (plan.concurrency as u64).min(requests).max(1) as f64
}

/// A new run: every repeat of every prompt to send, on every endpoint that is sent to (a
/// replayed endpoint's answers are saved).
fn count_new(plan: &RunPlan, per_endpoint: &mut [EndpointPlan]) {
    let prompts = plan.prompts_to_send();
    let repeats = u64::from(plan.repeats);
    let tokens: u64 = prompts
        .iter()
        .map(|p| u64::from(plan.max_tokens_for(p.max_tokens)))
        .sum();
    let prompt_tokens: u64 = prompts.iter().map(|p| planned_prompt_tokens(p)).sum();
    let sent = per_endpoint
        .iter_mut()
        .zip(&plan.endpoints)
        .filter(|(_, planned)| planned.replayed.is_none());
    for (e, _) in sent {
        e.requests = prompts.len() as u64 * repeats;
        e.token_ceiling = tokens.saturating_mul(repeats);
        e.prompt_tokens = prompt_tokens.saturating_mul(repeats);
    }
    // The A-vs-A control's first requests, on the reference.
    if let Some(reference) = per_endpoint.first_mut() {
        for p in control_prompts(plan, plan.control) {
            reference.requests += 1;
            reference.token_ceiling += u64::from(plan.max_tokens_for(p.max_tokens));
            reference.prompt_tokens += planned_prompt_tokens(p);
        }
    }
}

/// The first `n` prompts of the scope, when the plan sends the reference a control (the
/// prompts the control answers a second time).
fn control_prompts(plan: &RunPlan, n: usize) -> impl Iterator<Item = &crate::catalogue::Prompt> {
    let sends_control = plan.repeats == 1
        && plan.endpoints.len() > 1
        && plan.endpoints.first().is_some_and(|e| e.replayed.is_none());
    plan.scope
        .iter()
        .take(if sends_control { n } else { 0 })
        .filter_map(|id| plan.catalogue.get(id))
}

/// A resumed run: what its journal lacks, counted per endpoint; returns the planned requests
/// and the missing ones.
fn count_resumed(
    plan: &RunPlan,
    per_endpoint: &mut [EndpointPlan],
) -> anyhow::Result<(u64, Vec<Missing>)> {
    let existing = journal::load(&plan.dir)?.records;
    let jobs = pending_jobs(plan, &existing);
    for j in &jobs {
        per_endpoint[j.endpoint].requests += 1;
        per_endpoint[j.endpoint].token_ceiling += u64::from(j.max_tokens);
        per_endpoint[j.endpoint].prompt_tokens += planned_prompt_tokens(&j.prompt);
    }
    let missing = jobs
        .iter()
        .map(|j| Missing {
            prompt: j.prompt.id.clone(),
            endpoint: j.endpoint,
            repeat: j.repeat,
            max_tokens: j.max_tokens,
        })
        .collect();
    let sent = plan
        .endpoints
        .iter()
        .filter(|e| e.replayed.is_none())
        .count();
    let planned = (plan.send.len() * sent) as u64 * u64::from(plan.repeats);
    Ok((planned, missing))
}

/// What the rounds after the first may add to an `--until-decided` run, up to `max_items`.
fn at_cap(
    plan: &RunPlan,
    max_items: usize,
    per_endpoint: &[EndpointPlan],
    assume_tps: f64,
) -> AtCap {
    let mut later = plan.catalogue.clone();
    later.set_generated_items(max_items);
    let added = &later.prompts[plan.catalogue.prompts.len()..];
    let repeats = u64::from(plan.repeats);
    let tokens: u64 = added
        .iter()
        .map(|p| u64::from(plan.max_tokens_for(p.max_tokens)))
        .sum::<u64>()
        .saturating_mul(repeats);
    let requests = added.len() as u64 * repeats;
    let seconds = per_endpoint
        .iter()
        .map(|e| {
            (e.token_ceiling + tokens) as f64 / assume_tps / in_flight(plan, e.requests + requests)
        })
        .fold(0.0, f64::max);
    let endpoints = per_endpoint.len() as u64;
    AtCap {
        max_items,
        more_requests: requests * endpoints,
        more_tokens: tokens * endpoints,
        seconds,
    }
}

/// What a resumed run has and lacks, at most 20 missing requests named per endpoint.
fn missing_text(plan: &RunPlan, planned: u64, missing: &[Missing]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "resume {}: {} of {planned} planned requests already answered; missing:",
        plan.dir.display(),
        planned.saturating_sub(missing.len() as u64)
    );
    if missing.is_empty() {
        let _ = writeln!(out, "  nothing: the run is complete");
    }
    let mut by_endpoint: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for m in missing {
        by_endpoint.entry(m.endpoint).or_default().push(format!(
            "{}#{}",
            m.prompt,
            u64::from(m.repeat) + 1
        ));
    }
    for (i, names) in by_endpoint {
        let shown: Vec<&str> = names.iter().take(20).map(String::as_str).collect();
        let more = match names.len() - shown.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        let _ = writeln!(
            out,
            "  {}: {}{more}",
            plan.endpoints[i].spec.name,
            shown.join(", ")
        );
    }
    out
}

/// Whole seconds, as humantime writes them (`14m 13s`).
fn duration(seconds: f64) -> String {
    let secs = if seconds.is_finite() {
        seconds.ceil().min(u64::MAX as f64) as u64
    } else {
        0
    };
    humantime::format_duration(Duration::from_secs(secs)).to_string()
}
