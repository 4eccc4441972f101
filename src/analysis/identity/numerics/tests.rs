//! The identity axis against simulated deployments: identical, perturbed by ~1e-3 nats, a
//! jittery reference with the same jitter (the false-positive rate, measured), text only, and
//! another tokenizer.

use std::sync::Arc;

use chrono::Utc;

use super::distance::{Comparison, Evidence};
use super::*;
use crate::endpoint::{Completion, LogprobToken};
use crate::run::record::Answered;
use crate::run::CONTROL_REPEAT;

/// One answer: its text split into word tokens, each with the given logprob (none: no logprobs).
fn answer(
    prompt: &str,
    endpoint: &str,
    repeat: u32,
    text: &str,
    logprobs: Option<&[f64]>,
) -> Answered {
    let completion = Completion {
        answer: Some(Arc::from(text)),
        logprobs: logprobs.map(|lps| {
            text.split_inclusive(' ')
                .zip(lps.iter().cycle())
                .map(|(t, lp)| LogprobToken {
                    token: t.to_string(),
                    logprob: Some(*lp),
                    top: vec![(t.to_string(), *lp)],
                })
                .collect()
        }),
        ..Completion::default()
    };
    Answered {
        prompt: Arc::from(prompt),
        endpoint: Arc::from(endpoint),
        max_tokens: 64,
        repeat,
        started_at: Utc::now(),
        latency_ms: 1.0,
        elapsed_ms: 1.0,
        completion: Arc::new(completion),
        server: None,
        error: None,
        note: None,
    }
}

const TEXT: &str = "The letter r appears three times in the word strawberry";

fn names() -> Vec<String> {
    vec!["a".into(), "b".into()]
}

fn prompts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("p{i}")).collect()
}

/// A run of `n` prompts where A0, A1 and B0 have the logprobs `lp(endpoint, repeat, prompt)`.
fn run(n: usize, lp: impl Fn(&str, u32, usize) -> Option<Vec<f64>>) -> Vec<Answered> {
    let mut records = Vec::new();
    for i in 0..n {
        for (e, r) in [("a", 0), ("b", 0), ("a", CONTROL_REPEAT)] {
            let lps = lp(e, r, i);
            records.push(answer(&format!("p{i}"), e, r, TEXT, lps.as_deref()));
        }
    }
    records
}

fn setting(alpha: f64, horizon: usize) -> Setting {
    Setting { alpha, horizon }
}

fn decide_run(records: &[Answered], n: usize) -> IdentitySummary {
    decide(records, &names(), &prompts(n), &[], setting(ALPHA, n)).unwrap()
}

#[test]
fn identical_logprobs_read_identical() {
    let records = run(30, |_, _, i| Some(vec![-0.1 - i as f64 * 0.01, -0.5]));
    let s = decide_run(&records, 30);
    assert_eq!(s.verdict, IdentityVerdict::Identical, "{:?}", s.because);
    let pair = &s.evidence[0];
    assert_eq!(pair.level, Level::DecodeLogprobs);
    assert_eq!(pair.pair.equal_logprob_tokens, pair.pair.tokens_compared);
    assert_eq!(pair.pair.mean_abs_delta_logprob, Some(0.0));
    assert!(
        s.because[0].starts_with("as close to the reference"),
        "{:?}",
        s.because
    );
}

#[test]
fn too_few_controlled_prompts_are_undecided() {
    let records = run(10, |_, _, _| Some(vec![-0.1]));
    let s = decide_run(&records, 10);
    assert_eq!(s.verdict, IdentityVerdict::Undecided, "{:?}", s.because);
}

#[test]
fn the_same_text_with_logprobs_off_by_a_thousandth_reads_perturbed_within_20_prompts() {
    let records = run(60, |e, _, i| {
        let base = -0.2 - (i % 7) as f64 * 0.03;
        Some(if e == "b" {
            vec![base + 1e-3, -0.4 - 1e-3]
        } else {
            vec![base, -0.4]
        })
    });
    let s = decide_run(&records, 60);
    assert_eq!(s.verdict, IdentityVerdict::Perturbed, "{:?}", s.because);
    let test = &s.evidence[0].test;
    assert!(test.decided_at_prompt.is_some_and(|n| n <= 20), "{test:?}");
    assert_eq!(s.evidence[0].pair.exact_text, 60, "the texts are the same");
}

/// The share of `runs` simulated runs of `n` prompts read `perturbed` at `alpha`, where the
/// reference's logprobs jitter from request to request and the candidate is the same deployment
/// (the same jitter): half the requests are batched differently and shift by up to 0.01 nats.
fn false_alarm_rate(alpha: f64, n: usize, runs: usize, seed: u64) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut perturbed = 0;
    for _ in 0..runs {
        let jitter: Vec<Vec<f64>> = (0..3 * n)
            .map(|_| {
                let shift = if rng.bool() { rng.f64() * 0.01 } else { 0.0 };
                vec![-0.3 + shift, -0.6 - shift]
            })
            .collect();
        let records = run(n, |e, r, i| {
            let slot = 3 * i + usize::from(e == "b") + 2 * r as usize;
            Some(jitter[slot].clone())
        });
        let s = decide(&records, &names(), &prompts(n), &[], setting(alpha, n)).unwrap();
        if s.verdict == IdentityVerdict::Perturbed {
            perturbed += 1;
        }
    }
    perturbed as f64 / runs as f64
}

/// A run of 60 prompts at the default level: `perturbed` on at most 5% of 1,000 simulated runs
/// (Ville's inequality bounds it by ALPHA).
#[test]
fn a_jittery_reference_and_a_candidate_with_the_same_jitter_rarely_read_perturbed() {
    let rate = false_alarm_rate(ALPHA, 60, 1000, 7);
    assert!(rate <= ALPHA, "false-positive rate {rate}");
}

/// A watch check (50 prompts at `watch --alpha 0.01`): flagged on at most 1% of 4,000 simulated
/// checks of an unchanged, jittery deployment.
#[test]
fn a_watch_check_of_an_unchanged_jittery_deployment_is_flagged_at_most_at_its_level() {
    let rate = false_alarm_rate(0.01, 50, 4000, 8);
    eprintln!("false-alarm rate at alpha 0.01, 50 prompts: {rate}");
    assert!(rate <= 0.01, "false-alarm rate {rate}");
}

#[test]
fn without_logprobs_the_text_decides_and_says_so() {
    let mut records = Vec::new();
    for i in 0..30 {
        let p = format!("p{i}");
        records.push(answer(&p, "a", 0, TEXT, None));
        records.push(answer(&p, "a", CONTROL_REPEAT, TEXT, None));
        let other = if i % 2 == 0 { "The answer is 3" } else { TEXT };
        records.push(answer(&p, "b", 0, other, None));
    }
    let s = decide_run(&records, 30);
    assert_eq!(s.evidence[0].level, Level::Text);
    assert_eq!(s.verdict, IdentityVerdict::Perturbed, "{:?}", s.because);
    assert!(s.because[0].contains("greedy text only"), "{:?}", s.because);
    assert_eq!(s.evidence[0].pair.exact_text, 15);
    assert_eq!(s.evidence[0].control.exact_text, 30);
}

#[test]
fn another_tokenizer_reads_different() {
    let records = run(30, |_, _, _| Some(vec![-0.1]));
    let parity = Parity {
        reference: "a".into(),
        other: "b".into(),
        prompt_tokens_compared: 30,
        prompt_tokens_mismatches: 30,
        prompt_tokens_examples: Vec::new(),
        finish_reason_mismatches: 0,
        finish_reason_examples: Vec::new(),
        mean_reasoning_chars_delta: None,
    };
    let s = decide(
        &records,
        &names(),
        &prompts(30),
        &[parity],
        setting(ALPHA, 30),
    )
    .unwrap();
    assert_eq!(s.verdict, IdentityVerdict::Different, "{:?}", s.because);
    assert!(s.because[0].contains("tokenizer"), "{:?}", s.because);
}

/// A deployment answering each prompt with its own text of `WORDS` words, parting from it at a
/// random word on `jitter` of its answers (other words from there on), as batch nondeterminism
/// does; and, with `early`, parting at the third word on that share of the prompts as well, as
/// a deployment serving a fifth of its answers from another model does.
struct Jittered {
    jitter: f64,
    early: f64,
}

const WORDS: usize = 30;

impl Jittered {
    /// The prompt's own text is the same word repeated (where the answers part is all the test
    /// reads); a parting answer has other words, random, from the word it parts at.
    fn answer(&self, rng: &mut fastrand::Rng) -> String {
        let mut part = (rng.f64() < self.jitter).then(|| rng.usize(..WORDS));
        if rng.f64() < self.early {
            part = Some(part.map_or(2, |k| k.min(2)));
        }
        let mut text = String::with_capacity(5 * WORDS);
        for w in 0..WORDS {
            match part {
                Some(k) if w >= k => {
                    text.push(rng.alphabetic());
                    text.push(rng.alphabetic());
                }
                _ => text.push_str("th"),
            }
            text.push_str("e ");
        }
        text
    }
}

/// How one simulated run of `n` prompts ends: the verdict at the first prompt where a test
/// decides (`perturbed` first when both do), and that prompt; `undecided` at `n`. Each prompt's
/// three answers go through the distance and the tests as `decide` puts them.
fn simulated_run(
    reference: &Jittered,
    other: &Jittered,
    n: usize,
    rng: &mut fastrand::Rng,
) -> (IdentityVerdict, usize) {
    let text = |t: String| Completion {
        answer: Some(Arc::from(t)),
        ..Completion::default()
    };
    let mut tests = Tests::at(setting(ALPHA, n));
    for _ in 0..n {
        let (a0, a1, b0) = (
            text(reference.answer(rng)),
            text(reference.answer(rng)),
            text(other.answer(rng)),
        );
        tests.push(&Comparison::of(&a0, &a1, &b0, Evidence::Text));
    }
    let test = tests.finish();
    match (test.decided_at_prompt, test.identical_at_prompt) {
        (Some(p), Some(i)) if i < p => (IdentityVerdict::Identical, i),
        (Some(p), _) => (IdentityVerdict::Perturbed, p),
        (None, Some(i)) => (IdentityVerdict::Identical, i),
        (None, None) => (IdentityVerdict::Undecided, n),
    }
}

/// Over `runs` simulated runs of up to 300 control prompts: the share read `identical` and
/// `perturbed`, and the median and 90th percentile of the prompts the decided ones took.
fn simulate(other_early: f64, runs: usize, seed: u64) -> (f64, f64, usize, usize) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let reference = Jittered {
        jitter: 0.4,
        early: 0.0,
    };
    let other = Jittered {
        jitter: 0.4,
        early: other_early,
    };
    let (mut identical, mut perturbed, mut took) = (0, 0, Vec::new());
    for _ in 0..runs {
        let (verdict, at) = simulated_run(&reference, &other, 300, &mut rng);
        match verdict {
            IdentityVerdict::Identical => identical += 1,
            IdentityVerdict::Perturbed => perturbed += 1,
            _ => continue,
        }
        took.push(at);
    }
    took.sort_unstable();
    let quantile = |q: f64| {
        took.get((q * took.len() as f64) as usize)
            .copied()
            .unwrap_or(0)
    };
    (
        identical as f64 / runs as f64,
        perturbed as f64 / runs as f64,
        quantile(0.5),
        quantile(0.9),
    )
}

/// Two deployments alike, each parting from its own text at a random word on 40% of its
/// answers (the reference's own repeat parts on about 40% of prompts, a yes/no text distance
/// ties on most): over 1,000 simulated runs, `perturbed` on at most 5% (the test's level), and
/// `identical` within 300 control prompts on most.
#[test]
fn an_exchangeable_jittery_pair_reads_identical_and_rarely_perturbed() {
    let (identical, perturbed, median, p90) = simulate(0.0, 1000, 21);
    eprintln!(
        "exchangeable, 40% jitter: identical {identical}, perturbed {perturbed}; control prompts taken: median {median}, 90th percentile {p90}"
    );
    assert!(perturbed <= ALPHA, "false-positive rate {perturbed}");
    assert!(identical >= 0.85, "identical on {identical} of runs");
    assert!(median <= 150 && p90 <= 250, "median {median}, p90 {p90}");
}

/// The same pair, the candidate also parting at its third word on 20% of prompts: `identical`
/// on at most 5% of 1,000 simulated runs (its excess is above the margin), `perturbed` within
/// 300 control prompts on most.
#[test]
fn a_pair_parting_early_on_a_fifth_of_prompts_rarely_reads_identical() {
    let (identical, perturbed, median, p90) = simulate(0.2, 1000, 22);
    eprintln!(
        "20% early: identical {identical}, perturbed {perturbed}; control prompts taken: median {median}, 90th percentile {p90}"
    );
    assert!(identical <= 0.05, "identical on {identical} of runs");
    assert!(perturbed >= 0.9, "perturbed on {perturbed} of runs");
    assert!(median <= 150 && p90 <= 250, "median {median}, p90 {p90}");
}

/// The first finding: against a reference whose repeat parts on about half the prompts
/// (jittered logprobs), a candidate whose every answer is other words from the first token
/// read `identical` under a distance that counted only the shared prefix. Parting first is now
/// the furthest there is: `perturbed`, within 30 prompts.
#[test]
fn a_candidate_parting_at_the_first_token_reads_perturbed_against_a_jittery_reference() {
    let mut rng = fastrand::Rng::with_seed(5);
    let mut records = Vec::new();
    let n = 30;
    for i in 0..n {
        let p = format!("p{i}");
        let jitter = |rng: &mut fastrand::Rng| {
            let shift = if rng.bool() { rng.f64() * 0.01 } else { 0.0 };
            vec![-0.3 + shift, -0.6 - shift]
        };
        records.push(answer(&p, "a", 0, TEXT, Some(&jitter(&mut rng))));
        let control = if rng.bool() {
            "The letter r appears three times in the word strawberry, counted"
        } else {
            TEXT
        };
        records.push(answer(
            &p,
            "a",
            CONTROL_REPEAT,
            control,
            Some(&jitter(&mut rng)),
        ));
        records.push(answer(
            &p,
            "b",
            0,
            "Strawberry has two r letters",
            Some(&jitter(&mut rng)),
        ));
    }
    let s = decide_run(&records, n);
    assert_eq!(s.verdict, IdentityVerdict::Perturbed, "{:?}", s.because);
    let pair = &s.evidence[0];
    assert_eq!(pair.pair.median_first_divergence, Some(0));
    assert_eq!(pair.test.control_further, 0, "{:?}", pair.test);
}
