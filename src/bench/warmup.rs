//! Warm-up: cold runs read ~30% low until the server's JIT kernels are compiled, and kernels for
//! batched decode compile only when a batch of that size first runs. So before measuring, send
//! `--warmup` decode requests one at a time, then one round at each concurrency level. Their
//! numbers are kept and reported as the cold ones.

use serde::{Deserialize, Serialize};

use super::round::Round;
use super::sample::Sample;
use super::session::Session;
use super::stats::round2;

pub struct Warmup {
    pub decode: Vec<Sample>,
    pub rounds: Vec<(usize, Round)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmupSummary {
    pub requests: u32,
    /// tok/s of each sequential warm-up request, in order (the first is the coldest).
    pub decode_tps: Vec<Option<f64>>,
    /// The aggregate tok/s of the warm-up round at each concurrency level.
    pub concurrency: Vec<WarmupLevel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmupLevel {
    pub n: usize,
    pub aggregate_tps: Option<f64>,
}

/// `requests` sequential decode requests, then one round per level (nothing when 0).
pub async fn run(session: &mut Session<'_>, requests: u32, levels: &[usize]) -> Warmup {
    let mut warm = Warmup {
        decode: Vec::new(),
        rounds: Vec::new(),
    };
    if requests == 0 {
        session
            .note("warm-up: off (--warmup 0); the first measured numbers include the cold start");
        return warm;
    }
    for i in 0..requests {
        let body = session.decode_body();
        let Some(r) = session.round("warmup", i, vec![body]).await else {
            break;
        };
        let s = r.samples.into_iter().next().expect("one sample");
        session.note(&format!(
            "warm-up {}/{requests}: {}",
            i + 1,
            super::decode::describe(&s)
        ));
        warm.decode.push(s);
    }
    for &n in levels {
        let bodies = (0..n).map(|_| session.decode_body()).collect();
        let Some(r) = session.round("warmup", 0, bodies).await else {
            break;
        };
        session.note(&format!(
            "warm-up c{n}: {}",
            super::concurrency::describe(&r.summary())
        ));
        warm.rounds.push((n, r));
    }
    warm
}

impl Warmup {
    pub fn summary(&self) -> Option<WarmupSummary> {
        (!self.decode.is_empty()).then(|| WarmupSummary {
            requests: self.decode.len() as u32,
            decode_tps: self.decode.iter().map(|s| s.tps().map(round2)).collect(),
            concurrency: self
                .rounds
                .iter()
                .map(|(n, r)| WarmupLevel {
                    n: *n,
                    aggregate_tps: r.summary().aggregate_tps,
                })
                .collect(),
        })
    }
}
