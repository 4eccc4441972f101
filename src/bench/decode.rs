//! Decode: `--runs` long generations one at a time; peak and mean tok/s from the server's
//! `usage.completion_tokens` over each request's wall time (`stream: false`).

use serde::{Deserialize, Serialize};

use super::sample::Sample;
use super::session::Session;
use super::stats::{max, mean, round2};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decode {
    pub max_tokens: u32,
    /// The fastest measured run.
    pub peak_tps: Option<f64>,
    /// The mean of the measured runs' tok/s.
    pub mean_tps: Option<f64>,
    /// The first request of the bench, before anything was warm.
    pub cold_tps: Option<f64>,
    /// Which request `cold_tps` comes from.
    pub cold_source: String,
    pub runs: Vec<DecodeRun>,
    pub errors: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecodeRun {
    pub completion_tokens: Option<u64>,
    pub seconds: f64,
    pub tps: Option<f64>,
}

/// One line for the progress output.
pub fn describe(s: &Sample) -> String {
    match (s.completion_tokens, s.tps()) {
        (Some(t), Some(r)) => format!("{t} tokens in {:.2} s = {r:.1} tok/s", s.latency_s()),
        _ => s.problem_line().unwrap_or_else(|| "no result".into()),
    }
}

pub async fn run(session: &mut Session<'_>, runs: u32) -> Vec<Sample> {
    let mut out = Vec::new();
    for i in 0..runs {
        let body = session.decode_body();
        let Some(r) = session.round("decode", i, vec![body]).await else {
            break;
        };
        let s = r.samples.into_iter().next().expect("one sample");
        session.note(&format!("decode {}/{runs}: {}", i + 1, describe(&s)));
        out.push(s);
    }
    out
}

pub fn decode_of(max_tokens: u32, runs: &[Sample], cold: Option<&Sample>, source: &str) -> Decode {
    let usable: Vec<&Sample> = runs.iter().filter(|s| s.has_completion()).collect();
    let rates: Vec<f64> = usable.iter().filter_map(|s| s.tps()).collect();
    Decode {
        max_tokens,
        peak_tps: max(&rates).map(round2),
        mean_tps: mean(&rates).map(round2),
        cold_tps: cold.and_then(Sample::tps).map(round2),
        cold_source: source.to_string(),
        runs: runs
            .iter()
            .map(|s| DecodeRun {
                completion_tokens: s.completion_tokens,
                seconds: round2(s.latency_s()),
                tps: s.tps().map(round2),
            })
            .collect(),
        errors: runs.len() - rates.len(),
    }
}
