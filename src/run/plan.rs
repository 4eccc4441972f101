//! A validated run plan: which prompts go to which endpoints, how often, with what budget.

use std::path::PathBuf;
use std::sync::Arc;

use super::manifest::{Manifest, ReplaySource, Sampling, StoppingRule};
use crate::catalogue::{Catalogue, Prompt};
use crate::endpoint::{ApiKey, ClientOptions, EndpointSpec, ModelsInfo};
use crate::gate::Gate;

/// The repeat index of the reference's A-vs-A control answers (its first answers are repeat 0).
pub const CONTROL_REPEAT: u32 = 1;

/// The default token budget: generous, because reasoning endpoints spend budget before answering.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// An endpoint ready to be called: its spec plus the key read from the environment; or, when
/// `replayed`, one whose answers come from saved runs and which nothing is sent to.
#[derive(Debug, Clone)]
pub struct PlannedEndpoint {
    pub spec: EndpointSpec,
    pub key: Option<ApiKey>,
    pub replayed: Option<Replayed>,
}

/// The command line with every endpoint's key value scrubbed: keys never come from flags, but
/// one pasted into a flag anyway must not reach the run folder.
pub fn redacted_argv(argv: Vec<String>, endpoints: &[PlannedEndpoint]) -> Vec<String> {
    argv.into_iter()
        .map(|a| {
            endpoints
                .iter()
                .filter_map(|e| e.key.as_ref())
                .fold(a, |a, k| k.redact(&a))
        })
        .collect()
}

/// A saved endpoint played again: what its run recorded of `GET /models`, and the saved runs
/// whose answers it gives (their repeats pooled, in order).
#[derive(Debug, Clone)]
pub struct Replayed {
    pub models: Option<ModelsInfo>,
    pub from: Vec<ReplaySource>,
}

#[derive(Debug, Clone)]
pub struct RunPlan {
    pub dir: PathBuf,
    /// The manifest of the run being resumed.
    pub previous: Option<Manifest>,
    pub catalogue: Catalogue,
    pub endpoints: Vec<PlannedEndpoint>,
    /// Prompt ids to send now (only what is missing is actually sent).
    pub send: Vec<String>,
    /// Every prompt id the run covers (what the report shows).
    pub scope: Vec<String>,
    pub repeats: u32,
    /// Prompts the reference answers a second time as the A-vs-A control (with one repeat):
    /// the first this many of the scope.
    pub control: usize,
    /// `--control auto`: the control grows after each look until identity is decided or it
    /// holds this many prompts (never more than the scope); None: `control` is fixed.
    pub control_max: Option<usize>,
    /// Probe the endpoints and request decode logprobs where they change nothing (a new run
    /// without `--logprobs` or `--no-logprobs`).
    pub logprobs_auto: bool,
    /// The order repeats are sent in.
    pub repeat_order: RepeatOrder,
    /// The budget that overrides each prompt's own in this invocation: `--max-tokens`, else the
    /// one the run was started with (`sampling.max_tokens_override`).
    pub max_tokens_override: Option<u32>,
    /// What every request carries (temperature 0, no streaming, `--param`s) and the run's budget
    /// rule, as the manifest records it.
    pub sampling: Sampling,
    pub concurrency: usize,
    pub client: ClientOptions,
    pub quiet: bool,
    /// The gate in force.
    pub fail_on: Gate,
    /// The equivalence margin of the quality verdict, in accuracy points.
    pub margin: f64,
    /// The identity test's level, when the run sets its own (`watch --alpha`); None keeps the
    /// manifest's, else the default.
    pub identity_alpha: Option<f64>,
    /// Re-run at this budget when the reasoning consumed a smaller one (0: never).
    pub reasoning_retry_budget: u32,
    /// `--until-decided`: send the generated items in rounds until decided (`compare/`).
    pub until_decided: Option<StoppingRule>,
    /// `--difficulty auto`: calibrate each generated family's level on the reference before
    /// sending, aiming at this accuracy (`compare/calibrate.rs`).
    pub calibrate: Option<f64>,
    /// The generated families' levels and calibration carried from a saved run (`--baseline`,
    /// `diff`, `watch`), recorded in the new run's manifest.
    pub difficulty: Vec<crate::catalogue::generator::FamilyLevel>,
    /// Notes the manifest keeps for the results' warnings (what a replayed run left out).
    pub notes: Vec<String>,
}

/// The order in which repeats of the prompts are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepeatOrder {
    /// Repeat r of every prompt before repeat r + 1 of any (the default).
    #[default]
    Interleaved,
    /// Every repeat of a prompt one after the other, then the next prompt.
    BackToBack,
}

impl RunPlan {
    /// The budget a prompt is sent with.
    pub fn max_tokens_for(&self, prompt_max: Option<u32>) -> u32 {
        self.max_tokens_override
            .or(prompt_max)
            .unwrap_or(self.sampling.default_max_tokens)
    }

    /// Whether an endpoint is replayed from saved runs: teacher forcing, which sends the
    /// reference's completions to every endpoint, cannot run then.
    pub fn replays(&self) -> bool {
        self.endpoints.iter().any(|e| e.replayed.is_some())
    }

    /// Whether the control grows until identity is decided: `--control auto`, one repeat (with
    /// more every prompt has its control already) and a reference that is sent to.
    pub fn grows_control(&self) -> bool {
        self.control_max.is_some()
            && self.repeats == 1
            && self.endpoints.len() > 1
            && self.endpoints.first().is_some_and(|e| e.replayed.is_none())
    }

    /// The most prompts the control may grow to now: `control_max`, never more than the scope.
    pub fn control_cap(&self) -> usize {
        self.control_max
            .unwrap_or(self.control)
            .min(self.scope.len())
    }

    /// The prompts to send now, in order, shareable between the jobs that send them.
    pub fn prompts_to_send(&self) -> Vec<Arc<Prompt>> {
        self.send
            .iter()
            .filter_map(|id| self.catalogue.get(id))
            .map(|p| Arc::new(p.clone()))
            .collect()
    }
}
