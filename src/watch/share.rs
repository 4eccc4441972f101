//! Partial substitution: the share of a check's requests that do not look like the baseline, so
//! a router that sends part of the traffic elsewhere is found rather than averaged away.
//!
//! Per probe prompt the identity test reads a *win* (the watched answer B is further from the
//! baseline's first answer A0 than the baseline's own repeat A1 is), a *loss* (the reverse) or a
//! tie. Requests served as the baseline serves them make wins and losses equally likely
//! (A1 and B are exchangeable); a request served by something else is a win whenever its
//! numerics show, which at the logprob level is nearly always. So with a share `s` substituted,
//! P(win) − P(loss) = s·(P(win | substituted) − P(loss | substituted)) ≈ s: the estimate is
//! (wins − losses) / prompts, a lower bound on `s` when some substituted answers tie.
//!
//! Its 95% interval is Newcombe's hybrid score interval for a difference of paired proportions
//! (method 10, Stat. Med. 1998): Wilson intervals for the win and loss shares, combined with
//! the correlation of the two (they exclude each other), clipped to [0, 1]. When the losses
//! outnumber the wins (the baseline's own repeat strayed more than the endpoint did) the estimate
//! reads 0 and the interval is taken with the excess losses counted as ties: a share is never
//! negative, so those losses are the baseline's noise, and left in they would narrow the upper
//! end below what the wins allow (0 wins and 4 losses in 50 would read [0–0.6%]; the wins alone
//! allow up to 7%). Widening an interval keeps its coverage, which is checked by simulation below.

use serde::{Deserialize, Serialize};

use crate::analysis::answers::stats::wilson_at;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The estimated substituted share of requests with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// The share from a check's `wins`, `losses` and `ties` (None when no prompt was compared).
pub fn substituted(wins: usize, losses: usize, ties: usize) -> Option<Share> {
    let n = wins + losses + ties;
    if n == 0 {
        return None;
    }
    let (losses, ties) = match losses.checked_sub(wins) {
        Some(excess) if excess > 0 => (wins, ties + excess),
        _ => (losses, ties),
    };
    let nf = n as f64;
    let (p1, p2) = (wins as f64 / nf, losses as f64 / nf);
    let w = wilson_at(wins as u64, n as u64, Z95);
    let l = wilson_at(losses as u64, n as u64, Z95);
    // The phi coefficient of the 2×2 table (win?, loss?): no prompt is both.
    let marginals = (wins * (losses + ties)) as f64 * (losses * (wins + ties)) as f64;
    let phi = if marginals > 0.0 {
        -((wins * losses) as f64) / marginals.sqrt()
    } else {
        0.0
    };
    let (d1, d2) = (p1 - w.low, l.high - p2);
    let below = (d1 * d1 - 2.0 * phi * d1 * d2 + d2 * d2).max(0.0).sqrt();
    let (e1, e2) = (w.high - p1, p2 - l.low);
    let above = (e1 * e1 - 2.0 * phi * e1 * e2 + e2 * e2).max(0.0).sqrt();
    let theta = p1 - p2;
    Some(Share {
        estimate: theta.clamp(0.0, 1.0),
        low: (theta - below).clamp(0.0, 1.0),
        high: (theta + above).clamp(0.0, 1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One simulated check of `n` prompts: each request substituted with probability `s` (then
    /// a win); otherwise a win or a loss each with probability `q` (the baseline's own
    /// nondeterminism), else a tie.
    fn check(n: usize, s: f64, q: f64, rng: &mut fastrand::Rng) -> (usize, usize, usize) {
        let (mut w, mut l, mut t) = (0, 0, 0);
        for _ in 0..n {
            if rng.f64() < s {
                w += 1;
                continue;
            }
            let u = rng.f64();
            if u < q {
                w += 1;
            } else if u < 2.0 * q {
                l += 1;
            } else {
                t += 1;
            }
        }
        (w, l, t)
    }

    #[test]
    fn a_fifth_of_fifty_requests_reads_about_a_fifth() {
        let s = substituted(10, 0, 40).unwrap();
        assert!((s.estimate - 0.2).abs() < 1e-12);
        assert!(s.low > 0.08 && s.low < 0.13, "{s:?}");
        assert!(s.high > 0.30 && s.high < 0.36, "{s:?}");
    }

    #[test]
    fn nothing_compared_has_no_share_and_nothing_substituted_reads_zero() {
        assert_eq!(substituted(0, 0, 0), None);
        let s = substituted(0, 0, 50).unwrap();
        assert_eq!(s.estimate, 0.0);
        assert_eq!(s.low, 0.0);
        assert!(s.high < 0.08, "{s:?}");
    }

    /// More losses than wins read 0, with the upper end the wins allow, not one narrowed by the
    /// baseline's noise (the real watch demo's fourth check: 0 wins, 4 losses, 46 ties).
    #[test]
    fn losses_beyond_the_wins_do_not_narrow_the_interval() {
        let s = substituted(0, 4, 46).unwrap();
        assert_eq!((s.estimate, s.low), (0.0, 0.0));
        assert_eq!(s, substituted(0, 0, 50).unwrap());
        assert!((s.high - 0.071).abs() < 5e-4, "{s:?}");
        let s = substituted(2, 3, 45).unwrap();
        assert_eq!(s, substituted(2, 2, 46).unwrap());
        assert!((s.high - 0.100).abs() < 5e-4, "{s:?}");
    }

    /// The interval covers the true share at least about 95% of the time, over shares, check
    /// sizes and baseline nondeterminism (simulated: 2,000 checks each).
    #[test]
    fn the_interval_covers_the_true_share_by_simulation() {
        let mut rng = fastrand::Rng::with_seed(11);
        for n in [30, 50, 200] {
            for s in [0.0, 0.05, 0.2, 0.5, 0.9] {
                for q in [0.0, 0.05, 0.2] {
                    let trials = 2_000;
                    let mut covered = 0;
                    let mut sum = 0.0;
                    for _ in 0..trials {
                        let (w, l, t) = check(n, s, q, &mut rng);
                        let share = substituted(w, l, t).unwrap();
                        sum += share.estimate;
                        if share.low <= s + 1e-12 && s <= share.high + 1e-12 {
                            covered += 1;
                        }
                    }
                    let coverage = covered as f64 / trials as f64;
                    assert!(coverage >= 0.93, "n {n} s {s} q {q}: coverage {coverage}");
                    let mean = sum / trials as f64;
                    assert!(
                        (mean - s).abs() < 0.05,
                        "n {n} s {s} q {q}: mean estimate {mean}"
                    );
                }
            }
        }
    }
}
