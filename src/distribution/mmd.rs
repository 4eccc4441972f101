//! The two-sample test: per prompt, the unbiased MMD² between endpoint A's and endpoint B's
//! samples under the prompt's kernel; pooled over prompts as the sum of the per-prompt MMD²;
//! p-values by permutation, the labels permuted within each prompt, all prompts at once in each
//! permutation, p = (b + 1) / (B + 1) where b of the B permuted statistics reach the observed
//! one. Seeded, so the same samples give the same p-values.

use super::kernel::Kernel;

/// Permutations of the labels when none is asked for.
pub const DEFAULT_PERMUTATIONS: u32 = 1000;

/// The level at which the test reads "different" (p below it).
pub const DEFAULT_ALPHA: f64 = 0.05;

/// A permuted statistic this close to the observed one counts as reaching it (float noise).
const TIE: f64 = 1e-12;

/// One prompt's samples, A's first, as the Gram matrix of its kernel.
#[derive(Debug, Clone)]
pub struct Samples {
    gram: Vec<f64>,
    /// How many samples are A's.
    first: usize,
    total: usize,
    /// The sum of the kernel over every unordered pair of distinct samples.
    pairs_sum: f64,
}

impl Samples {
    pub fn new(kernel: Kernel, a: &[&str], b: &[&str]) -> Samples {
        let all: Vec<&str> = a.iter().chain(b).copied().collect();
        let total = all.len();
        let gram = kernel.gram(&all);
        let mut pairs_sum = 0.0;
        for i in 0..total {
            for j in (i + 1)..total {
                pairs_sum += gram[i * total + j];
            }
        }
        Samples {
            gram,
            first: a.len(),
            total,
            pairs_sum,
        }
    }

    /// Both sides have two samples or more (the unbiased MMD² needs them).
    fn testable(&self) -> bool {
        self.first >= 2 && self.total - self.first >= 2
    }

    /// The unbiased MMD² with the samples at `order[..first]` as A and the rest as B.
    fn mmd2(&self, order: &[usize]) -> f64 {
        let n = self.total;
        let within = |part: &[usize]| {
            let mut s = 0.0;
            for (x, &i) in part.iter().enumerate() {
                for &j in &part[x + 1..] {
                    s += self.gram[i * n + j];
                }
            }
            s
        };
        let (a, b) = order.split_at(self.first);
        let (m, k) = (a.len() as f64, b.len() as f64);
        let (aa, bb) = (within(a), within(b));
        let ab = self.pairs_sum - aa - bb;
        2.0 * aa / (m * (m - 1.0)) + 2.0 * bb / (k * (k - 1.0)) - 2.0 * ab / (m * k)
    }
}

/// How the permutation test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub permutations: u32,
    pub seed: u64,
}

/// One prompt's statistic and permutation p-value; `None` when a side has fewer than two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PromptTest {
    pub mmd2: Option<f64>,
    pub p: Option<f64>,
}

/// The pooled test over every prompt with two samples or more on each side.
#[derive(Debug, Clone, PartialEq)]
pub struct Pooled {
    pub prompts: Vec<PromptTest>,
    /// The sum of the tested prompts' MMD².
    pub statistic: f64,
    /// `None` when no prompt could be tested.
    pub p: Option<f64>,
    /// How many prompts the pooled statistic sums over.
    pub tested: usize,
    pub permutations: u32,
}

/// Kernel look-ups one permutation of one prompt costs: every pair within each side (the pairs
/// across the sides follow from the total). The permutation test's work is this summed over
/// prompts, times the permutations.
pub fn pairs_per_permutation(a: usize, b: usize) -> u64 {
    let pairs = |n: usize| (n as u64) * (n.saturating_sub(1) as u64) / 2;
    pairs(a) + pairs(b)
}

/// Test every prompt and the pool, permuting the labels within each prompt.
#[cfg(test)]
pub fn test(samples: &[Samples], settings: Settings) -> Pooled {
    test_telling(samples, settings, &mut |_| {})
}

/// [`test`], telling `done` the number of permutations made after each one.
pub fn test_telling(samples: &[Samples], settings: Settings, done: &mut dyn FnMut(u32)) -> Pooled {
    let mut rng = fastrand::Rng::with_seed(settings.seed);
    let tested: Vec<usize> = (0..samples.len())
        .filter(|&i| samples[i].testable())
        .collect();
    let identity = |s: &Samples| (0..s.total).collect::<Vec<usize>>();
    let observed: Vec<f64> = tested
        .iter()
        .map(|&i| samples[i].mmd2(&identity(&samples[i])))
        .collect();
    let statistic: f64 = observed.iter().sum();
    let mut reached = vec![0u32; tested.len()];
    let mut pooled_reached = 0u32;
    let mut orders: Vec<Vec<usize>> = tested.iter().map(|&i| identity(&samples[i])).collect();
    for made in 1..=settings.permutations {
        let mut sum = 0.0;
        for (x, &i) in tested.iter().enumerate() {
            rng.shuffle(&mut orders[x]);
            let value = samples[i].mmd2(&orders[x]);
            if value >= observed[x] - TIE {
                reached[x] += 1;
            }
            sum += value;
        }
        if sum >= statistic - TIE {
            pooled_reached += 1;
        }
        done(made);
    }
    let p = |b: u32| f64::from(b + 1) / f64::from(settings.permutations + 1);
    let mut prompts = vec![
        PromptTest {
            mmd2: None,
            p: None
        };
        samples.len()
    ];
    for (x, &i) in tested.iter().enumerate() {
        prompts[i] = PromptTest {
            mmd2: Some(observed[x]),
            p: Some(p(reached[x])),
        };
    }
    Pooled {
        prompts,
        statistic,
        p: (!tested.is_empty()).then(|| p(pooled_reached)),
        tested: tested.len(),
        permutations: settings.permutations,
    }
}

#[cfg(test)]
mod tests;
