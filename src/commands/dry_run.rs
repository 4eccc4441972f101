//! `compare … --dry-run` and `determinism … --dry-run`: the plan without sending anything, not
//! even `GET /models`. It counts the requests [`pending_jobs`] would send (with `--resume`, only
//! what the run folder is missing), their token ceiling, and estimates the time.
//!
//! The estimate is an upper bound under a stated assumption: every request generates its whole
//! `max_tokens` at `--assume-tps` tokens per second (default 30, a single stream of a mid-sized
//! model on one GPU; answers that stop early take less), `concurrency` of them at once per
//! endpoint, endpoints in parallel (as the executor sends them); prompt processing, retries and
//! reasoning re-runs are not counted.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Value};

use super::stdout;
use crate::error::{CliError, Exit};
use crate::run::{journal, pending_jobs, Job, RunPlan};

/// With `--logprobs`, at most this many teacher-forcing requests follow the answers: one per
/// prompt per endpoint (the reference's completion scored), and per endpoint and condition a mode
/// probe and three self-consistency checks (a decode and a re-score each).
fn teacher_forcing_ceiling(plan: &RunPlan) -> usize {
    if !plan.sampling.logprobs {
        return 0;
    }
    (plan.scope.len() + 2 * (1 + 3 * 2)) * plan.endpoints.len()
}

/// What one endpoint would be sent.
struct EndpointPlan {
    requests: usize,
    token_ceiling: u64,
    seconds: f64,
}

/// Print the plan (as text, or as JSON with `json`) and send nothing.
pub fn dry_run(plan: &RunPlan, assume_tps: f64, json: bool) -> Result<Exit, CliError> {
    let existing = if plan.previous.is_some() {
        journal::load(&plan.dir)
            .map_err(CliError::unreadable)?
            .records
    } else {
        Vec::new()
    };
    let jobs = pending_jobs(plan, &existing);
    let per_endpoint: Vec<EndpointPlan> = (0..plan.endpoints.len())
        .map(|i| endpoint_plan(&jobs, i, plan.concurrency, assume_tps))
        .collect();
    let requests = jobs.len();
    let ceiling: u64 = per_endpoint.iter().map(|e| e.token_ceiling).sum();
    let seconds = per_endpoint.iter().map(|e| e.seconds).fold(0.0, f64::max);
    let planned = plan.send.len() * plan.repeats as usize * plan.endpoints.len();
    let out = if json {
        let value = json!({
            "dry_run": true,
            "sent": 0,
            "run_dir": plan.dir.display().to_string(),
            "catalogue": {"dir": plan.catalogue.dir.display().to_string(), "hash": plan.catalogue.hash},
            "prompts": plan.send.len(),
            "repeats": plan.repeats,
            "concurrency": plan.concurrency,
            "assume_tps": assume_tps,
            "requests": requests,
            "teacher_forcing_requests": teacher_forcing_ceiling(plan),
            "token_ceiling": ceiling,
            "estimated_seconds": seconds.ceil(),
            "endpoints": plan.endpoints.iter().zip(&per_endpoint).map(|(e, p)| json!({
                "name": e.spec.name,
                "base_url": e.spec.base_url,
                "model": e.spec.model,
                "requests": p.requests,
                "token_ceiling": p.token_ceiling,
                "estimated_seconds": p.seconds.ceil(),
            })).collect::<Vec<Value>>(),
            "resume": plan.previous.as_ref().map(|_| json!({
                "planned": planned,
                "missing": jobs.iter().map(|j| json!({
                    "prompt": j.prompt.id,
                    "endpoint": plan.endpoints[j.endpoint].spec.name,
                    "repeat": j.repeat,
                    "max_tokens": j.max_tokens,
                })).collect::<Vec<Value>>(),
            })),
        });
        serde_json::to_string_pretty(&value).map_err(CliError::usage)? + "\n"
    } else {
        text(
            plan,
            &jobs,
            &per_endpoint,
            assume_tps,
            planned,
            ceiling,
            seconds,
        )
    };
    stdout::print(&out)?;
    Ok(Exit::Success)
}

fn endpoint_plan(jobs: &[Job], endpoint: usize, concurrency: usize, tps: f64) -> EndpointPlan {
    let mine: Vec<&Job> = jobs.iter().filter(|j| j.endpoint == endpoint).collect();
    let token_ceiling: u64 = mine.iter().map(|j| u64::from(j.max_tokens)).sum();
    let in_flight = concurrency.min(mine.len()).max(1) as f64;
    EndpointPlan {
        requests: mine.len(),
        token_ceiling,
        seconds: token_ceiling as f64 / tps / in_flight,
    }
}

fn text(
    plan: &RunPlan,
    jobs: &[Job],
    per_endpoint: &[EndpointPlan],
    tps: f64,
    planned: usize,
    ceiling: u64,
    seconds: f64,
) -> String {
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
    for (e, p) in plan.endpoints.iter().zip(per_endpoint) {
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
    let _ = writeln!(out, "{} requests", jobs.len());
    let forcing = teacher_forcing_ceiling(plan);
    if forcing > 0 {
        let _ = writeln!(
            out,
            "then, with --logprobs, at most {forcing} teacher-forcing requests (one per reference completion per endpoint, 1 token each, plus each endpoint's mode probe and self-checks; on --resume only what is missing)"
        );
    }
    let _ = writeln!(
        out,
        "token ceiling: {ceiling} completion tokens (the sum of max_tokens over the requests)"
    );
    let _ = writeln!(
        out,
        "estimated time: at most {}, assuming every request generates its whole max_tokens at {tps} tokens/s \
         (--assume-tps) with {} in flight per endpoint and the endpoints in parallel; prompt processing, \
         retries and reasoning re-runs not counted",
        duration(seconds),
        plan.concurrency
    );
    if plan.previous.is_some() {
        let _ = writeln!(
            out,
            "resume {}: {} of {planned} planned requests already answered; missing:",
            plan.dir.display(),
            planned.saturating_sub(jobs.len())
        );
        if jobs.is_empty() {
            let _ = writeln!(out, "  nothing: the run is complete");
        }
        let mut by_endpoint: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for j in jobs {
            by_endpoint.entry(j.endpoint).or_default().push(format!(
                "{}#{}",
                j.prompt.id,
                j.repeat + 1
            ));
        }
        for (i, missing) in by_endpoint {
            let shown: Vec<&str> = missing.iter().take(20).map(String::as_str).collect();
            let more = missing.len().saturating_sub(shown.len());
            let _ = writeln!(
                out,
                "  {}: {}{}",
                plan.endpoints[i].spec.name,
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
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
