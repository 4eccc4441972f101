//! Noise calibrated, not assumed: whether a divergence between two endpoints' answers is within
//! the reference's own sampler noise, a deployment difference, or cannot be told.
//!
//! - `sampler_noise`: either endpoint's modal answer also occurs among the other's repeats;
//! - `deployment_difference`: the reference gave one answer on every one of at least
//!   [`MIN_REFERENCE_REPEATS`] usable repeats (interleaved with other prompts, so no repeat
//!   inherits the previous one's cache) and the other endpoint's answer never occurs among them;
//! - `inconclusive`: the other's answer is new but the reference's distribution cannot rule it
//!   out: the reference is itself unstable, or has too few repeats to know.

use serde::{Deserialize, Serialize};

/// Agreeing reference repeats needed before a new answer is called a deployment difference.
pub const MIN_REFERENCE_REPEATS: usize = 3;

/// Whether a difference between endpoints is within the reference's own sampler noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Difference {
    /// One endpoint's modal answer also occurs among the other's repeats.
    SamplerNoise,
    /// The reference is stable over enough repeats and never gives the other's answer.
    DeploymentDifference,
    /// The other's answer is new, but the reference is unstable or has too few repeats to say.
    Inconclusive,
}

/// One endpoint's answers to one prompt: the modal answer and every usable repeat's answer.
#[derive(Debug, Clone, Copy)]
pub struct Answers<'a> {
    pub modal: Option<&'a str>,
    pub repeats: &'a [&'a str],
}

/// The difference between two endpoints whose answers diverge (None when their modal answers
/// agree or one has none).
pub fn classify(reference: Answers, other: Answers) -> Option<Difference> {
    let (a, b) = (reference.modal?, other.modal?);
    if a == b {
        return None;
    }
    if reference.repeats.contains(&b) || other.repeats.contains(&a) {
        return Some(Difference::SamplerNoise);
    }
    let stable = reference.repeats.iter().all(|r| *r == a);
    Some(
        if stable && reference.repeats.len() >= MIN_REFERENCE_REPEATS {
            Difference::DeploymentDifference
        } else {
            Difference::Inconclusive
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers<'a>(modal: &'a str, repeats: &'a [&'a str]) -> Answers<'a> {
        Answers {
            modal: Some(modal),
            repeats,
        }
    }

    #[test]
    fn an_answer_the_reference_also_gives_is_noise() {
        let d = classify(
            answers("9", &["9", "9", "5"]),
            answers("5", &["5", "5", "5"]),
        );
        assert_eq!(d, Some(Difference::SamplerNoise));
        // And the other way round: the other endpoint sometimes gives the reference's answer.
        let d = classify(
            answers("9", &["9", "9", "9"]),
            answers("5", &["5", "9", "5"]),
        );
        assert_eq!(d, Some(Difference::SamplerNoise));
    }

    #[test]
    fn a_new_answer_against_a_stable_reference_is_a_deployment_difference() {
        let d = classify(
            answers("3", &["3", "3", "3"]),
            answers("2", &["2", "2", "2"]),
        );
        assert_eq!(d, Some(Difference::DeploymentDifference));
    }

    #[test]
    fn an_unstable_or_unrepeated_reference_cannot_rule_a_new_answer_out() {
        let d = classify(
            answers("9", &["9", "9", "7"]),
            answers("5", &["5", "5", "5"]),
        );
        assert_eq!(d, Some(Difference::Inconclusive));
        let d = classify(answers("3", &["3"]), answers("2", &["2"]));
        assert_eq!(d, Some(Difference::Inconclusive));
    }

    #[test]
    fn agreeing_modal_answers_have_no_difference() {
        assert_eq!(classify(answers("3", &["3"]), answers("3", &["3"])), None);
    }
}
