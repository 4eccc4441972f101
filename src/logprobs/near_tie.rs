//! Classifying a first divergence between two greedy completions: a near-tie flip (each side's
//! token is in the other's top-k and the two tokens were close on both sides) or a substantive
//! one. The rule follows vLLM's `check_logprobs_close` (each token in the other's top-k) and adds
//! a logprob-gap threshold.

use serde::Serialize;

use super::align::lookup;

/// Default largest gap, in nats, between the two tokens' logprobs on either side for a near-tie:
/// ln(p_a / p_b) < 0.5, i.e. the winner was less than about 1.65 times as likely as the other.
pub const NEAR_TIE_GAP: f64 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DivergenceClass {
    NearTie,
    Substantive,
}

/// One side at the divergence: the token it produced and its top-k there (logprobs).
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub token: &'a str,
    pub top: &'a [(String, f64)],
}

/// The classification with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Classified {
    pub class: DivergenceClass,
    /// On side A, `lp_A(a) − lp_A(b)`; `None` when b is not in A's top-k.
    pub gap_a: Option<f64>,
    /// On side B, `lp_B(b) − lp_B(a)`; `None` when a is not in B's top-k.
    pub gap_b: Option<f64>,
}

/// `near-tie` when each side's token is in the other's top-k and both gaps are below
/// `threshold` (nats); `substantive` otherwise (including when either top-k is missing).
/// A negative gap (the other token listed above the produced one) counts as under the threshold.
pub fn classify(a: Side<'_>, b: Side<'_>, threshold: f64) -> Classified {
    let gap = |own: Side<'_>, theirs: &str| -> Option<f64> {
        let mine = lookup(own.top, own.token)?;
        Some(mine - lookup(own.top, theirs)?)
    };
    let gap_a = gap(a, b.token);
    let gap_b = gap(b, a.token);
    let near = match (gap_a, gap_b) {
        (Some(x), Some(y)) => x.is_finite() && y.is_finite() && x < threshold && y < threshold,
        _ => false,
    };
    Classified {
        class: if near {
            DivergenceClass::NearTie
        } else {
            DivergenceClass::Substantive
        },
        gap_a,
        gap_b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|(t, x)| (t.to_string(), *x)).collect()
    }

    #[test]
    fn close_tokens_in_each_others_top_k_are_a_near_tie() {
        let ta = top(&[(" yes", -0.6), (" no", -0.8)]);
        let tb = top(&[(" no", -0.65), (" yes", -0.75)]);
        let c = classify(
            Side {
                token: " yes",
                top: &ta,
            },
            Side {
                token: " no",
                top: &tb,
            },
            NEAR_TIE_GAP,
        );
        assert_eq!(c.class, DivergenceClass::NearTie);
        assert!((c.gap_a.unwrap() - 0.2).abs() < 1e-12);
        assert!((c.gap_b.unwrap() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn a_wide_gap_or_a_token_outside_the_top_k_is_substantive() {
        let ta = top(&[(" yes", -0.1), (" no", -2.5)]);
        let tb = top(&[(" no", -0.6), (" yes", -0.8)]);
        let wide = classify(
            Side {
                token: " yes",
                top: &ta,
            },
            Side {
                token: " no",
                top: &tb,
            },
            NEAR_TIE_GAP,
        );
        assert_eq!(wide.class, DivergenceClass::Substantive);
        let tc = top(&[(" maybe", -0.1), (" no", -0.3)]);
        let outside = classify(
            Side {
                token: " yes",
                top: &ta,
            },
            Side {
                token: " maybe",
                top: &tc,
            },
            NEAR_TIE_GAP,
        );
        assert_eq!(outside.class, DivergenceClass::Substantive);
        assert_eq!(outside.gap_a, None);
        let none = classify(
            Side {
                token: " yes",
                top: &[],
            },
            Side {
                token: " no",
                top: &[],
            },
            NEAR_TIE_GAP,
        );
        assert_eq!(none.class, DivergenceClass::Substantive);
    }
}
