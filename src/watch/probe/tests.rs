//! Choosing a probe from a simulated baseline: near-ties first, confident prompts next, graded
//! items spread over families, nothing chosen from the control answer, and a clear refusal
//! when the baseline has no control.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::Utc;

use super::*;
use crate::catalogue::generator::generate;
use crate::catalogue::SuiteChoice;
use crate::endpoint::LogprobToken;
use crate::run::record::Answered;

/// An answer whose one token has the given gap to its runner-up (None: no logprobs).
fn answer(prompt: &str, repeat: u32, margin: Option<f64>) -> Answered {
    let completion = Completion {
        answer: Some(Arc::from("42")),
        logprobs: margin.map(|m| {
            vec![LogprobToken {
                token: "42".into(),
                logprob: Some(-0.1),
                top: vec![("42".into(), -0.1), ("41".into(), -0.1 - m)],
            }]
        }),
        ..Completion::default()
    };
    Answered {
        prompt: Arc::from(prompt),
        endpoint: Arc::from("ref"),
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

fn catalogue(items: usize) -> Catalogue {
    Catalogue::new(
        PathBuf::new(),
        generate(7, items),
        "hash".into(),
        SuiteChoice::default(),
    )
}

/// Every prompt answered (margin i/100 for the i-th) with a control answer on the first
/// `controlled`.
fn baseline(cat: &Catalogue, controlled: usize) -> (Vec<Answered>, Vec<String>) {
    let ids: Vec<String> = cat.prompts.iter().map(|p| p.id.clone()).collect();
    let mut records = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        records.push(answer(id, 0, Some(i as f64 / 100.0)));
        if i < controlled {
            records.push(answer(id, CONTROL_REPEAT, Some(5.0)));
        }
    }
    (records, ids)
}

#[test]
fn border_prompts_come_first_then_the_most_confident_then_graded_items_over_families() {
    let cat = catalogue(100);
    let (records, ids) = baseline(&cat, 60);
    let probe = choose(&records, "ref", &ids, &cat, 50).unwrap();
    assert_eq!(probe.items.len(), 50);
    assert_eq!(probe.count(Role::Graded), 10);
    assert_eq!(probe.count(Role::Border), 20);
    assert_eq!(probe.count(Role::Stable), 20);
    let families: BTreeSet<&str> = probe
        .items
        .iter()
        .filter(|(_, r)| *r == Role::Graded)
        .map(|(id, _)| cat.get(id).unwrap().category.as_str())
        .collect();
    assert_eq!(
        families.len(),
        10,
        "one graded item from each of 10 families"
    );
    let index = |id: &str| ids.iter().position(|i| i == id).unwrap();
    let border: Vec<usize> = probe
        .items
        .iter()
        .filter(|(_, r)| *r == Role::Border)
        .map(|(id, _)| index(id))
        .collect();
    let stable: Vec<usize> = probe
        .items
        .iter()
        .filter(|(_, r)| *r == Role::Stable)
        .map(|(id, _)| index(id))
        .collect();
    assert!(
        border.iter().max() < stable.iter().min(),
        "near-ties (small margins) are border, confident ones stable: {border:?} {stable:?}"
    );
    assert!(
        border.iter().chain(&stable).all(|i| *i < 60),
        "identity prompts all have a control"
    );
    let order: Vec<usize> = probe.items.iter().map(|(id, _)| index(id)).collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "the baseline's order"
    );
    assert!(probe.notes.is_empty(), "{:?}", probe.notes);
}

#[test]
fn the_control_answer_never_steers_the_choice() {
    let cat = catalogue(80);
    let (mut records, ids) = baseline(&cat, 80);
    let before = choose(&records, "ref", &ids, &cat, 30).unwrap();
    for r in records.iter_mut().filter(|r| r.repeat == CONTROL_REPEAT) {
        *r = answer(&r.prompt, CONTROL_REPEAT, Some(fastrand::f64()));
    }
    assert_eq!(choose(&records, "ref", &ids, &cat, 30).unwrap(), before);
}

#[test]
fn a_baseline_without_a_control_is_refused_saying_how_to_make_one() {
    let cat = catalogue(20);
    let (records, ids) = baseline(&cat, 0);
    let err = choose(&records, "ref", &ids, &cat, 50).unwrap_err();
    assert!(err.contains("compare --control N"), "{err}");
}

#[test]
fn a_small_baseline_gives_a_smaller_probe_and_says_so() {
    let cat = catalogue(30);
    let (records, ids) = baseline(&cat, 12);
    let probe = choose(&records, "ref", &ids, &cat, 50).unwrap();
    assert!(probe.items.len() < 50);
    assert!(probe
        .notes
        .iter()
        .any(|n| n.contains("answered 12 prompts twice")));
    assert!(probe.notes.iter().any(|n| n.contains("needed before")));
}

#[test]
fn without_logprobs_the_controlled_prompts_are_taken_in_order() {
    let cat = catalogue(40);
    let ids: Vec<String> = cat.prompts.iter().map(|p| p.id.clone()).collect();
    let records: Vec<Answered> = ids
        .iter()
        .flat_map(|id| [answer(id, 0, None), answer(id, CONTROL_REPEAT, None)])
        .collect();
    let probe = choose(&records, "ref", &ids, &cat, 20).unwrap();
    assert_eq!(probe.items.len(), 20);
    assert!(probe.notes[0].contains("no top-2 logprobs"));
}

#[test]
fn the_margin_is_the_gap_to_the_best_other_token() {
    let c = answer("p", 0, Some(0.25)).completion;
    assert!((smallest_margin(&c).unwrap() - 0.25).abs() < 1e-12);
    assert_eq!(smallest_margin(&answer("p", 0, None).completion), None);
}
