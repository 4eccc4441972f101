//! Testing by betting: a test martingale for a one-sided hypothesis about the mean of bounded
//! per-prompt scores, which may be read after every prompt.
//!
//! Against H0: E[y_i | the prompts before] ≤ 0 for every i, with each y_i ≥ −`floor`, the
//! capital K_t = Π_{i ≤ t} (1 + λ_i y_i) is a non-negative supermartingale under H0 for any bet
//! λ_i ∈ [0, 1/floor) chosen before y_i is seen; by Ville's inequality it ever reaches 1/α with
//! probability at most α (Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
//! betting", JRSS B 2023; Shafer, "Testing by betting", JRSS A 2021). The bets here are aGRAPA
//! (the same paper's approximate growth-rate-optimal bet, μ̂ / (σ̂² + μ̂²) from the scores before),
//! capped for the run's planned length N by √(2 ln(1/α) / (σ̂² N)) (the predictable plug-in bet
//! tuned to N: a smaller bet reaches 1/α by N more surely than the growth-optimal one, whose
//! capital swings more) and by 0.9/floor. N is fixed before the run (the manifest's control
//! plan), so the bets stay predictable.

/// The largest bet, as a share of 1/floor (a bet of 1/floor could lose everything at once).
pub(super) const MAX_BET: f64 = 0.9;

/// The running test: push every prompt's score in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Betting {
    /// The lowest score there can be (as a positive number).
    floor: f64,
    /// ln(1/α).
    log_threshold: f64,
    /// The prompts the run plans to compare (tunes the bets).
    horizon: f64,
    /// The score's assumed mean before any prompt (its mean under the hypothesis of no
    /// difference, where the bet starts from nothing).
    prior_mean: f64,
    n: usize,
    sum: f64,
    squared_deviations: f64,
    log_capital: f64,
    max_log_capital: f64,
    crossed_at: Option<usize>,
}

impl Betting {
    /// A test at level `alpha` of scores at least −`floor`, over about `horizon` prompts, whose
    /// mean starts at `prior_mean`.
    pub fn new(alpha: f64, floor: f64, horizon: usize, prior_mean: f64) -> Betting {
        Betting {
            floor,
            log_threshold: (1.0 / alpha.clamp(1e-12, 0.5)).ln(),
            horizon: horizon.max(1) as f64,
            prior_mean,
            n: 0,
            sum: 0.0,
            squared_deviations: 0.0,
            log_capital: 0.0,
            max_log_capital: 0.0,
            crossed_at: None,
        }
    }

    /// Bet on the next score `y`, then see it.
    pub fn push(&mut self, y: f64) {
        let i = (self.n + 1) as f64;
        let mean = (self.prior_mean + self.sum) / i;
        // The prior's spread: the largest a score in [−1, 1] halfway to its bounds has.
        let variance = ((0.25 + self.squared_deviations) / i).max(1e-6);
        let growth = mean / (variance + mean * mean);
        let horizon = (2.0 * self.log_threshold / (variance * self.horizon)).sqrt();
        let bet = growth.min(horizon).min(MAX_BET / self.floor).max(0.0);
        self.log_capital += (bet * y.max(-self.floor)).ln_1p();
        self.max_log_capital = self.max_log_capital.max(self.log_capital);
        self.n += 1;
        self.sum += y;
        let mean_now = (self.prior_mean + self.sum) / (i + 1.0);
        self.squared_deviations += (y - mean_now).powi(2);
        if self.crossed_at.is_none() && self.log_capital >= self.log_threshold {
            self.crossed_at = Some(self.n);
        }
    }

    /// The largest value the capital reached (the e-value the decision reads).
    pub fn e_value(&self) -> f64 {
        self.max_log_capital.exp()
    }

    /// The prompt (1-based) at which the capital first reached 1/α.
    pub fn crossed_at(&self) -> Option<usize> {
        self.crossed_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_at_the_hypothesis_mean_rarely_cross_and_positive_ones_do() {
        let mut rng = fastrand::Rng::with_seed(3);
        let runs = 2000;
        let crossed = (0..runs)
            .filter(|_| {
                let mut t = Betting::new(0.05, 1.0, 200, 0.0);
                for _ in 0..400 {
                    t.push(if rng.bool() { 1.0 } else { -1.0 });
                }
                t.crossed_at().is_some()
            })
            .count();
        assert!(
            (crossed as f64) / (runs as f64) <= 0.05,
            "{crossed} of {runs}"
        );
        let mut t = Betting::new(0.05, 1.0, 200, 0.0);
        for _ in 0..20 {
            t.push(1.0);
        }
        assert!(t.crossed_at().is_some_and(|n| n <= 10), "{t:?}");
        assert!(t.e_value() >= 20.0);
    }

    #[test]
    fn nothing_to_bet_on_keeps_the_capital_at_one() {
        let mut t = Betting::new(0.05, 1.0, 50, 0.0);
        for _ in 0..50 {
            t.push(0.0);
        }
        assert_eq!(t.e_value(), 1.0);
        assert_eq!(t.crossed_at(), None);
    }
}
