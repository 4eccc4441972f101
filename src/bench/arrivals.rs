//! When an open-loop soak sends: inter-arrival times drawn as vLLM's `benchmark_serving` draws
//! them, from a gamma distribution with shape = burstiness and mean 1/rate. Burstiness 1 is the
//! exponential distribution (Poisson arrivals); below 1 arrivals bunch into bursts, above 1 they
//! are more evenly spaced. The schedule is seeded, so every run of the same flags sends at the
//! same moments.

/// An endless schedule of inter-arrival times, in seconds.
pub struct Arrivals {
    rng: fastrand::Rng,
    rate: f64,
    shape: f64,
}

impl Arrivals {
    /// `rate` requests per second (> 0) with `burstiness` (> 0), seeded by `seed`.
    pub fn new(rate: f64, burstiness: f64, seed: u64) -> Self {
        Arrivals {
            rng: fastrand::Rng::with_seed(seed),
            rate: if rate.is_finite() && rate > 0.0 {
                rate
            } else {
                1.0
            },
            shape: if burstiness.is_finite() && burstiness > 0.0 {
                burstiness
            } else {
                1.0
            },
        }
    }

    /// The next gap: gamma(shape, scale = 1 / (rate · shape)), whose mean is 1 / rate.
    pub fn next_gap(&mut self) -> f64 {
        gamma(&mut self.rng, self.shape) / (self.rate * self.shape)
    }
}

/// A gamma(shape, 1) draw by Marsaglia and Tsang's method; shapes below 1 use the boost
/// gamma(k) = gamma(k + 1) · U^(1/k).
fn gamma(rng: &mut fastrand::Rng, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = open_unit(rng);
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = open_unit(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let (u1, u2) = (open_unit(rng), rng.f64());
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Uniform in (0, 1]: never 0, so its logarithm is finite.
fn open_unit(rng: &mut fastrand::Rng) -> f64 {
    1.0 - rng.f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(rate: f64, burstiness: f64) -> (f64, f64) {
        let mut a = Arrivals::new(rate, burstiness, 7);
        let gaps: Vec<f64> = (0..200_000).map(|_| a.next_gap()).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        (mean, var)
    }

    #[test]
    fn gaps_have_mean_one_over_rate_and_the_gamma_variance() {
        // gamma(k, θ = 1/(r·k)): mean 1/r, variance k·θ² = 1/(r²·k).
        for (rate, k) in [(20.0, 1.0), (4.0, 0.5), (10.0, 4.0)] {
            let (mean, var) = moments(rate, k);
            assert!(
                (mean * rate - 1.0).abs() < 0.01,
                "rate {rate} k {k}: mean {mean}"
            );
            let want = 1.0 / (rate * rate * k);
            assert!(
                (var / want - 1.0).abs() < 0.05,
                "rate {rate} k {k}: var {var} vs {want}"
            );
        }
    }

    #[test]
    fn the_schedule_is_seeded_and_bad_values_fall_back() {
        let draw = |seed| {
            let mut a = Arrivals::new(5.0, 1.0, seed);
            (0..5).map(|_| a.next_gap()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        let mut a = Arrivals::new(f64::NAN, -1.0, 1);
        assert!(a.next_gap().is_finite());
    }
}
