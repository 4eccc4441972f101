//! The identity axis against simulated deployments: identical, perturbed by ~1e-3 nats, a
//! jittery reference with the same jitter (the false-positive rate, measured), text only, and
//! another tokenizer.

use std::sync::Arc;

use chrono::Utc;

use super::*;
use crate::endpoint::Completion;
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
    let tokens: Vec<&str> = text.split_inclusive(' ').collect();
    let completion = Completion {
        answer: Some(Arc::from(text)),
        content: Some(Arc::from(text)),
        logprobs: logprobs.map(|lps| {
            tokens
                .iter()
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

fn decide_run(records: &[Answered], n: usize) -> IdentitySummary {
    decide(records, &names(), &prompts(n), &[], ALPHA).unwrap()
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
        let s = decide(&records, &names(), &prompts(n), &[], alpha).unwrap();
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
    let s = decide(&records, &names(), &prompts(30), &[parity], ALPHA).unwrap();
    assert_eq!(s.verdict, IdentityVerdict::Different, "{:?}", s.because);
    assert!(s.because[0].contains("tokenizer"), "{:?}", s.because);
}

#[test]
fn the_e_value_is_one_without_evidence_and_grows_with_wins() {
    assert!((e_value(0, 0) - 1.0).abs() < 1e-9);
    // All wins: (2^(n+1) - 1) / (n + 1), exactly.
    for n in [1usize, 5, 7, 12] {
        let exact = (2f64.powi(n as i32 + 1) - 1.0) / (n as f64 + 1.0);
        assert!((e_value(n, 0) - exact).abs() / exact < 1e-9, "{n}");
    }
    // Three wins and a loss: 16 × 2 × ∫ θ³(1−θ) dθ over [½, 1] = 1.3.
    assert!((e_value(3, 1) - 1.3).abs() < 1e-9, "{}", e_value(3, 1));
    assert!(e_value(6, 0) < 1.0 / ALPHA && e_value(7, 0) >= 1.0 / ALPHA);
    assert!(e_value(10, 10) < 1.0);
}
