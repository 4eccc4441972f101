//! A round: several requests sent at the same moment and awaited together. Decode runs are
//! rounds of one; a concurrency level is rounds of N. `bench::session` sends them on the engine.

use serde::{Deserialize, Serialize};

use super::sample::Sample;
use super::stats::{mean, round2};

#[derive(Debug, Clone)]
pub struct Round {
    pub samples: Vec<Sample>,
}

/// What a round measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundSummary {
    /// Completion tokens of every stream over the round's wall time (first start to last end).
    pub aggregate_tps: Option<f64>,
    /// The mean of each stream's own tok/s.
    pub per_stream_tps: Option<f64>,
    pub completion_tokens: u64,
    pub wall_s: f64,
    pub errors: usize,
}

impl Round {
    pub fn wall_s(&self) -> f64 {
        let start = self.samples.iter().map(|s| s.start_s).reduce(f64::min);
        let end = self.samples.iter().map(|s| s.end_s).reduce(f64::max);
        match (start, end) {
            (Some(s), Some(e)) => e - s,
            _ => 0.0,
        }
    }

    fn counted(&self) -> impl Iterator<Item = &Sample> {
        self.samples
            .iter()
            .filter(|s| s.has_completion() && s.completion_tokens.is_some())
    }

    pub fn summary(&self) -> RoundSummary {
        let tokens: u64 = self.counted().filter_map(|s| s.completion_tokens).sum();
        let wall = self.wall_s();
        let any = self.counted().next().is_some();
        let rates: Vec<f64> = self.counted().filter_map(Sample::tps).collect();
        RoundSummary {
            aggregate_tps: (any && wall > 0.0).then(|| round2(tokens as f64 / wall)),
            per_stream_tps: mean(&rates).map(round2),
            completion_tokens: tokens,
            wall_s: round2(wall),
            errors: self.samples.len() - self.counted().count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sample::SampleOutcome;

    fn s(start: f64, end: f64, tokens: u64) -> Sample {
        Sample {
            start_s: start,
            end_s: end,
            latency_ms: (end - start) * 1000.0,
            attempts: 1,
            status: Some(200),
            prompt_tokens: Some(10),
            completion_tokens: Some(tokens),
            finish_reason: Some("length".into()),
            outcome: SampleOutcome::Ok,
            problem: None,
            answer: None,
        }
    }

    #[test]
    fn aggregate_is_all_tokens_over_the_round_wall_time() {
        let r = Round {
            samples: vec![s(0.0, 2.0, 200), s(0.0, 1.0, 100)],
        };
        let sum = r.summary();
        assert_eq!(sum.aggregate_tps, Some(150.0));
        assert_eq!(sum.per_stream_tps, Some(100.0));
        assert_eq!(sum.errors, 0);
    }
}
