//! How far apart two answers to one prompt are, as the identity axis orders them: where they
//! first part is the primary distance (the token index with decode logprobs, the character
//! offset with text alone), earlier being further, an empty shared prefix (parting at the first
//! token) the furthest there is and answers that never part the closest; at the same parting
//! point (or none), the mean |Δ logprob| of the chosen tokens over the shared prefix refines it.
//! The distance is symmetric in its two answers, as the exchangeability the test rests on needs.

use std::cmp::Ordering;

use crate::endpoint::{Completion, LogprobToken};

/// The evidence one prompt is compared by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Evidence {
    /// All three answers carried decode logprobs: tokens, with the gap refining.
    Logprobs,
    /// Texts alone: characters.
    Text,
}

/// One answer's distance from another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Distance {
    /// Tokens (characters at the text level) the two share before they part; None when they
    /// never do.
    pub parted_at: Option<usize>,
    /// Mean |Δ logprob| over the shared prefix (0 at the text level).
    pub mean_abs: f64,
    pub max_abs: f64,
    /// The two texts are the same.
    pub exact: bool,
    /// Shared-prefix tokens with a logprob on both sides, and how many of them are equal.
    pub tokens: usize,
    pub equal_tokens: usize,
}

impl Distance {
    /// How far `y` is from `x` (the same as `x` from `y`) by `evidence`.
    pub fn between(x: &Completion, y: &Completion, evidence: Evidence) -> Distance {
        let (tx, ty) = (
            x.answer.as_deref().unwrap_or_default(),
            y.answer.as_deref().unwrap_or_default(),
        );
        let exact = tx == ty;
        match evidence {
            Evidence::Logprobs => {
                let none: Vec<LogprobToken> = Vec::new();
                let a = x.logprobs.as_ref().unwrap_or(&none);
                let b = y.logprobs.as_ref().unwrap_or(&none);
                by_tokens(a, b, exact)
            }
            Evidence::Text => Distance {
                parted_at: (!exact).then(|| {
                    tx.chars()
                        .zip(ty.chars())
                        .take_while(|(p, q)| p == q)
                        .count()
                }),
                mean_abs: 0.0,
                max_abs: 0.0,
                exact,
                tokens: 0,
                equal_tokens: 0,
            },
        }
    }

    /// Whether `self` is further than `other` (`Greater`), closer (`Less`) or as far (`Equal`):
    /// parting earlier is further, never parting the closest; at the same parting point the
    /// larger logprob gap is further.
    pub fn further_than(&self, other: &Distance) -> Ordering {
        match (self.parted_at, other.parted_at) {
            (Some(a), Some(b)) if a != b => b.cmp(&a),
            (Some(_), None) => Ordering::Greater,
            (None, Some(_)) => Ordering::Less,
            _ => self
                .mean_abs
                .partial_cmp(&other.mean_abs)
                .unwrap_or(Ordering::Equal),
        }
    }
}

/// The distance of two token sequences: they part at the first token that differs (or where the
/// shorter ends); the logprob gap is read over the tokens before it. Texts that differ although
/// every token agrees part where the tokens end.
fn by_tokens(a: &[LogprobToken], b: &[LogprobToken], exact: bool) -> Distance {
    let shared = a
        .iter()
        .zip(b)
        .position(|(x, y)| x.token != y.token)
        .unwrap_or_else(|| a.len().min(b.len()));
    let deltas: Vec<f64> = a[..shared]
        .iter()
        .zip(&b[..shared])
        .filter_map(|(x, y)| Some((x.logprob? - y.logprob?).abs()))
        .collect();
    let parted = shared < a.len().max(b.len()) || !exact;
    Distance {
        parted_at: parted.then_some(shared),
        mean_abs: if deltas.is_empty() {
            0.0
        } else {
            deltas.iter().sum::<f64>() / deltas.len() as f64
        },
        max_abs: deltas.iter().copied().fold(0.0, f64::max),
        exact,
        tokens: deltas.len(),
        equal_tokens: deltas.iter().filter(|d| **d == 0.0).count(),
    }
}

/// One prompt's three answers compared: the reference's first (A0) and second (A1, the control)
/// and the other endpoint's (B0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Comparison {
    /// A1 from A0: the control.
    pub control: Distance,
    /// B0 from A0: the pair.
    pub pair: Distance,
    /// Is B0 further from A0 than A1 is (`Greater`), closer, or as far?
    pub against_first: Ordering,
    /// The prompt's score in [−1, 1]: the mean of +1 (B0 further), −1 (closer) or 0 over the
    /// two answers of the reference, each taken as the reference in turn (B0 against A0 beside
    /// A1's distance from A0, then B0 against A1 beside A0's distance from A1). When B serves as
    /// A does, A0, A1 and B0 are exchangeable and its mean is 0.
    pub score: f64,
}

impl Comparison {
    pub fn of(a0: &Completion, a1: &Completion, b0: &Completion, evidence: Evidence) -> Self {
        let control = Distance::between(a0, a1, evidence);
        let pair = Distance::between(a0, b0, evidence);
        let from_second = Distance::between(a1, b0, evidence);
        let against_first = pair.further_than(&control);
        let against_second = from_second.further_than(&control);
        let sign = |o: Ordering| match o {
            Ordering::Greater => 1.0,
            Ordering::Less => -1.0,
            Ordering::Equal => 0.0,
        };
        Comparison {
            control,
            pair,
            against_first,
            score: (sign(against_first) + sign(against_second)) / 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn text(t: &str) -> Completion {
        Completion {
            answer: Some(Arc::from(t)),
            ..Completion::default()
        }
    }

    fn tokens(words: &[&str], logprob: f64) -> Completion {
        Completion {
            answer: Some(Arc::from(words.concat())),
            logprobs: Some(
                words
                    .iter()
                    .map(|w| LogprobToken {
                        token: w.to_string(),
                        logprob: Some(logprob),
                        top: Vec::new(),
                    })
                    .collect(),
            ),
            ..Completion::default()
        }
    }

    #[test]
    fn parting_at_the_first_token_is_further_than_parting_late_or_never() {
        let a = tokens(&["The", " answer", " is", " 3"], -0.1);
        let late = tokens(&["The", " answer", " is", " 4"], -0.1);
        let first = tokens(&["Three", " apples"], -0.1);
        let jittered = tokens(&["The", " answer", " is", " 3"], -0.3);
        let (d_late, d_first, d_jitter) = (
            Distance::between(&a, &late, Evidence::Logprobs),
            Distance::between(&a, &first, Evidence::Logprobs),
            Distance::between(&a, &jittered, Evidence::Logprobs),
        );
        assert_eq!(d_first.parted_at, Some(0));
        assert_eq!(d_late.parted_at, Some(3));
        assert_eq!(d_jitter.parted_at, None);
        assert_eq!(d_first.further_than(&d_late), Ordering::Greater);
        assert_eq!(d_late.further_than(&d_jitter), Ordering::Greater);
        // The logprob gap refines at the same parting point (here: none).
        let same = Distance::between(&a, &a, Evidence::Logprobs);
        assert_eq!(d_jitter.further_than(&same), Ordering::Greater);
        assert_eq!(same.further_than(&same), Ordering::Equal);
        // An empty shared prefix has no gap to weigh: two first-token partings tie.
        assert_eq!(d_first.further_than(&d_first), Ordering::Equal);
    }

    #[test]
    fn the_text_level_parts_at_the_first_differing_character() {
        let d = Distance::between(
            &text("The answer is 3"),
            &text("The answer is 5"),
            Evidence::Text,
        );
        assert_eq!(d.parted_at, Some(14));
        assert!(!d.exact);
        let prefix = Distance::between(&text("abc"), &text("abcdef"), Evidence::Text);
        assert_eq!(prefix.parted_at, Some(3));
        assert_eq!(
            Distance::between(&text("x"), &text("x"), Evidence::Text).parted_at,
            None
        );
    }

    #[test]
    fn a_candidate_parting_from_both_reference_answers_first_scores_one() {
        let reference = text("The letter r appears three times");
        let control = text("The letter r appears three times, as counted");
        let other = text("There are 3");
        let c = Comparison::of(&reference, &control, &other, Evidence::Text);
        assert_eq!(c.against_first, Ordering::Greater);
        assert_eq!(c.score, 1.0);
        // The reference's repeat odd one out: B closer to A0, and as far from A1 as A0 is.
        let c = Comparison::of(&reference, &other, &control, Evidence::Text);
        assert_eq!(c.against_first, Ordering::Less);
        assert_eq!(c.score, -0.5);
        // Swapping A1 and B0 negates the first comparison: the score's mean is 0 when they are
        // exchangeable.
        let same = Comparison::of(&reference, &reference, &reference, Evidence::Text);
        assert_eq!((same.against_first, same.score), (Ordering::Equal, 0.0));
    }
}
