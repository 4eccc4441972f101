//! The concurrency sweep: at each level N, `--rounds` rounds of N simultaneous decode requests;
//! aggregate tok/s (all streams' tokens over the round's wall time) and per-stream tok/s.

use serde::{Deserialize, Serialize};

use super::round::{Round, RoundSummary};
use super::session::Session;
use super::stats::{max, mean, round2};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    pub n: usize,
    /// The mean over the measured rounds.
    pub aggregate_tps: Option<f64>,
    pub per_stream_tps: Option<f64>,
    /// The range over the measured rounds.
    pub min_aggregate_tps: Option<f64>,
    pub max_aggregate_tps: Option<f64>,
    /// The warm-up round at this level, when there was one.
    pub cold_aggregate_tps: Option<f64>,
    pub rounds: Vec<RoundSummary>,
    pub errors: usize,
}

/// One line for the progress output.
pub fn describe(r: &RoundSummary) -> String {
    match (r.aggregate_tps, r.per_stream_tps) {
        (Some(a), Some(p)) => format!(
            "{a:.1} tok/s aggregate, {p:.1} per stream ({} tokens in {:.2} s{})",
            r.completion_tokens,
            r.wall_s,
            if r.errors > 0 {
                format!(", {} failed", r.errors)
            } else {
                String::new()
            }
        ),
        _ => format!("no usable answer ({} failed)", r.errors),
    }
}

pub async fn run(session: &mut Session<'_>, n: usize, rounds: u32) -> Vec<Round> {
    let mut out = Vec::new();
    for i in 0..rounds {
        let bodies = (0..n).map(|_| session.decode_body()).collect();
        let Some(r) = session.round("concurrency", i, bodies).await else {
            break;
        };
        session.note(&format!(
            "concurrency c{n} round {}/{rounds}: {}",
            i + 1,
            describe(&r.summary())
        ));
        out.push(r);
    }
    out
}

pub fn level_of(n: usize, rounds: &[Round], cold: Option<&Round>) -> Level {
    let summaries: Vec<RoundSummary> = rounds.iter().map(Round::summary).collect();
    let aggregates: Vec<f64> = summaries.iter().filter_map(|r| r.aggregate_tps).collect();
    let per_stream: Vec<f64> = summaries.iter().filter_map(|r| r.per_stream_tps).collect();
    Level {
        n,
        aggregate_tps: mean(&aggregates).map(round2),
        per_stream_tps: mean(&per_stream).map(round2),
        min_aggregate_tps: aggregates.iter().copied().reduce(f64::min),
        max_aggregate_tps: max(&aggregates),
        cold_aggregate_tps: cold.and_then(|r| r.summary().aggregate_tps),
        errors: summaries.iter().map(|r| r.errors).sum(),
        rounds: summaries,
    }
}
