//! What `bench`, `soak` and `smoke` are asked to do: validated plans, built from the flags by
//! the command layer (`commands::bench_plan`). Nothing here reads a flag.

#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::baseline::Baseline;
use super::traffic::Kind;
use crate::endpoint::ClientOptions;
use crate::run::PlannedEndpoint;

/// Benches of one or more endpoints, run one after the other (never at once, so they do not
/// share the machine's network or the client's CPU). With more than one, each endpoint's run
/// folder is `dir/<name>/` and `dir/bench.md` sets them side by side.
#[derive(Debug)]
pub struct BenchSet {
    pub plans: Vec<BenchPlan>,
    /// The top run folder: the only one with a single endpoint.
    pub dir: PathBuf,
}

/// A bench of one endpoint.
#[derive(Debug)]
pub struct BenchPlan {
    pub endpoint: PlannedEndpoint,
    pub client: ClientOptions,
    /// What to measure; recorded as is in `bench.json`.
    pub settings: BenchSettings,
    pub metrics_url: Option<String>,
    pub baseline: Option<Baseline>,
    pub dir: PathBuf,
    pub json: bool,
    pub quiet: bool,
}

/// The phases of a bench and their sizes: the part of a [`BenchPlan`] the report records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchSettings {
    pub warmup: u32,
    pub runs: u32,
    pub max_tokens: u32,
    pub concurrency: Vec<usize>,
    pub rounds: u32,
    pub prefill: Vec<u64>,
    pub prefill_runs: u32,
    /// Always false: rates come from `usage` over wall time (see the module doc of `bench`).
    pub stream: bool,
    /// Extra request fields from `--param`.
    pub params: Map<String, Value>,
}

/// A soak of one endpoint.
#[derive(Debug)]
pub struct SoakPlan {
    pub endpoint: PlannedEndpoint,
    pub client: ClientOptions,
    /// How long each step of the load runs.
    pub duration: Duration,
    pub load: Load,
    /// Latency objectives for goodput; none asked for, no goodput section.
    pub slo: Slo,
    /// `--graded`: catalogue prompts mixed into the traffic and scored.
    pub graded: Option<Graded>,
    /// `--sanity`: the closed-loop levels are an agent-sanity sweep; any bad output fails it.
    pub sanity: bool,
    pub kinds: Vec<Kind>,
    pub long_context: u64,
    pub params: Map<String, Value>,
    pub dir: PathBuf,
    pub json: bool,
    pub quiet: bool,
}

/// How a soak loads the endpoint: one step, or a sweep of steps run one after the other, each
/// for the plan's duration.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// Closed loop: `workers` send one request at a time each, the next as soon as one answers.
    /// More than one level (the agent-sanity sweep) runs each in turn.
    Closed { levels: Vec<usize> },
    /// Open loop: requests arrive at `rates` (req/s, one step per rate, stopping at saturation)
    /// on their own schedule, whether or not earlier ones have been answered. At most
    /// `max_in_flight` are outstanding; an arrival beyond that waits for a slot and is counted.
    Open {
        rates: Vec<f64>,
        burstiness: f64,
        max_in_flight: usize,
    },
}

impl Load {
    /// Steps of the soak: one per concurrency level or per rate.
    pub fn steps(&self) -> usize {
        match self {
            Load::Closed { levels } => levels.len(),
            Load::Open { rates, .. } => rates.len(),
        }
    }

    /// The concurrency of a closed-loop step.
    pub fn concurrency(&self, step: usize) -> Option<usize> {
        match self {
            Load::Closed { levels } => levels.get(step).copied(),
            Load::Open { .. } => None,
        }
    }

    /// The rate of an open-loop step.
    pub fn rate(&self, step: usize) -> Option<f64> {
        match self {
            Load::Open { rates, .. } => rates.get(step).copied(),
            Load::Closed { .. } => None,
        }
    }

    /// The load in words, for the soak's opening line.
    pub fn describe(&self) -> String {
        let list = |items: Vec<String>| items.join(", ");
        match self {
            Load::Closed { levels } if levels.len() == 1 => format!("{} workers", levels[0]),
            Load::Closed { levels } => format!(
                "closed loop at concurrency {}, each level in turn",
                list(levels.iter().map(|n| n.to_string()).collect())
            ),
            Load::Open {
                rates, burstiness, ..
            } => format!(
                "open loop at {} req/s (burstiness {burstiness}){}",
                list(rates.iter().map(|r| r.to_string()).collect()),
                if rates.len() > 1 {
                    ", each rate in turn until saturation"
                } else {
                    ""
                }
            ),
        }
    }
}

/// Graded catalogue prompts mixed into a soak: request `seq` is graded when
/// ⌊(seq+1)·share⌋ > ⌊seq·share⌋ (evenly spread), the g-th graded request sends prompt g mod n,
/// at temperature 0 with the prompt's own budget.
#[derive(Debug, Clone)]
pub struct Graded {
    /// Chat prompts with ground truth whose scorer runs no code (no JS sandbox under load).
    pub prompts: Vec<crate::catalogue::Prompt>,
    pub share: f64,
    pub context: crate::score::ScoreContext,
    /// The catalogue's hash, recorded with the settings.
    pub catalogue_hash: String,
}

impl Graded {
    /// The prompt request `seq` sends, when it is a graded one.
    pub fn pick(&self, seq: u64) -> Option<&crate::catalogue::Prompt> {
        if self.prompts.is_empty() {
            return None;
        }
        let at = |n: u64| (n as f64 * self.share).floor() as u64;
        (at(seq + 1) > at(seq))
            .then(|| &self.prompts[(at(seq) % self.prompts.len() as u64) as usize])
    }

    /// The place of an ungraded request `seq` in the regular traffic rotation: the requests
    /// before it, less the graded ones, so the rotation still covers every kind evenly.
    pub fn regular_index(&self, seq: u64) -> u64 {
        seq - (seq as f64 * self.share).floor() as u64
    }
}

/// Service-level objectives that need no streaming: end-to-end latency, and latency per output
/// token as fitted from end-to-end latencies and token counts (see `soak_report::fit`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
}

impl Slo {
    pub fn any(&self) -> bool {
        self.e2e_ms.is_some() || self.tpot_ms.is_some()
    }
}

/// Room left in the context for the reply of a `long` request (its largest budget is 800).
const LONG_REPLY_ROOM: u64 = 1024;

impl SoakPlan {
    /// The prompt size of the `long` kind on an endpoint with `max_model_len`: `long_context`
    /// when it fits with room for the reply, else as much as fits (at least 256), with a note.
    pub fn long_context_for(&self, max_model_len: Option<u64>) -> (u64, Option<String>) {
        match max_model_len {
            Some(limit) if self.long_context + LONG_REPLY_ROOM > limit => {
                let fitted = limit.saturating_sub(LONG_REPLY_ROOM).max(256);
                let note = format!(
                    "--long-context {} does not fit max_model_len {limit} with an 800-token budget; using {fitted}",
                    self.long_context
                );
                (fitted, Some(note))
            }
            _ => (self.long_context, None),
        }
    }
}

/// A smoke test of every endpoint given.
#[derive(Debug)]
pub struct SmokePlan {
    pub endpoints: Vec<PlannedEndpoint>,
    pub client: ClientOptions,
    pub max_tokens: u32,
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graded_requests_are_spread_evenly_and_rotate_through_the_prompts() {
        let catalogue = crate::catalogue::load_catalogue(Path::new("prompts")).unwrap();
        let prompts: Vec<_> = catalogue.prompts.into_iter().take(3).collect();
        let g = Graded {
            prompts,
            share: 0.25,
            context: crate::score::ScoreContext::for_catalogue(Path::new("prompts")),
            catalogue_hash: String::new(),
        };
        let picked: Vec<Option<&str>> = (0..12).map(|s| g.pick(s).map(|p| p.id.as_str())).collect();
        assert_eq!(picked.iter().filter(|p| p.is_some()).count(), 3);
        let ids: Vec<&str> = picked.into_iter().flatten().collect();
        let want: Vec<&str> = g.prompts.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, want, "one of every four requests, each prompt in turn");
        let regular: Vec<u64> = (0..12)
            .filter(|s| g.pick(*s).is_none())
            .map(|s| g.regular_index(s))
            .collect();
        assert_eq!(regular, (0..9).collect::<Vec<u64>>());
    }
}
