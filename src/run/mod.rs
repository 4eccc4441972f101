//! A run: resolve endpoints, write the manifest, send what is missing, journal every outcome.

mod executor;
pub mod journal;
mod logprobs_probe;
pub mod manifest;
pub mod params;
pub mod plan;
pub mod record;
pub mod replay;
pub mod request;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use executor::Execution;
pub use executor::{execute, send, tally, Job, Target};
pub use logprobs_probe::Finding as LogprobsFinding;
pub use manifest::{CatalogueInfo, EndpointInfo, Manifest, ReplaySource, Sampling, StoppingRule};
pub use plan::{redacted_argv, PlannedEndpoint, RepeatOrder, Replayed, RunPlan, CONTROL_REPEAT};
use record::RecordKey;
pub use record::{Answered, Line, Record};

use crate::catalogue::Prompt;
use crate::endpoint::{Client, ClientOptions, FailureKind, ModelsInfo};
use crate::engine::Progress;
use crate::run_folder::{compare, RunHeader};

/// Why a run could not start or go on. The face maps each to an exit code (`error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The run folder cannot be created or written before sending starts.
    #[error("{0:#}")]
    Folder(anyhow::Error),
    /// An endpoint's configuration cannot make a client (a malformed URL, for example).
    #[error("{0:#}")]
    Config(anyhow::Error),
    /// An endpoint cannot be reached or lists no model: nothing was sent to any endpoint.
    #[error("{0:#}")]
    Endpoint(anyhow::Error),
    /// Sending or journalling failed after the run began; the journal keeps what was sent.
    #[error("{0:#}")]
    Send(anyhow::Error),
}

impl RunError {
    /// The error inside, whichever stage it came from.
    pub fn cause(&self) -> &anyhow::Error {
        match self {
            RunError::Folder(e)
            | RunError::Config(e)
            | RunError::Endpoint(e)
            | RunError::Send(e) => e,
        }
    }
}

/// Resolve each endpoint's model from `GET /models` unless `--model` named it. An endpoint whose
/// model cannot be resolved stops the run before anything is sent. A replayed endpoint keeps what
/// its run recorded and is not asked.
pub async fn resolve_targets(
    endpoints: &[PlannedEndpoint],
    options: &ClientOptions,
) -> Result<Vec<(Target, Option<ModelsInfo>)>, RunError> {
    let lookups = endpoints.iter().map(|e| async move {
        let client = Client::new(&e.spec.base_url, e.key.clone(), options.clone())
            .map_err(RunError::Config)?;
        if let Some(replayed) = &e.replayed {
            let target = Target {
                name: e.spec.name.clone(),
                model: e.spec.model.clone().unwrap_or_default(),
                client,
                sampling_override: e.spec.sampling_override.clone(),
            };
            return Ok((target, replayed.models.clone()));
        }
        let info = client.models().await;
        let model = match (&e.spec.model, &info) {
            (Some(m), _) => m.clone(),
            (None, Ok(i)) => i.first_model(&e.spec.name).map_err(|why| {
                RunError::Endpoint(anyhow::anyhow!(
                    "endpoint {} ({}): {why}",
                    e.spec.name,
                    e.spec.base_url
                ))
            })?,
            (None, Err(f)) if matches!(f.kind, FailureKind::Connect | FailureKind::Timeout) => {
                // Naming the model would only fail every request of an endpoint nobody answers.
                return Err(RunError::Endpoint(anyhow::anyhow!(
                    "endpoint {} is not reachable at {} (GET /models: {f}); start the server, \
                     or fix the URL (scheme, host, port, /v1)",
                    e.spec.name,
                    e.spec.base_url,
                )));
            }
            (None, Err(f)) => {
                // Naming the model helps a server that answers but has no /models.
                return Err(RunError::Endpoint(anyhow::anyhow!(
                    "endpoint {} ({}): GET /models failed: {f}; check the URL, or name the model \
                     with --model {}=MODEL",
                    e.spec.name,
                    e.spec.base_url,
                    e.spec.name
                )));
            }
        };
        Ok((
            Target {
                name: e.spec.name.clone(),
                model,
                client,
                sampling_override: e.spec.sampling_override.clone(),
            },
            info.ok(),
        ))
    });
    futures::future::join_all(lookups)
        .await
        .into_iter()
        .collect()
}

/// The jobs still to do: every (prompt, endpoint, budget, repeat) of the plan without a record
/// that holds a response. Failed requests are sent again. A replayed endpoint gets none.
pub fn pending_jobs<R: Line>(plan: &RunPlan, existing: &[R]) -> Vec<Job> {
    let merged = journal::merge(existing);
    let mut jobs = Vec::new();
    let prompts = plan.prompts_to_send();
    // Interleaved: repeat r of every prompt before repeat r + 1 of any, so that no repeat is
    // sent right after the previous repeat of the same prompt (and inherits its prompt cache).
    let order: Vec<(&Arc<Prompt>, u32)> = match plan.repeat_order {
        RepeatOrder::Interleaved => (0..plan.repeats)
            .flat_map(|r| prompts.iter().map(move |p| (p, r)))
            .collect(),
        RepeatOrder::BackToBack => prompts
            .iter()
            .flat_map(|p| (0..plan.repeats).map(move |r| (p, r)))
            .collect(),
    };
    let controlled = control_slots(plan, &prompts, order.len());
    let mut controls = controlled.iter().peekable();
    for (position, (prompt, repeat)) in order.into_iter().enumerate() {
        // The control of a prompt goes out a few prompts after its first answer, on the
        // reference's lane among the pair's requests.
        while let Some(c) = controls.next_if(|c| c.0 <= position) {
            push_missing(&mut jobs, &merged, plan, control_job(plan, &c.1));
        }
        let id = &prompt.id;
        let max_tokens = plan.max_tokens_for(prompt.max_tokens);
        for (endpoint, e) in plan.endpoints.iter().enumerate() {
            if e.replayed.is_some() {
                continue;
            }
            let key = RecordKey {
                prompt: id.clone(),
                endpoint: e.spec.name.clone(),
                max_tokens,
                repeat,
            };
            let job = Job {
                prompt: prompt.clone(),
                endpoint,
                max_tokens,
                repeat,
                note: None,
            };
            match merged.get(&key) {
                Some((_, r)) if !r.is_request_failure() => {
                    // The reasoning used the budget and its automatic retry never finished: retry now.
                    let consumed = r
                        .error()
                        .is_some_and(|e| e.kind == FailureKind::ReasoningConsumedBudget);
                    if let Some(retry) = job
                        .reasoning_retry(plan.reasoning_retry_budget)
                        .filter(|_| consumed)
                    {
                        let retry_key = RecordKey {
                            max_tokens: retry.max_tokens,
                            ..key
                        };
                        if !answered(&merged, &retry_key) {
                            jobs.push(retry);
                        }
                    }
                }
                _ => jobs.push(job),
            }
        }
    }
    for c in controls {
        push_missing(&mut jobs, &merged, plan, control_job(plan, &c.1));
    }
    jobs
}

/// Prompts sent before a prompt's control goes out after its first answer.
const CONTROL_LAG: usize = 3;

/// The prompts that get the reference's control answer (the first `plan.control` of the scope,
/// when each prompt is sent once and the reference is not replayed), each with the position
/// among the `sending` requests of the send order after which it goes out: a prompt sent now,
/// [`CONTROL_LAG`] prompts after its first answer; one sent before (a control grown after a
/// look), spread evenly over the requests sent now. In position order.
fn control_slots(
    plan: &RunPlan,
    prompts: &[Arc<Prompt>],
    sending: usize,
) -> Vec<(usize, Arc<Prompt>)> {
    let reference_sent = plan.endpoints.first().is_some_and(|e| e.replayed.is_none());
    if plan.control == 0 || plan.repeats != 1 || !reference_sent {
        return Vec::new();
    }
    let sent_now: BTreeMap<&str, usize> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.as_str(), i))
        .collect();
    let first = &plan.scope[..plan.control.min(plan.scope.len())];
    let earlier: Vec<&String> = first
        .iter()
        .filter(|id| !sent_now.contains_key(id.as_str()))
        .collect();
    let spread = sending / (earlier.len() + 1);
    let mut slots: Vec<(usize, Arc<Prompt>)> = first
        .iter()
        .filter_map(|id| {
            let i = *sent_now.get(id.as_str())?;
            Some((i + CONTROL_LAG, prompts[i].clone()))
        })
        .chain(earlier.iter().enumerate().filter_map(|(k, id)| {
            let prompt = plan.catalogue.get(id)?;
            Some(((k + 1) * spread, Arc::new(prompt.clone())))
        }))
        .collect();
    slots.sort_by_key(|s| s.0);
    slots
}

/// The reference's control request for `prompt`.
fn control_job(plan: &RunPlan, prompt: &Arc<Prompt>) -> Job {
    Job {
        prompt: prompt.clone(),
        endpoint: 0,
        max_tokens: plan.max_tokens_for(prompt.max_tokens),
        repeat: CONTROL_REPEAT,
        note: None,
    }
}

/// Add `job` unless its slot already holds an answer.
fn push_missing<R: Line>(
    jobs: &mut Vec<Job>,
    merged: &BTreeMap<RecordKey, (usize, &R)>,
    plan: &RunPlan,
    job: Job,
) {
    let key = RecordKey {
        prompt: job.prompt.id.clone(),
        endpoint: plan.endpoints[job.endpoint].spec.name.clone(),
        max_tokens: job.max_tokens,
        repeat: job.repeat,
    };
    if !answered(merged, &key) {
        jobs.push(job);
    }
}

/// Whether `key`'s newest record holds a response (a failed request is sent again).
fn answered<R: Line>(merged: &BTreeMap<RecordKey, (usize, &R)>, key: &RecordKey) -> bool {
    merged
        .get(key)
        .is_some_and(|(_, r)| !r.is_request_failure())
}

/// What every request of this invocation carries: the plan's sampling, with the decode-logprobs
/// choice the run made when it started (kept on resume and between rounds), or, for a new run
/// that leaves it to the tool, the probe's finding.
async fn run_sampling(plan: &RunPlan, resolved: &[(Target, Option<ModelsInfo>)]) -> Sampling {
    let mut sampling = plan.sampling.clone();
    if let Some(previous) = &plan.previous {
        sampling.logprobs |= previous.sampling.logprobs;
        sampling.teacher_forcing = previous.sampling.teacher_forcing;
        sampling.logprobs_note = previous.sampling.logprobs_note.clone();
    } else if plan.logprobs_auto && !plan.replays() {
        let targets: Vec<Target> = resolved.iter().map(|(t, _)| t.clone()).collect();
        let finding = logprobs_probe::probe(&targets, &plan.prompts_to_send(), &sampling).await;
        sampling.logprobs = finding.on;
        sampling.logprobs_note = Some(finding.note);
    }
    sampling
}

/// The logprobs probe of a new run ([`logprobs_probe`]) sent to the endpoints `plan` sends to
/// (its replayed ones left out) under the plan's sampling: for a plan whose sampling another run
/// fixed, as a watch's check inherits its baseline's, to say what that run left out.
pub async fn probe_logprobs(plan: &RunPlan) -> Result<LogprobsFinding, RunError> {
    let fresh: Vec<PlannedEndpoint> = plan
        .endpoints
        .iter()
        .filter(|e| e.replayed.is_none())
        .cloned()
        .collect();
    let targets: Vec<Target> = resolve_targets(&fresh, &plan.client)
        .await?
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    Ok(logprobs_probe::probe(&targets, &plan.prompts_to_send(), &plan.sampling).await)
}

/// How a kind of run sends its requests.
pub struct Sending<'a> {
    /// Requests in flight per endpoint.
    pub concurrency: usize,
    /// What every request carries.
    pub sampling: &'a Sampling,
    /// Re-run at this budget when the reasoning consumed a smaller one (0: never).
    pub reasoning_retry_budget: u32,
    pub quiet: bool,
}

/// The one send loop of every kind of run that sends prompts (compare, distribution, project):
/// each endpoint's share of `jobs` counted on stderr after `notes`, every record journalled into
/// `journal` (and kept there, when it keeps them) as it arrives; Ctrl-C stops sending and keeps
/// what arrived. Each kind picks its `jobs` from what the journal holds.
pub async fn send_jobs(
    jobs: Vec<Job>,
    targets: &[Target],
    journal: &mut journal::Journal,
    how: &Sending<'_>,
    notes: &[String],
) -> anyhow::Result<Execution> {
    let work: Vec<(String, u64)> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let n = jobs.iter().filter(|j| j.endpoint == i).count();
            (t.name.clone(), n as u64)
        })
        .collect();
    let mut progress = Progress::counting(how.quiet, &work);
    for note in notes {
        progress.note(note);
    }
    execute(
        jobs,
        targets,
        how.concurrency,
        how.sampling,
        how.reasoning_retry_budget,
        journal,
        &mut progress,
    )
    .await
}

/// Outcome of the sending phase.
#[derive(Debug)]
pub struct RunOutcome {
    pub manifest: Manifest,
    pub execution: Execution,
    /// Unreadable journal lines that were skipped.
    pub skipped: Vec<String>,
    /// The endpoints with their resolved models, for the phases that follow sending.
    pub targets: Vec<Target>,
}

/// Execute a compare plan: manifest, journal, requests. Scoring and reports come after.
pub async fn run_plan(plan: &RunPlan, args: Vec<String>) -> Result<RunOutcome, RunError> {
    let mut session = Session::open(plan, args).await?;
    let execution = session.send_missing(plan).await?;
    session.finish(execution)
}

/// A compare run being sent: its folder held, each endpoint asked for its model once, the
/// manifest written with this invocation, the journal read once and kept with every record sent
/// since. [`run_plan`] sends once; `compare --until-decided` sends round after round through one
/// session, so a round costs its own requests, not the run's.
pub struct Session {
    pub manifest: Manifest,
    /// The endpoints with their resolved models.
    pub targets: Vec<Target>,
    dir: std::path::PathBuf,
    journal: journal::Journal,
    /// Set when the folder held a run before this invocation (a resume).
    resumed: bool,
    /// Set until the first send, which says what reading the journal met.
    first_send: bool,
}

impl Session {
    /// Hold the folder, resolve the endpoints, write the manifest of `plan` with this
    /// invocation's `args` (keys redacted) and open the journal (copying the replayed answers
    /// into a new run's).
    pub async fn open(plan: &RunPlan, args: Vec<String>) -> Result<Self, RunError> {
        let folder = compare::folder(&plan.dir);
        folder.hold().map_err(RunError::Folder)?;
        let resolved = resolve_targets(&plan.endpoints, &plan.client).await?;
        folder.create().map_err(RunError::Folder)?;
        let sampling = run_sampling(plan, &resolved).await;
        let endpoints: Vec<EndpointInfo> = plan
            .endpoints
            .iter()
            .zip(&resolved)
            .map(|(e, (t, info))| {
                let mut spec = e.spec.clone();
                spec.model = Some(t.model.clone());
                EndpointInfo {
                    spec,
                    models: info.clone(),
                    replayed_from: e
                        .replayed
                        .as_ref()
                        .map(|r| r.from.clone())
                        .unwrap_or_default(),
                }
            })
            .collect();
        // Keys never come from flags, but one pasted into a flag anyway must not be recorded.
        let args = redacted_argv(args, &plan.endpoints);
        let mut manifest = match plan.previous.clone() {
            Some(previous) => Manifest {
                header: RunHeader::begin(Some(previous.header.clone()), args),
                ..previous
            },
            None => Manifest::new(RunHeader::begin(None, args), sampling.clone()),
        };
        manifest.endpoints = endpoints;
        manifest.sampling = sampling;
        manifest.repeats = plan.repeats;
        manifest.control = plan.control;
        manifest.control_max = plan.control_max;
        manifest.fail_on = plan.fail_on.clone();
        manifest.margin = Some(plan.margin);
        if plan.identity_alpha.is_some() {
            manifest.identity_alpha = plan.identity_alpha;
        }
        manifest.until_decided = plan.until_decided;
        if !plan.difficulty.is_empty() {
            manifest.difficulty = plan.difficulty.clone();
        }
        for note in &plan.notes {
            if !manifest.notes.contains(note) {
                manifest.notes.push(note.clone());
            }
        }
        let mut session = Session {
            manifest,
            targets: resolved.into_iter().map(|(t, _)| t).collect(),
            dir: plan.dir.clone(),
            journal: journal::Journal::open_kept(&plan.dir).map_err(RunError::Folder)?,
            resumed: plan.previous.is_some(),
            first_send: true,
        };
        session.widen(plan)?;
        if !session.resumed {
            replay::copy_answers(&session.manifest, &mut session.journal)
                .map_err(RunError::Folder)?;
        }
        Ok(session)
    }

    /// Record `plan`'s catalogue, scope and control in the manifest and write it: a round of
    /// `--until-decided` or of a growing control widens the run before it sends the round.
    pub fn widen(&mut self, plan: &RunPlan) -> Result<(), RunError> {
        self.manifest.header.touch();
        self.manifest.catalogue = CatalogueInfo::of(&plan.catalogue);
        self.manifest.prompts = plan.scope.clone();
        self.manifest.control = plan.control;
        self.manifest.write(&plan.dir).map_err(RunError::Folder)
    }

    /// Send what `plan` is missing, journalling each record as it arrives.
    pub async fn send_missing(&mut self, plan: &RunPlan) -> Result<Execution, RunError> {
        let jobs = pending_jobs(plan, self.journal.kept());
        let mut notes = Vec::new();
        // Said once: the rounds after the first send more of the same run.
        if std::mem::take(&mut self.first_send) {
            notes.extend(
                self.journal
                    .skipped()
                    .iter()
                    .map(|s| format!("warning: {s}")),
            );
            if self.resumed {
                notes.push(format!(
                    "resuming {}: {} records kept, {} requests to send",
                    plan.dir.display(),
                    self.journal.kept().len(),
                    jobs.len()
                ));
            }
        }
        let how = Sending {
            concurrency: plan.concurrency,
            sampling: &self.manifest.sampling,
            reasoning_retry_budget: plan.reasoning_retry_budget,
            quiet: plan.quiet,
        };
        send_jobs(jobs, &self.targets, &mut self.journal, &how, &notes)
            .await
            .map_err(RunError::Send)
    }

    /// Every record of the run so far, as scoring keeps them.
    pub fn records(&self) -> &[record::Answered] {
        self.journal.kept()
    }

    /// Write the manifest's final status (finished, or interrupted by `execution`).
    pub fn finish(mut self, execution: Execution) -> Result<RunOutcome, RunError> {
        self.manifest.header.end(execution.interrupted);
        self.manifest.write(&self.dir).map_err(RunError::Send)?;
        Ok(RunOutcome {
            manifest: self.manifest,
            execution,
            skipped: self.journal.skipped().to_vec(),
            targets: self.targets,
        })
    }
}
