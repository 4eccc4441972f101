//! The per-token figures (KL divergence over the top-k with the tail as one bucket, same top
//! token, Δp of the text's token) and their summary (mean and p99 KL, shares, mean and RMS Δp).
//!
//! ## KL over the top-k
//! A server lists only the top-k of each distribution, so the full-vocabulary KL that
//! `llama-perplexity --kl-divergence` computes is out of reach. Here, with P the reference's
//! listed distribution and Q the other's, at one position:
//! - the buckets are the tokens P lists (its top-k, plus the text's token when the server adds
//!   it), and one tail bucket for the rest of the vocabulary;
//! - `p_i = exp(logprob)`, `p_tail = 1 − Σ p_i` (clamped at 0);
//! - `q_i` is Q's value when Q lists token i. A token P lists and Q does not gets an equal share
//!   of the mass Q left unlisted, `U / (m + 1)` for m such tokens (the extra share is the rest of
//!   the vocabulary), capped at Q's smallest listed probability, since it ranked below all of them;
//! - `q_tail = 1 − Σ q_i` over P's tokens; probabilities are floored at 1e−10;
//! - `KL = Σ p_i ln(p_i / q_i) + p_tail ln(p_tail / q_tail)`, in nats, clamped at 0.
//!
//! Identical lists give exactly 0. When every token is listed by both sides this is the KL of the
//! two distributions coarsened to P's top-k plus a tail, which is never more than the full KL
//! (data-processing inequality): small top-k values under-read the divergence. When the top-k
//! sets do not overlap, the unlisted shares are small and the KL reads large, as it should.

use serde::{Deserialize, Serialize};

use super::align::{lookup, Predicted};

const FLOOR: f64 = 1e-10;

/// KL(P ‖ Q) over P's listed tokens plus a tail bucket (see the module documentation).
pub fn kl_top_k(p: &[(String, f64)], q: &[(String, f64)]) -> f64 {
    let mut seen: Vec<&str> = Vec::with_capacity(p.len());
    let tokens: Vec<(&str, f64)> = p
        .iter()
        .filter(|(t, _)| {
            let new = !seen.contains(&t.as_str());
            seen.push(t);
            new
        })
        .map(|(t, lp)| (t.as_str(), lp.exp()))
        .collect();
    let q_listed: f64 = q.iter().map(|(_, lp)| lp.exp()).sum();
    let q_unlisted = (1.0 - q_listed).max(0.0);
    let q_min = q.iter().map(|(_, lp)| lp.exp()).fold(1.0, f64::min);
    let missing = tokens
        .iter()
        .filter(|(t, _)| lookup(q, t).is_none())
        .count();
    let share = (q_unlisted / (missing as f64 + 1.0)).min(q_min);
    let mut kl = 0.0;
    let (mut p_sum, mut q_sum) = (0.0, 0.0);
    for (t, p_i) in &tokens {
        let q_i = lookup(q, t).map_or(share, f64::exp);
        p_sum += p_i;
        q_sum += q_i;
        if *p_i > 0.0 {
            kl += p_i * (p_i / q_i.max(FLOOR)).ln();
        }
    }
    let p_tail = (1.0 - p_sum).max(0.0);
    let q_tail = (1.0 - q_sum).max(0.0);
    if p_tail > 0.0 {
        kl += p_tail * (p_tail / q_tail.max(FLOOR)).ln();
    }
    kl.max(0.0)
}

/// The best listed token (the first of equals, as listed best first).
pub fn top1(top: &[(String, f64)]) -> Option<&str> {
    top.iter()
        .fold(None, |best: Option<&(String, f64)>, x| match best {
            Some(b) if b.1 >= x.1 => Some(b),
            _ => Some(x),
        })
        .map(|(t, _)| t.as_str())
}

/// The figures of one token scored under the reference and under another endpoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenFigures {
    pub kld: f64,
    pub same_top: bool,
    /// `p_other(token) − p_reference(token)` for the text's token, when both sides know it.
    pub delta_p: Option<f64>,
}

/// Compare one token's two predictions; `None` when either side listed no distribution for it.
pub fn compare_token(reference: &Predicted, other: &Predicted) -> Option<TokenFigures> {
    if reference.top.is_empty() || other.top.is_empty() {
        return None;
    }
    Some(TokenFigures {
        kld: kl_top_k(&reference.top, &other.top),
        same_top: top1(&reference.top) == top1(&other.top),
        delta_p: match (reference.logprob, other.logprob) {
            (Some(a), Some(b)) => Some(b.exp() - a.exp()),
            _ => None,
        },
    })
}

/// Token by token in text order, the figures of a text scored by another endpoint against the
/// reference's scoring of it (`None` where either side listed no distribution), or, when the two
/// endpoints split the text into different tokens, where they first differ.
pub fn compare_texts(
    reference: &[Predicted],
    other: &[Predicted],
) -> Result<Vec<Option<TokenFigures>>, String> {
    let rt: Vec<&str> = reference.iter().map(|x| x.token.as_str()).collect();
    let ot: Vec<&str> = other.iter().map(|x| x.token.as_str()).collect();
    if rt != ot {
        let at = rt
            .iter()
            .zip(&ot)
            .position(|(a, b)| a != b)
            .unwrap_or(rt.len().min(ot.len()));
        return Err(format!(
            "at token {at} ({:?} vs {:?})",
            rt.get(at),
            ot.get(at)
        ));
    }
    Ok(reference
        .iter()
        .zip(other)
        .map(|(a, b)| compare_token(a, b))
        .collect())
}

/// Summary of many tokens' figures. Figures are `None` when no token was compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Tokens compared.
    pub tokens: usize,
    pub mean_kld: Option<f64>,
    /// 99th percentile, linear interpolation between closest ranks.
    pub p99_kld: Option<f64>,
    pub max_kld: Option<f64>,
    /// Share of tokens whose top-1 is the same on both sides, 0 to 1.
    pub top1_agreement: Option<f64>,
    pub mean_delta_p: Option<f64>,
    pub rms_delta_p: Option<f64>,
    /// Tokens whose Δp is known (the text's token scored on both sides).
    pub delta_p_tokens: usize,
}

/// The q-quantile of sorted values, interpolating linearly between closest ranks.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let rank = q.clamp(0.0, 1.0) * last as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64))
}

pub fn summary_of<'a>(figures: impl IntoIterator<Item = &'a TokenFigures>) -> Summary {
    let figures: Vec<&TokenFigures> = figures.into_iter().collect();
    let n = figures.len();
    if n == 0 {
        return Summary::default();
    }
    let mut kld: Vec<f64> = figures.iter().map(|f| f.kld).collect();
    kld.sort_by(f64::total_cmp);
    let dp: Vec<f64> = figures.iter().filter_map(|f| f.delta_p).collect();
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    Summary {
        tokens: n,
        mean_kld: mean(&kld),
        p99_kld: percentile(&kld, 0.99),
        max_kld: kld.last().copied(),
        top1_agreement: Some(figures.iter().filter(|f| f.same_top).count() as f64 / n as f64),
        mean_delta_p: mean(&dp),
        rms_delta_p: mean(&dp.iter().map(|x| x * x).collect::<Vec<_>>()).map(f64::sqrt),
        delta_p_tokens: dp.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|(t, p)| (t.to_string(), p.ln())).collect()
    }

    #[test]
    fn identical_distributions_have_zero_kl() {
        let p = list(&[("a", 0.6), ("b", 0.3)]);
        assert_eq!(kl_top_k(&p, &p), 0.0);
    }

    #[test]
    fn kl_matches_a_hand_computation() {
        // P: a 0.6, b 0.3, tail 0.1. Q: a 0.5, b 0.4, tail 0.1.
        let p = list(&[("a", 0.6), ("b", 0.3)]);
        let q = list(&[("b", 0.4), ("a", 0.5)]);
        let expected = 0.6 * (0.6f64 / 0.5).ln() + 0.3 * (0.3f64 / 0.4).ln();
        assert!((kl_top_k(&p, &q) - expected).abs() < 1e-12);
        // The tail bucket counts: P a 0.5 tail 0.5; Q a 0.9 tail 0.1.
        let expected = 0.5 * (0.5f64 / 0.9).ln() + 0.5 * (0.5f64 / 0.1).ln();
        let got = kl_top_k(&list(&[("a", 0.5)]), &list(&[("a", 0.9)]));
        assert!((got - expected).abs() < 1e-12);
    }

    #[test]
    fn a_token_the_other_side_does_not_list_gets_a_capped_share() {
        // P: a 0.6, b 0.3. Q lists a 0.9 and c 0.08: unlisted mass 0.02, one missing token
        // gets 0.02 / 2 = 0.01 (below Q's smallest listed 0.08); q_tail = 1 − 0.9 − 0.01.
        let p = list(&[("a", 0.6), ("b", 0.3)]);
        let q = list(&[("a", 0.9), ("c", 0.08)]);
        let expected = 0.6 * (0.6f64 / 0.9).ln()
            + 0.3 * (0.3f64 / 0.01).ln()
            + 0.1 * (0.1f64 / (1.0 - 0.9 - 0.01)).ln();
        assert!((kl_top_k(&p, &q) - expected).abs() < 1e-9);
    }

    #[test]
    fn disjoint_top_k_sets_read_as_a_large_divergence() {
        let p = list(&[("a", 0.7), ("b", 0.25)]);
        let q = list(&[("x", 0.7), ("y", 0.25)]);
        let kl = kl_top_k(&p, &q);
        assert!(kl > 2.0, "{kl}");
        assert!(kl.is_finite());
    }

    #[test]
    fn summary_figures_by_hand() {
        let f = |kld, same_top, delta_p| TokenFigures {
            kld,
            same_top,
            delta_p,
        };
        let figs = [
            f(0.0, true, Some(0.1)),
            f(0.2, true, Some(-0.3)),
            f(0.4, false, None),
            f(1.0, true, Some(0.0)),
        ];
        let s = summary_of(&figs);
        assert_eq!(s.tokens, 4);
        assert!((s.mean_kld.unwrap() - 0.4).abs() < 1e-12);
        // rank 0.99 * 3 = 2.97: 0.4 + 0.97 * 0.6.
        assert!((s.p99_kld.unwrap() - (0.4 + 0.97 * 0.6)).abs() < 1e-12);
        assert_eq!(s.top1_agreement, Some(0.75));
        assert!((s.mean_delta_p.unwrap() - (-0.2 / 3.0)).abs() < 1e-12);
        assert!((s.rms_delta_p.unwrap() - (0.1f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(s.delta_p_tokens, 3);
        assert_eq!(summary_of(&[]), Summary::default());
    }

    #[test]
    fn top1_picks_the_best_listed() {
        assert_eq!(top1(&list(&[("a", 0.2), ("b", 0.7)])), Some("b"));
        assert_eq!(top1(&[]), None);
    }
}
