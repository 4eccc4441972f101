//! The bounds of a distribution run's settings, one list for the command line and for
//! distribution.json read back by `--resume` (where an error names the field): samples,
//! permutations, temperature, top_p, top_k, the token budget, the test's level, the request
//! fields a `--param` may not set.

use super::mmd::pairs_per_permutation;
use super::results::SamplingParams;
use crate::run::params::refused;

/// Samples per prompt and endpoint: the unbiased MMD² needs two a side; above 1000 the
/// statistics would outgrow a run.
pub const MIN_SAMPLES: u32 = 2;
pub const MAX_SAMPLES: u32 = 1000;

/// Label permutations of the test: 99 gives p-values down to 0.01.
pub const MIN_PERMUTATIONS: u32 = 99;
pub const MAX_PERMUTATIONS: u32 = 100_000;

/// The highest temperature a run samples at.
pub const MAX_TEMPERATURE: f64 = 2.0;

/// Request fields with their own flag, which a `--param` may not set either.
pub const OWN_FLAGS: [&str; 2] = ["top_p", "top_k"];

/// A sampling temperature above 0 and at most [`MAX_TEMPERATURE`].
pub fn check_temperature(t: f64) -> Result<(), String> {
    (t > 0.0 && t <= MAX_TEMPERATURE).then_some(()).ok_or_else(|| {
        format!("{t} is not a sampling temperature: give a number above 0 and at most {MAX_TEMPERATURE}, e.g. 0.7")
    })
}

/// A top_p above 0 and at most 1.
pub fn check_top_p(p: f64) -> Result<(), String> {
    (p > 0.0 && p <= 1.0).then_some(()).ok_or_else(|| {
        format!("{p} is not a top_p: give a number above 0 and at most 1, e.g. 0.95")
    })
}

/// What serde cannot check of the sampling parameters; the error names the field.
pub fn check_sampling(s: &SamplingParams) -> Result<(), String> {
    check_temperature(s.temperature).map_err(|e| format!("`sampling.temperature`: {e}"))?;
    if let Some(p) = s.top_p {
        check_top_p(p).map_err(|e| format!("`sampling.top_p`: {e}"))?;
    }
    if s.top_k == Some(0) {
        return Err("`sampling.top_k` is 0; give 1 or more".into());
    }
    if !(MIN_SAMPLES..=MAX_SAMPLES).contains(&s.samples) {
        return Err(format!(
            "`sampling.samples` is {}; give between {MIN_SAMPLES} and {MAX_SAMPLES}",
            s.samples
        ));
    }
    if s.max_tokens == Some(0) {
        return Err("`sampling.max_tokens` is 0; give 1 or more".into());
    }
    if let Some(k) = s
        .params
        .keys()
        .find(|k| refused(k).is_some() || OWN_FLAGS.contains(&k.as_str()))
    {
        return Err(format!(
            "`sampling.params` sets `{k}`, which a distribution run sends itself or refuses"
        ));
    }
    Ok(())
}

/// What serde cannot check of the test settings; the error names the field.
pub fn check_test(alpha: f64, permutations: u32) -> Result<(), String> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(format!("`alpha` is {alpha}; give a level between 0 and 1"));
    }
    if !(MIN_PERMUTATIONS..=MAX_PERMUTATIONS).contains(&permutations) {
        return Err(format!(
            "`permutations` is {permutations}; give between {MIN_PERMUTATIONS} and {MAX_PERMUTATIONS}"
        ));
    }
    Ok(())
}

/// The most kernel look-ups the statistics may take (the permutation test and both controls):
/// 10^10, about ten seconds on one core of a recent CPU. The work grows with the samples squared
/// times the permutations (`statistics_work`), so 1000 samples a side allow 416 permutations;
/// a `--permutations` above what fits is refused, the default is reduced to fit and says so.
pub const MAX_STATISTICS_WORK: u64 = 10_000_000_000;

/// Kernel look-ups of the statistics over `prompts` prompts with `samples` a side and
/// `permutations` permutations: per permutation and prompt, the pairs within each side of the
/// test (two sides of `samples`) and of each endpoint's control (its halves).
pub fn statistics_work(prompts: usize, samples: u32, permutations: u32) -> u64 {
    let s = samples as usize;
    let per_prompt = pairs_per_permutation(s, s) + 2 * pairs_per_permutation(s.div_ceil(2), s / 2);
    per_prompt
        .saturating_mul(prompts as u64)
        .saturating_mul(u64::from(permutations))
}

/// The most permutations within [`MAX_STATISTICS_WORK`] (at least 1).
pub fn permutations_within(prompts: usize, samples: u32) -> u32 {
    let one = statistics_work(prompts, samples, 1).max(1);
    u32::try_from(MAX_STATISTICS_WORK / one)
        .unwrap_or(u32::MAX)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_grows_with_samples_squared_times_permutations() {
        // 16 prompts, 10 samples a side, 1000 permutations: 16 × (90 + 2 × 20) × 1000.
        assert_eq!(statistics_work(16, 10, 1000), 16 * 130 * 1000);
        assert!(statistics_work(16, 10, 1000) < MAX_STATISTICS_WORK);
        assert!(statistics_work(16, 1000, 100_000) > 100 * MAX_STATISTICS_WORK);
        let fit = permutations_within(16, 1000);
        assert!((400..=420).contains(&fit), "{fit}");
        assert!(statistics_work(16, 1000, fit) <= MAX_STATISTICS_WORK);
        assert!(statistics_work(16, 1000, fit + 1) > MAX_STATISTICS_WORK);
    }

    #[test]
    fn sampling_out_of_bounds_names_the_field() {
        let good = SamplingParams {
            temperature: 0.7,
            top_p: None,
            top_k: None,
            samples: 10,
            max_tokens: None,
            params: serde_json::Map::new(),
        };
        assert_eq!(check_sampling(&good), Ok(()));
        let e = check_sampling(&SamplingParams {
            temperature: f64::NAN,
            ..good.clone()
        })
        .unwrap_err();
        assert!(e.contains("`sampling.temperature`"), "{e}");
        assert!(check_test(0.05, 1000).is_ok());
        assert!(check_test(f64::NAN, 1000).is_err());
    }
}
