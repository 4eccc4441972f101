//! Where two greedy completions first part, token by token, and whether that first divergence is
//! a near-tie: each side's token in the other's top-k with a logprob gap under
//! [`NEAR_TIE_GAP`] nats on both sides (the rule of `logprobs::near_tie`, after vLLM's
//! `check_logprobs_close`), or substantive. Needs `compare --logprobs`.

use std::collections::BTreeMap;

use super::figures::{NearTieCounts, PromptResult, TokenDivergence, TokenDivergenceCounts};
use crate::endpoint::LogprobToken;
use crate::logprobs::near_tie::{classify, DivergenceClass, Side, NEAR_TIE_GAP};

/// The first index where the two token sequences differ, classified (None when they agree over
/// their common length, or a side listed no alternatives there: then there is no evidence
/// either way).
pub fn first_token_divergence(a: &[LogprobToken], b: &[LogprobToken]) -> Option<TokenDivergence> {
    let index = a.iter().zip(b).position(|(x, y)| x.token != y.token)?;
    let (x, y) = (&a[index], &b[index]);
    if x.top.is_empty() || y.top.is_empty() {
        return None;
    }
    let c = classify(
        Side {
            token: &x.token,
            top: &x.top,
        },
        Side {
            token: &y.token,
            top: &y.top,
        },
        NEAR_TIE_GAP,
    );
    Some(TokenDivergence {
        index,
        reference_token: x.token.clone(),
        other_token: y.token.clone(),
        near_tie: c.class == DivergenceClass::NearTie,
        gap_reference: c.gap_a,
        gap_other: c.gap_b,
    })
}

/// Near-tie and substantive first divergences of one pair, overall and per category.
pub fn counts(prompts: &[PromptResult], reference: &str, other: &str) -> TokenDivergenceCounts {
    let mut overall = NearTieCounts::default();
    let mut by_category: BTreeMap<String, NearTieCounts> = BTreeMap::new();
    for p in prompts {
        let Some(d) = p
            .pairs
            .iter()
            .find(|x| x.other == other)
            .and_then(|x| x.token_divergence.as_ref())
        else {
            continue;
        };
        for c in [
            &mut overall,
            by_category.entry(p.category.clone()).or_default(),
        ] {
            if d.near_tie {
                c.near_tie += 1;
            } else {
                c.substantive += 1;
            }
        }
    }
    TokenDivergenceCounts {
        reference: reference.to_string(),
        other: other.to_string(),
        gap_threshold: NEAR_TIE_GAP,
        overall,
        by_category,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(token: &str, top: &[(&str, f64)]) -> LogprobToken {
        LogprobToken {
            token: token.into(),
            logprob: top.first().map(|t| t.1),
            top: top.iter().map(|(t, l)| (t.to_string(), *l)).collect(),
        }
    }

    #[test]
    fn a_close_flip_is_a_near_tie_and_a_far_one_is_substantive() {
        let shared = tok("There", &[("There", -0.01)]);
        let a = [shared.clone(), tok(" 3", &[(" 3", -0.60), (" 4", -0.80)])];
        let b = [shared.clone(), tok(" 4", &[(" 4", -0.65), (" 3", -0.75)])];
        let d = first_token_divergence(&a, &b).unwrap();
        assert_eq!(d.index, 1);
        assert!(d.near_tie, "{d:?}");
        let far = [shared, tok(" 9", &[(" 9", -0.01), (" 3", -5.0)])];
        let d = first_token_divergence(&a, &far).unwrap();
        assert!(!d.near_tie, "{d:?}");
        assert_eq!(first_token_divergence(&a, &a), None);
        let bare = [tok("There", &[]), tok(" 5", &[])];
        assert_eq!(
            first_token_divergence(&a, &bare),
            None,
            "no top-k, no claim"
        );
    }
}
