//! A distribution run from its plan: resolve both endpoints, keep the manifest for `--resume`,
//! send every (sample, prompt, endpoint) without a journalled answer through the one request
//! engine (`run::execute`, sample s of every prompt before sample s + 1 of any), then read and
//! grade every sample, test, answer "same model?", apply the gate and write the reports; and the
//! names of the run folder's files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::analyse::{analyse, PromptSamples, TestSettings};
use super::answer;
use super::limits::{self, statistics_work, MAX_STATISTICS_WORK};
use super::prompts::{read, read_too_long, score_context};
use super::report;
use super::results::{DistributionResults, EndpointModel, SamplingParams};
use crate::catalogue::Prompt;
use crate::endpoint::{ClientOptions, EndpointSpec, FailureKind};
use crate::engine::Progress;
use crate::gate::Gate;
use crate::run::journal::Journal;
use crate::run::manifest::check_base_url;
use crate::run::record::Answered;
use crate::run::Line;
use crate::run::{
    resolve_targets, send_jobs, Job, PlannedEndpoint, RunError, Sampling, Sending, Target,
};
use crate::run_folder::{tool_version, Checked, RunFolder, RunHeader, RunKind};

/// How often plain progress output prints a statistics line.
const STATISTICS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// What a distribution run was started with; `--resume` reads it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistributionManifest {
    /// The tool, times, status and invocations every manifest opens with.
    #[serde(flatten)]
    pub header: RunHeader,
    /// The reference (A) first; models as resolved.
    pub endpoints: Vec<EndpointSpec>,
    pub sampling: SamplingParams,
    /// The prompt ids, in order.
    pub prompts: Vec<String>,
    pub alpha: f64,
    pub permutations: u32,
    pub seed: u64,
    pub gate: Gate,
}

impl Checked for DistributionManifest {
    /// What serde cannot check: two endpoints with distinct names and http(s) URLs, prompts,
    /// sampling parameters and test settings within the bounds the flags have (`limits`).
    fn check(&self) -> Result<(), String> {
        if self.endpoints.len() != 2 {
            return Err(format!(
                "`endpoints` lists {}; a distribution run has exactly two",
                self.endpoints.len()
            ));
        }
        if self.endpoints[0].name == self.endpoints[1].name {
            return Err(format!(
                "endpoint name `{}` appears twice",
                self.endpoints[0].name
            ));
        }
        for e in &self.endpoints {
            check_base_url(&e.base_url)
                .map_err(|why| format!("endpoint `{}`: `base_url` {why}", e.name))?;
        }
        if self.prompts.is_empty() {
            return Err("`prompts` is empty".into());
        }
        limits::check_sampling(&self.sampling)?;
        limits::check_test(self.alpha, self.permutations)
    }
}

/// A distribution run folder: the manifest, records.jsonl (the answers, written and read by
/// `run::journal`), results.json with this command's own schema, and the reports.
const KIND: RunKind = RunKind {
    name: "distribution run",
    manifest: MANIFEST,
    manifest_what: "distribution manifest",
    manifest_ends_in_newline: false,
};
/// What the run was started with ([`DistributionManifest`]); read back by `--resume`.
pub const MANIFEST: &str = "distribution.json";
/// [`DistributionResults`].
pub const RESULTS: &str = "results.json";
pub const REPORT_MD: &str = "report.md";
pub const REPORT_HTML: &str = "report.html";

/// The distribution run folder `dir`.
pub fn folder(dir: &Path) -> RunFolder {
    RunFolder::new(dir, &KIND)
}

/// A distribution run, built by the face from flags (and the manifest of a resumed run).
#[derive(Debug)]
pub struct DistributionPlan {
    pub dir: PathBuf,
    /// Exactly two: A (the reference), then B.
    pub endpoints: Vec<PlannedEndpoint>,
    pub prompts: Vec<Arc<Prompt>>,
    pub sampling: SamplingParams,
    pub test: TestSettings,
    pub gate: Gate,
    pub client: ClientOptions,
    /// Requests in flight per endpoint.
    pub concurrency: usize,
    /// The run's header with this invocation (keys redacted) last, begun by the face.
    pub header: RunHeader,
    pub quiet: bool,
}

/// Why a distribution run stopped short of its reports.
#[derive(Debug, thiserror::Error)]
pub enum DistributionError {
    #[error(transparent)]
    Run(#[from] RunError),
    /// results.json or a report cannot be written.
    #[error("{0:#}")]
    Report(anyhow::Error),
}

/// Run the plan to its reports.
pub async fn run(plan: &DistributionPlan) -> Result<DistributionResults, DistributionError> {
    let resolved = resolve_targets(&plan.endpoints, &plan.client).await?;
    let targets: Vec<Target> = resolved.into_iter().map(|(t, _)| t).collect();
    let folder = folder(&plan.dir);
    folder.create().map_err(RunError::Folder)?;
    let mut manifest = manifest(plan, &targets);
    folder.write_manifest(&manifest).map_err(RunError::Folder)?;
    let mut journal = Journal::open_kept(&plan.dir).map_err(RunError::Folder)?;
    let jobs = missing_samples(plan, &targets, journal.kept());
    let notes: Vec<String> = (journal.skipped().iter())
        .map(|s| format!("warning: {s}"))
        .collect();
    let sampling = request_sampling(&plan.sampling);
    let how = Sending {
        concurrency: plan.concurrency,
        sampling: &sampling,
        reasoning_retry_budget: 0,
        quiet: plan.quiet,
    };
    let interrupted = send_jobs(jobs, &targets, &mut journal, &how, &notes)
        .await
        .map_err(RunError::Send)?
        .interrupted;
    manifest.header.end(interrupted);
    folder.write_manifest(&manifest).map_err(RunError::Send)?;
    let (samples, all_there) = gather(plan, &targets, journal.kept());
    drop(journal);
    let names = [targets[0].name.as_str(), targets[1].name.as_str()];
    let distribution = statistics(plan, names, &samples);
    let complete = all_there && !interrupted;
    let summary = answer::summary_of(&distribution, &plan.sampling, complete);
    let gate = answer::evaluate(&plan.gate, &distribution, &summary);
    let results = DistributionResults {
        tool: tool_version(),
        complete,
        sampling: plan.sampling.clone(),
        endpoints: targets
            .iter()
            .map(|t| EndpointModel {
                name: t.name.clone(),
                model: t.model.clone(),
            })
            .collect(),
        distribution,
        summary,
        gate,
    };
    let blocks = report::document(&results);
    folder
        .write_json(RESULTS, &results)
        .and_then(|()| folder.write(REPORT_MD, report::markdown(&blocks).as_bytes()))
        .and_then(|()| folder.write(REPORT_HTML, report::html(&results, &blocks).as_bytes()))
        .map_err(DistributionError::Report)?;
    Ok(results)
}

/// The test and its controls, with progress on stderr: the work first, then each stage's
/// permutations as they are made.
fn statistics(
    plan: &DistributionPlan,
    names: [&str; 2],
    samples: &[PromptSamples],
) -> super::results::Distribution {
    let mut progress = Progress::status_line(plan.quiet, STATISTICS_EVERY);
    let test = plan.test;
    let per_side = samples.iter().flatten().map(Vec::len).max().unwrap_or(0);
    if let Some(asked) = test.reduced_from {
        progress.note(&format!(
            "note: {} permutations instead of {asked}, so the test stays within {MAX_STATISTICS_WORK} kernel look-ups (--permutations sets them)",
            test.permutations
        ));
    }
    progress.note(&format!(
        "statistics: {} prompts, up to {per_side} samples a side, {} permutations for the test and each control: about {:.1e} kernel look-ups",
        samples.len(),
        test.permutations,
        statistics_work(samples.len(), per_side as u32, test.permutations) as f64
    ));
    let distribution = analyse(&plan.prompts, names, samples, test, &mut |stage, made| {
        progress.status(
            &format!(
                "statistics: {stage}: permutation {made} of {}",
                test.permutations
            ),
            made == test.permutations,
        );
    });
    progress.finish();
    distribution
}

fn manifest(plan: &DistributionPlan, targets: &[Target]) -> DistributionManifest {
    DistributionManifest {
        header: plan.header.clone(),
        endpoints: plan
            .endpoints
            .iter()
            .zip(targets)
            .map(|(e, t)| EndpointSpec {
                model: Some(t.model.clone()),
                ..e.spec.clone()
            })
            .collect(),
        sampling: plan.sampling.clone(),
        prompts: plan.prompts.iter().map(|p| p.id.clone()).collect(),
        alpha: plan.test.alpha,
        permutations: plan.test.permutations,
        seed: plan.test.seed,
        gate: plan.gate.clone(),
    }
}

/// What every request carries: the temperature, top_p and top_k when given, `--param`s, no
/// streaming; the same for both endpoints.
pub fn request_sampling(s: &SamplingParams) -> Sampling {
    let mut sampling = Sampling::deterministic(super::prompts::GRADED_MAX_TOKENS);
    sampling.temperature = s.temperature;
    sampling.max_tokens_override = s.max_tokens;
    if let Some(p) = s.top_p {
        sampling.params.insert("top_p".into(), json!(p));
    }
    if let Some(k) = s.top_k {
        sampling.params.insert("top_k".into(), json!(k));
    }
    for (k, v) in &s.params {
        sampling.params.insert(k.clone(), v.clone());
    }
    sampling
}

/// (prompt, endpoint, sample) of a record.
type Slot = (String, String, u32);

/// The newest record of each slot (later lines win).
fn newest<R: Line>(records: &[R]) -> BTreeMap<Slot, &R> {
    records
        .iter()
        .map(|r| {
            (
                (r.prompt().to_string(), r.endpoint().to_string(), r.repeat()),
                r,
            )
        })
        .collect()
}

fn max_tokens(plan: &DistributionPlan, prompt: &Prompt) -> u32 {
    plan.sampling
        .max_tokens
        .or(prompt.max_tokens)
        .unwrap_or(super::prompts::GRADED_MAX_TOKENS)
}

/// Every sample without an answer (none yet, or a request that failed) among `records`.
fn missing_samples<R: Line>(
    plan: &DistributionPlan,
    targets: &[Target],
    records: &[R],
) -> Vec<Job> {
    let have = newest(records);
    let mut jobs = Vec::new();
    for repeat in 0..plan.sampling.samples {
        for prompt in &plan.prompts {
            for (endpoint, target) in targets.iter().enumerate() {
                let slot = (prompt.id.clone(), target.name.clone(), repeat);
                if have.get(&slot).is_none_or(|r| r.is_request_failure()) {
                    jobs.push(Job {
                        prompt: prompt.clone(),
                        endpoint,
                        max_tokens: max_tokens(plan, prompt),
                        repeat,
                        note: None,
                    });
                }
            }
        }
    }
    jobs
}

/// Every prompt's usable samples per endpoint, read and graded, and whether every planned
/// sample is there. A request that failed is no sample; an answer the model left empty or cut
/// short is one (it is what the deployment gives).
fn gather(
    plan: &DistributionPlan,
    targets: &[Target],
    records: &[Answered],
) -> (Vec<PromptSamples>, bool) {
    let have = newest(records);
    let ctx = score_context();
    let mut all_there = true;
    let samples = plan
        .prompts
        .iter()
        .map(|prompt| {
            let side = |target: &Target| -> Vec<_> {
                (0..plan.sampling.samples)
                    .filter_map(|repeat| {
                        have.get(&(prompt.id.clone(), target.name.clone(), repeat))
                            .filter(|r| !r.is_request_failure())
                    })
                    .map(|r| {
                        let c = r.completion();
                        let text = c.answer.as_deref().or(c.content.as_deref()).unwrap_or("");
                        match r.error() {
                            Some(e) if e.kind == FailureKind::ReplyTooLong => {
                                read_too_long(prompt, text, &ctx)
                            }
                            _ => read(prompt, text, &ctx),
                        }
                    })
                    .collect()
            };
            let sides: PromptSamples = [side(&targets[0]), side(&targets[1])];
            if sides
                .iter()
                .any(|s| s.len() < plan.sampling.samples as usize)
            {
                all_there = false;
            }
            sides
        })
        .collect();
    (samples, all_there)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_folder::header::{without_header, UNKNOWN_TIME};
    use crate::run_folder::RunStatus;
    use serde_json::Value;

    /// The committed example, written before distribution manifests had a header.
    fn example() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("runs/example-distribution-kv-f16-vs-q4")
    }

    #[test]
    fn a_manifest_written_before_the_header_reads_with_unknown_times_and_its_invocations() {
        let m: DistributionManifest = folder(&example()).read_checked_manifest().unwrap();
        let h = &m.header;
        assert_eq!(h.tool, "coherence 0.1.0");
        assert_eq!((h.created_at, h.updated_at), (UNKNOWN_TIME, UNKNOWN_TIME));
        assert_eq!(h.status, RunStatus::Running);
        assert_eq!(h.invocations.len(), 2);
        assert!(h.invocations.iter().all(|i| i.at == UNKNOWN_TIME));
        assert_eq!(
            h.invocations[1].args,
            [
                "./target/debug/coherence",
                "distribution",
                "--resume",
                "/work/exrun/dist-kv",
                "--quiet"
            ]
        );
        assert_eq!(h.invocations[0].args.len(), 15);
        // Everything else writes back as it was read.
        let old: Value =
            serde_json::from_slice(&std::fs::read(example().join(MANIFEST)).unwrap()).unwrap();
        assert_eq!(
            without_header(serde_json::to_value(&m).unwrap()),
            without_header(old)
        );
    }

    #[test]
    fn a_new_manifest_round_trips_opening_with_its_header() {
        let old: DistributionManifest = folder(&example()).read_checked_manifest().unwrap();
        let mut m = DistributionManifest {
            header: RunHeader::begin(None, vec!["coherence".into(), "distribution".into()]),
            ..old
        };
        m.header.end(true);
        let dir = tempfile::tempdir().unwrap();
        folder(dir.path()).write_manifest(&m).unwrap();
        let back: DistributionManifest = folder(dir.path()).read_checked_manifest().unwrap();
        assert_eq!(back, m);
        let written: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(MANIFEST)).unwrap()).unwrap();
        let keys: Vec<&str> = written
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys[..6],
            [
                "tool",
                "created_at",
                "updated_at",
                "status",
                "invocations",
                "endpoints"
            ]
        );
        assert_eq!(written["status"], "interrupted");
        assert_eq!(written["invocations"][0]["args"][1], "distribution");
        assert_eq!(written["invocations"][0]["at"], written["created_at"]);
    }

    #[test]
    fn requests_carry_the_sampling_parameters_and_params() {
        let mut params = serde_json::Map::new();
        params.insert("min_p".into(), json!(0.05));
        let s = request_sampling(&SamplingParams {
            temperature: 0.7,
            top_p: Some(0.9),
            top_k: Some(20),
            samples: 10,
            max_tokens: Some(99),
            params,
        });
        assert_eq!(s.temperature, 0.7);
        assert_eq!(s.max_tokens_override, Some(99));
        assert_eq!(s.params["top_p"], json!(0.9));
        assert_eq!(s.params["top_k"], json!(20));
        assert_eq!(s.params["min_p"], json!(0.05));
        assert!(!s.stream);
        let bare = request_sampling(&SamplingParams {
            temperature: 1.0,
            top_p: None,
            top_k: None,
            samples: 2,
            max_tokens: None,
            params: serde_json::Map::new(),
        });
        assert!(bare.params.is_empty());
    }
}
