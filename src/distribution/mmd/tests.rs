//! The test's level and power, measured by simulation: samplers of a categorical distribution
//! over answers at a temperature, one applying `top_k` and one ignoring it.

use super::*;

/// Answers the simulated model gives, in order of preference (as graded keys and as open text).
const ANSWERS: [&str; 8] = [
    "The sea is calm tonight.",
    "Waves crash against the old rocks.",
    "A gull circles over the harbour.",
    "Salt wind carries the smell of rain.",
    "The tide pulls the boats out.",
    "Fog hides the lighthouse.",
    "Blue water stretches to the sky.",
    "Sand sticks to wet feet.",
];

/// Prompts in the simulated set: as many as the built-in set holds, half graded, half open.
const PROMPTS: usize = 16;

/// Samples per prompt and endpoint: the command's default.
const N: usize = 10;

const TEMPERATURE: f64 = 1.0;

/// What the two simulated samplers differ in: B ignores the `top_k` that A applies, over answer
/// distributions whose logits fall by `slope + step × prompt` per rank (flatter: more of the
/// tail that top_k cuts).
#[derive(Debug, Clone, Copy)]
struct Scenario {
    top_k: usize,
    slope: f64,
    step: f64,
    samples: usize,
}

/// The scenario the level test asserts: top_k 3 over slopes 0.3 to 0.675.
const LEVEL: Scenario = Scenario {
    top_k: 3,
    slope: 0.3,
    step: 0.025,
    samples: N,
};

/// The scenario the power test asserts (`docs/src/distribution.md` states it): top_k 2 over
/// slopes 0.4 to 1.15 (the cut tail holds 36% down to 7% of the mass).
const POWER: Scenario = Scenario {
    top_k: 2,
    slope: 0.4,
    step: 0.05,
    samples: N,
};

/// A simulated model's answer distribution for one prompt: logits falling by a slope per rank.
fn logits(scenario: Scenario, prompt: usize) -> Vec<f64> {
    let slope = scenario.slope + scenario.step * prompt as f64;
    (0..ANSWERS.len()).map(|j| -(j as f64) * slope).collect()
}

/// Draw one answer index at `temperature`, keeping only the `top_k` most likely when given.
fn draw(rng: &mut fastrand::Rng, logits: &[f64], temperature: f64, top_k: Option<usize>) -> usize {
    let keep = top_k.unwrap_or(logits.len()).min(logits.len());
    // The logits are sorted (most likely first), so the top k are the first k.
    let weights: Vec<f64> = logits[..keep]
        .iter()
        .map(|l| (l / temperature).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut u = rng.f64() * total;
    for (j, w) in weights.iter().enumerate() {
        if u < *w {
            return j;
        }
        u -= w;
    }
    keep - 1
}

/// The samples of one trial: A applies top_k, B applies it unless `b_ignores_top_k`.
fn trial(scenario: Scenario, seed: u64, b_ignores_top_k: bool) -> Vec<Samples> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..PROMPTS)
        .map(|prompt| {
            let l = logits(scenario, prompt);
            let mut side = |top_k: Option<usize>| -> Vec<&str> {
                (0..scenario.samples)
                    .map(|_| ANSWERS[draw(&mut rng, &l, TEMPERATURE, top_k)])
                    .collect()
            };
            let a = side(Some(scenario.top_k));
            let b = side((!b_ignores_top_k).then_some(scenario.top_k));
            let kernel = if prompt % 2 == 0 {
                Kernel::ExactMatch
            } else {
                Kernel::CharTrigram
            };
            Samples::new(kernel, &a, &b)
        })
        .collect()
}

fn settings(seed: u64) -> Settings {
    Settings {
        permutations: DEFAULT_PERMUTATIONS,
        seed,
    }
}

/// Of 100 seeded trials, how many read "different" at the default level.
fn rejections(scenario: Scenario, b_ignores_top_k: bool) -> usize {
    (0..100u64)
        .filter(|&t| {
            let pooled = test(&trial(scenario, 1000 + t, b_ignores_top_k), settings(t));
            pooled.p.is_some_and(|p| p < DEFAULT_ALPHA)
        })
        .count()
}

#[test]
fn the_same_distribution_reads_same_in_at_least_95_of_100_trials() {
    let false_positives = rejections(LEVEL, false);
    eprintln!("same distribution: {false_positives} of 100 trials read different");
    assert!(false_positives <= 5, "{false_positives} false positives");
}

#[test]
fn a_sampler_ignoring_top_k_is_told_apart_at_the_default_n() {
    let detected = rejections(POWER, true);
    eprintln!("top_k ignored: {detected} of 100 trials read different");
    // Measured: 59 of 100 (and 95 of 100 at N = 20; `power_table`).
    assert!(detected >= 50, "power {detected}/100");
}

#[test]
fn identical_samples_give_zero_and_separate_samples_a_small_p() {
    let same = ["a", "b", "a", "b"];
    let s = Samples::new(Kernel::ExactMatch, &same, &same);
    let pooled = test(std::slice::from_ref(&s), settings(1));
    // Unbiased: within-side pairs agree 1/3 of the time, across sides 1/2: 1/3 + 1/3 − 1 = −1/3.
    let mmd2 = pooled.prompts[0].mmd2.unwrap();
    assert!((mmd2 + 1.0 / 3.0).abs() < 1e-12, "{mmd2}");
    assert!(pooled.p.unwrap() > 0.5);
    let a = ["x"; 6];
    let b = ["y"; 6];
    let apart = test(&[Samples::new(Kernel::ExactMatch, &a, &b)], settings(1));
    assert!((apart.statistic - 2.0).abs() < 1e-12);
    // Only the observed split (and its mirror) reach 2: p ≈ 2/924, never below 1/(B+1).
    let p = apart.p.unwrap();
    assert!(
        p < 0.01 && p >= 1.0 / f64::from(DEFAULT_PERMUTATIONS + 1),
        "{p}"
    );
}

#[test]
fn a_prompt_with_fewer_than_two_samples_a_side_is_left_out_of_the_pool() {
    let one = Samples::new(Kernel::ExactMatch, &["x"], &["y", "y"]);
    let two = Samples::new(Kernel::ExactMatch, &["x", "x"], &["x", "x"]);
    let pooled = test(&[one.clone(), two], settings(3));
    assert_eq!(
        pooled.prompts[0],
        PromptTest {
            mmd2: None,
            p: None
        }
    );
    assert!(pooled.prompts[1].mmd2.is_some());
    assert_eq!(pooled.tested, 1);
    let none = test(&[one], settings(3));
    assert_eq!((none.p, none.tested), (None, 0));
}

#[test]
fn the_same_seed_gives_the_same_p_values() {
    let samples = trial(POWER, 7, true);
    assert_eq!(test(&samples, settings(5)), test(&samples, settings(5)));
}

/// Power by scenario and N, printed for `docs/src/distribution.md` (`cargo test --lib power_table
/// -- --ignored --nocapture`).
#[test]
#[ignore]
fn power_table() {
    for (top_k, slope, step) in [
        (3, 0.3, 0.025),
        (3, 0.4, 0.05),
        (2, 0.4, 0.05),
        (5, 0.3, 0.025),
    ] {
        for samples in [5, 10, 20] {
            let s = Scenario {
                top_k,
                slope,
                step,
                samples,
            };
            let same = rejections(s, false);
            let apart = rejections(s, true);
            eprintln!("top_k {top_k} slope {slope}+{step}/prompt N {samples}: false positives {same}/100, power {apart}/100");
        }
    }
}
