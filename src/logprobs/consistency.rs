//! Self-consistency on one endpoint: the logprobs a server reported while decoding a completion
//! against the same tokens re-scored by prefill. Finds the position offset that lines them up
//! (llama-cpp-python's echo is one position off) and the largest difference left after it.

use serde::{Deserialize, Serialize};

use super::align::{lookup, suffix_span};
use crate::endpoint::LogprobToken;

/// A re-scored logprob within this of the decode logprob counts as the same value when choosing
/// the offset.
pub const MATCH_TOLERANCE: f64 = 0.1;

/// What the check concluded about an endpoint's prompt logprobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Alignment {
    /// Prefill position i scores token i, as decode does.
    Aligned,
    /// Prefill position i carries token i + 1's distribution; figures are compensated.
    Offset,
    /// Neither offset explains most tokens: no figures are computed from this endpoint's
    /// prompt logprobs.
    Undetermined,
}

/// One decode-versus-prefill comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Generated tokens compared (those with a re-scored value under the chosen offset).
    pub tokens: usize,
    pub offset: Option<usize>,
    pub alignment: Alignment,
    /// Largest |decode − prefill| logprob difference after alignment, in nats.
    pub max_abs_diff: Option<f64>,
    pub mean_abs_diff: Option<f64>,
    /// Tokens matched within the tolerance under offset 0 and under offset 1.
    pub matches: [usize; 2],
}

/// Compare `decoded` (the completion's tokens with their decode logprobs) with `rescored` (the
/// positions of an echo or prompt-logprobs request for the prompt followed by the completion text).
/// An error means the re-scored tokens are not the decoded ones, so nothing can be compared.
pub fn check(decoded: &[LogprobToken], rescored: &[LogprobToken]) -> Result<Check, String> {
    let generated: String = decoded.iter().map(|p| p.token.as_str()).collect();
    let n = decoded.len();
    if n == 0 {
        return Err("the completion has no tokens".into());
    }
    if generated.is_empty() {
        return Err("the completion is empty".into());
    }
    // The prompt is not matched token by token: servers render its special tokens differently.
    let span = suffix_span(rescored, &generated).map_err(|m| m.to_string())?;
    if span.start == 0 || span.len != n {
        return Err(format!(
            "re-scoring tokenized the completion differently: {n} decoded tokens, {} re-scored after {} prompt tokens",
            span.len, span.start
        ));
    }
    let first = span.start;
    let tail: Vec<&str> = rescored[first..first + n]
        .iter()
        .map(|p| p.token.as_str())
        .collect();
    let want: Vec<&str> = decoded.iter().map(|p| p.token.as_str()).collect();
    if tail != want {
        return Err(format!(
            "re-scoring tokenized the completion differently: decode {want:?}, prefill {tail:?}"
        ));
    }
    let diffs = |offset: usize| -> Vec<f64> {
        decoded
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let idx = first + i;
                let decode = d.logprob?;
                let prefill = if offset == 0 {
                    let p = &rescored[idx];
                    p.logprob.or_else(|| lookup(&p.top, &d.token))?
                } else {
                    lookup(&rescored[idx.checked_sub(offset)?].top, &d.token)?
                };
                Some((decode - prefill).abs())
            })
            .collect()
    };
    let by_offset = [diffs(0), diffs(1)];
    let matches = [0, 1].map(|o| {
        by_offset[o]
            .iter()
            .filter(|d| **d <= MATCH_TOLERANCE)
            .count()
    });
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let best = if matches[1] > matches[0]
        || (matches[1] == matches[0]
            && mean(&by_offset[1]).unwrap_or(f64::INFINITY)
                < mean(&by_offset[0]).unwrap_or(f64::INFINITY))
    {
        1
    } else {
        0
    };
    let chosen = &by_offset[best];
    let decided = matches[best] * 2 > n;
    Ok(Check {
        tokens: chosen.len(),
        offset: decided.then_some(best),
        alignment: match (decided, best) {
            (false, _) => Alignment::Undetermined,
            (true, 0) => Alignment::Aligned,
            (true, _) => Alignment::Offset,
        },
        max_abs_diff: decided.then(|| chosen.iter().copied().fold(0.0, f64::max)),
        mean_abs_diff: if decided { mean(chosen) } else { None },
        matches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(token: &str, logprob: Option<f64>, top: &[(&str, f64)]) -> LogprobToken {
        LogprobToken {
            token: token.into(),
            logprob,
            top: top.iter().map(|(t, v)| (t.to_string(), *v)).collect(),
        }
    }

    fn decoded() -> Vec<LogprobToken> {
        vec![
            pos(" Paris", Some(-0.264), &[(" Paris", -0.264)]),
            pos(".", Some(-0.5), &[(".", -0.5)]),
        ]
    }

    #[test]
    fn an_aligned_server_reads_offset_zero() {
        let rescored = vec![
            pos("The", None, &[]),
            pos(" capital", Some(-3.0), &[(" capital", -3.0)]),
            pos(" Paris", Some(-0.27), &[(" Paris", -0.27)]),
            pos(".", Some(-0.5), &[(".", -0.5)]),
            pos("\n", Some(-1.0), &[]),
        ];
        let c = check(&decoded(), &rescored).unwrap();
        assert_eq!(c.offset, Some(0));
        assert_eq!(c.alignment, Alignment::Aligned);
        assert_eq!(c.tokens, 2);
        assert!((c.max_abs_diff.unwrap() - 0.006).abs() < 1e-9);
    }

    #[test]
    fn llama_cpp_python_echo_reads_offset_one() {
        // top[i] is the distribution of token i + 1; token_logprobs[i] scores token i under it.
        let rescored = vec![
            pos("The", Some(-9.0), &[(" capital", -3.0), ("The", -9.0)]),
            pos(
                " capital",
                Some(-8.45),
                &[(" Paris", -0.264), (" capital", -8.45)],
            ),
            pos(" Paris", Some(-6.0), &[(".", -0.5), (" Paris", -6.0)]),
            pos(".", Some(-4.0), &[("\n", -0.1)]),
        ];
        let c = check(&decoded(), &rescored).unwrap();
        assert_eq!(c.offset, Some(1));
        assert_eq!(c.alignment, Alignment::Offset);
        assert_eq!(c.max_abs_diff, Some(0.0));
        assert_eq!(c.matches, [0, 2]);
    }

    #[test]
    fn unexplained_differences_refuse_an_offset() {
        let rescored = vec![
            pos("The", None, &[]),
            pos(" capital", Some(-3.0), &[]),
            pos(" Paris", Some(-2.0), &[]),
            pos(".", Some(-3.0), &[]),
        ];
        let c = check(&decoded(), &rescored).unwrap();
        assert_eq!(c.offset, None);
        assert_eq!(c.alignment, Alignment::Undetermined);
        assert_eq!(c.max_abs_diff, None);
    }

    #[test]
    fn different_tokens_are_an_error() {
        let rescored = vec![
            pos("The capital", None, &[]),
            pos(" Par", Some(-3.0), &[]),
            pos("is.", Some(-2.0), &[]),
        ];
        let e = check(&decoded(), &rescored).unwrap_err();
        assert!(e.contains("differently"), "{e}");
        assert!(check(&[], &rescored).is_err());
    }
}
