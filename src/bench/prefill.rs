//! Prefill: time to first token for prompts of about N tokens, sent with `max_tokens: 1` and
//! `stream: false`, so the request's wall time is the prefill plus one token. The rate uses the
//! server's `usage.prompt_tokens`. Every prompt is unique, so a prefix cache cannot answer it.
//! Sizes that do not fit the endpoint's `max_model_len` are skipped with a note.

use serde::{Deserialize, Serialize};

use super::sample::Sample;
use super::session::Session;
use super::stats::{mean, round2};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prefill {
    /// The requested size.
    pub tokens: u64,
    /// What the server counted (mean over the steady runs).
    pub prompt_tokens: Option<u64>,
    /// Steady state: the mean over the runs after the first (the only run when there is one).
    pub ttft_ms: Option<f64>,
    pub prompt_tps: Option<f64>,
    /// The first run at this size, reported apart.
    pub first_ttft_ms: Option<f64>,
    pub first_prompt_tps: Option<f64>,
    pub runs: Vec<PrefillRun>,
    pub errors: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefillRun {
    pub prompt_tokens: Option<u64>,
    pub ttft_ms: Option<f64>,
    pub prompt_tps: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub tokens: u64,
    pub reason: String,
}

/// The sizes that fit (prompt plus one output token within `max_model_len`) and those that do not.
pub fn fit(sizes: &[u64], max_model_len: Option<u64>) -> (Vec<u64>, Vec<Skipped>) {
    let mut keep = Vec::new();
    let mut skipped = Vec::new();
    for &tokens in sizes {
        match max_model_len {
            Some(limit) if tokens + 1 > limit => skipped.push(Skipped {
                tokens,
                reason: format!("exceeds max_model_len {limit} reported by GET /models"),
            }),
            _ => keep.push(tokens),
        }
    }
    (keep, skipped)
}

/// Measure `runs` prompts of about `tokens` tokens. Stops at the first rejection (see
/// [`Sample::rejection`]): sending the same size again would only be refused again.
pub async fn run(session: &mut Session<'_>, tokens: u64, runs: u32) -> Vec<Sample> {
    let mut out = Vec::new();
    for i in 0..runs {
        let body = session.prefill_body(tokens);
        let Some(r) = session.round("prefill", i, vec![body]).await else {
            break;
        };
        let s = r.samples.into_iter().next().expect("one sample");
        let line = match (s.has_completion(), s.prompt_tokens, s.prompt_tps()) {
            (true, Some(p), Some(rate)) => format!(
                "{p} prompt tokens, TTFT {:.0} ms = {rate:.0} tok/s",
                s.latency_ms
            ),
            _ => s
                .problem_line()
                .unwrap_or_else(|| "the server reported no usage.prompt_tokens".into()),
        };
        session.note(&format!("prefill {tokens} run {}/{runs}: {line}", i + 1));
        let rejected = s.rejection().is_some();
        out.push(s);
        if rejected {
            break;
        }
    }
    out
}

pub fn prefill_of(tokens: u64, samples: &[Sample]) -> Prefill {
    let runs: Vec<PrefillRun> = samples
        .iter()
        .map(|s| {
            let ok = s.has_completion() && s.prompt_tokens.is_some();
            PrefillRun {
                prompt_tokens: s.prompt_tokens,
                ttft_ms: ok.then(|| round2(s.latency_ms)),
                prompt_tps: s.prompt_tps().filter(|_| ok).map(round2),
            }
        })
        .collect();
    let steady = if runs.len() > 1 {
        &runs[1..]
    } else {
        &runs[..]
    };
    let pick =
        |f: fn(&PrefillRun) -> Option<f64>| -> Vec<f64> { steady.iter().filter_map(f).collect() };
    let first = runs.first();
    Prefill {
        tokens,
        prompt_tokens: mean(&pick(|r| r.prompt_tokens.map(|t| t as f64))).map(|t| t.round() as u64),
        ttft_ms: mean(&pick(|r| r.ttft_ms)).map(round2),
        prompt_tps: mean(&pick(|r| r.prompt_tps)).map(round2),
        first_ttft_ms: first.and_then(|r| r.ttft_ms),
        first_prompt_tps: first.and_then(|r| r.prompt_tps),
        errors: runs.iter().filter(|r| r.ttft_ms.is_none()).count(),
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_the_context_are_skipped() {
        let (keep, skipped) = fit(&[1024, 4095, 4096, 8192], Some(4096));
        assert_eq!(keep, vec![1024, 4095]);
        assert_eq!(skipped.len(), 2);
        assert!(skipped[0].reason.contains("4096"));
        assert_eq!(fit(&[8192], None).0, vec![8192]);
    }
}
