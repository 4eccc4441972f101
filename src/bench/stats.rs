//! Small statistics over measurements: mean, percentiles (linear interpolation), rounding.

use serde::{Deserialize, Serialize};

/// The arithmetic mean, or None for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The largest value, or None for no values.
pub fn max(values: &[f64]) -> Option<f64> {
    values.iter().copied().reduce(f64::max)
}

/// The `p`-th percentile (0..=100) of `values`, interpolating linearly between the two closest
/// ranks (the usual "type 7" definition: p50 of [1, 2] is 1.5, p100 is the maximum).
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64))
}

/// Round to two decimals, for readable JSON.
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Latency distribution in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Percentiles {
    /// None for no values.
    pub fn of(values: &[f64]) -> Option<Self> {
        let at = |p| percentile(values, p).map(round2);
        Some(Percentiles {
            p50: at(50.0)?,
            p90: at(90.0)?,
            p95: at(95.0)?,
            p99: at(99.0)?,
            max: round2(max(values)?),
            mean: round2(mean(values)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v: Vec<f64> = (1..=10).map(|x| x as f64 * 10.0).collect();
        assert_eq!(percentile(&v, 50.0), Some(55.0));
        assert_eq!(percentile(&v, 90.0), Some(91.0));
        assert_eq!(percentile(&v, 100.0), Some(100.0));
        assert_eq!(percentile(&v, 0.0), Some(10.0));
        assert_eq!(percentile(&[3.0], 99.0), Some(3.0));
        assert_eq!(percentile(&[], 50.0), None);
        let p = Percentiles::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((p.p50, p.max, p.mean), (3.0, 5.0, 3.0));
    }

    #[test]
    fn mean_and_max_of_nothing_is_none() {
        assert_eq!(mean(&[]), None);
        assert_eq!(max(&[]), None);
        assert_eq!(mean(&[1.0, 2.0]), Some(1.5));
    }
}
