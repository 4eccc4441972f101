//! Which request fields a `--param` may set, for every command alike: the fields coherence sets
//! itself, and those that change what is sampled (which the run fixes, sends identically to
//! every endpoint and states in its manifest and report), are refused.

/// Fields coherence sets in every request body; `max_completion_tokens` is the newer name of
/// `max_tokens`, so a `--param` of it would override the budget the run states.
pub const OWN_FIELDS: &[&str] = &[
    "model",
    "messages",
    "prompt",
    "stream",
    "max_tokens",
    "max_completion_tokens",
];

/// Fields that change what is sampled even at temperature 0, which every request, the manifest
/// and the report state: the temperature itself, more than one choice or candidate, beam search,
/// the samplers that replace or vary the temperature, and the penalties and biases that move the
/// logits before the pick (a greedy pick under a repetition penalty is another text).
/// Truncation (`top_p`, `top_k`, `min_p`) and `seed` are allowed: greedy decoding ignores them.
pub const SAMPLING_FIELDS: &[&str] = &[
    "temperature",
    "n",
    "best_of",
    "use_beam_search",
    "dynatemp_range",
    "dynatemp_exponent",
    "mirostat",
    "frequency_penalty",
    "presence_penalty",
    "repetition_penalty",
    "logit_bias",
];

/// Why a field may not be set by `--param`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// coherence sets it itself.
    OwnField,
    /// It changes what is sampled.
    Sampling,
}

/// Why `key` may not be set by `--param`, if it may not.
pub fn refused(key: &str) -> Option<Refused> {
    if OWN_FIELDS.contains(&key) {
        Some(Refused::OwnField)
    } else if SAMPLING_FIELDS.contains(&key) {
        Some(Refused::Sampling)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_aliases_and_penalties_are_refused_truncation_and_seed_are_not() {
        assert_eq!(refused("max_completion_tokens"), Some(Refused::OwnField));
        for key in [
            "frequency_penalty",
            "presence_penalty",
            "repetition_penalty",
        ] {
            assert_eq!(refused(key), Some(Refused::Sampling), "{key}");
        }
        for key in ["top_p", "top_k", "min_p", "seed", "cache_prompt"] {
            assert_eq!(refused(key), None, "{key}");
        }
    }
}
