//! Paired statistics: paired right/wrong counts, the exact McNemar test and Wilson score intervals.

use serde::{Deserialize, Serialize};

/// Two-sided exact McNemar p-value for `b` discordant pairs one way and `c` the other
/// (a binomial test of min(b, c) under p = 1/2).
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k_max = b.min(c);
    let ln2 = std::f64::consts::LN_2;
    let mut ln_pmf = -(n as f64) * ln2; // P(X = 0)
    let mut tail = 0.0;
    for k in 0..=k_max {
        tail += ln_pmf.exp();
        ln_pmf += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    (2.0 * tail).min(1.0)
}

/// A proportion with its Wilson 95% score interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Proportion {
    pub successes: u64,
    pub trials: u64,
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// The two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;
/// The one-sided 95% normal quantile: the bounds of a 90% two-sided interval, as TOST uses them.
pub const Z90: f64 = 1.644_853_626_951_472_2;

/// The Wilson 95% score interval of `successes` out of `trials`.
pub fn wilson(successes: u64, trials: u64) -> Proportion {
    wilson_at(successes, trials, Z95)
}

/// The Wilson score interval at normal quantile `z`.
pub fn wilson_at(successes: u64, trials: u64, z: f64) -> Proportion {
    if trials == 0 {
        return Proportion {
            successes,
            trials,
            value: 0.0,
            low: 0.0,
            high: 1.0,
        };
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let denom = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    Proportion {
        successes,
        trials,
        value: p,
        // At the extremes the interval touches 0 or 1 exactly; say so without rounding noise.
        low: if successes == 0 {
            0.0
        } else {
            (center - half).max(0.0)
        },
        high: if successes == trials {
            1.0
        } else {
            (center + half).min(1.0)
        },
    }
}

/// A p-value as every report prints it after "p = ": three decimals, or scientific notation
/// below 0.001 ("3.8e-4"; never "0.000", never "p = < 0.001").
pub fn format_p(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// Paired right/wrong counts of two endpoints over the same graded prompts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paired {
    pub both_correct: u64,
    pub reference_only: u64,
    pub other_only: u64,
    pub both_wrong: u64,
}

impl Paired {
    /// Count one graded prompt: right or wrong at the reference and at the other endpoint.
    pub fn add(&mut self, reference: bool, other: bool) {
        match (reference, other) {
            (true, true) => self.both_correct += 1,
            (true, false) => self.reference_only += 1,
            (false, true) => self.other_only += 1,
            (false, false) => self.both_wrong += 1,
        }
    }

    pub fn graded(&self) -> u64 {
        self.both_correct + self.reference_only + self.other_only + self.both_wrong
    }
}

/// Paired counts as results.json writes them: the graded items split by who was right, with the
/// exact McNemar p of the flips. `PairedCounts` (per category) and `LongBucket` (per length)
/// flatten it into their own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McNemarCounts {
    pub graded: u64,
    pub both_correct: u64,
    pub both_wrong: u64,
    /// Reference right, other wrong.
    pub reference_only: u64,
    /// Reference wrong, other right.
    pub other_only: u64,
    /// Exact McNemar test of reference_only vs other_only.
    pub p_value: f64,
}

impl McNemarCounts {
    pub fn of(paired: Paired) -> McNemarCounts {
        McNemarCounts {
            graded: paired.graded(),
            both_correct: paired.both_correct,
            both_wrong: paired.both_wrong,
            reference_only: paired.reference_only,
            other_only: paired.other_only,
            p_value: mcnemar_exact(paired.reference_only, paired.other_only),
        }
    }

    /// The counts alone.
    pub fn paired(&self) -> Paired {
        Paired {
            both_correct: self.both_correct,
            reference_only: self.reference_only,
            other_only: self.other_only,
            both_wrong: self.both_wrong,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_matches_the_binomial_test() {
        // 10 discordant pairs all one way: 2 * 0.5^10.
        assert!((mcnemar_exact(10, 0) - 0.001953125).abs() < 1e-12);
        assert!((mcnemar_exact(0, 10) - 0.001953125).abs() < 1e-12);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        // b=1, c=5: 2 * (1 + 6) / 64 = 0.21875.
        assert!((mcnemar_exact(1, 5) - 0.21875).abs() < 1e-12);
        // Large n stays finite.
        let p = mcnemar_exact(4000, 4200);
        assert!(p > 0.0 && p < 0.05, "{p}");
    }

    #[test]
    fn wilson_interval_is_reasonable() {
        let w = wilson(13, 13);
        assert_eq!(w.value, 1.0);
        assert!((w.low - 0.7719).abs() < 1e-3, "{w:?}");
        assert_eq!(w.high, 1.0);
        let w = wilson(50, 100);
        assert!(
            (w.low - 0.4038).abs() < 1e-3 && (w.high - 0.5962).abs() < 1e-3,
            "{w:?}"
        );
        assert_eq!(wilson(0, 0).trials, 0);
    }

    #[test]
    fn p_values_print_readably() {
        assert_eq!(format_p(0.001953125), "0.002");
        assert_eq!(format_p(0.00001), "1.0e-5");
        assert_eq!(format_p(0.0004), "4.0e-4");
        assert_eq!(format_p(2e-11), "2.0e-11");
    }
}
