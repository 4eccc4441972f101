//! The shipped catalogue through `coherence compare` against fake endpoints that answer every
//! prompt with its reference or its wrong answer: scoring and verdicts agree with the self-test.

use std::collections::HashMap;
use std::path::Path;

use coherence::Exit;
use serde_json::Value;

use crate::common::{catalogue_endpoint as endpoint, shipped_dir, FakeServer};

/// Run compare on the categories written on this branch and return (exit, results.json).
fn compare(a: &FakeServer, b: &FakeServer, out: &Path) -> (Exit, Value) {
    let categories: Vec<&str> = coherence::catalogue::CATEGORIES
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| *c != "code_generation")
        .collect();
    let exit = coherence::main_with_args(vec![
        "coherence".into(),
        "compare".into(),
        "--endpoint".into(),
        format!("a={}", a.url()),
        "--endpoint".into(),
        format!("b={}", b.url()),
        "--catalogue".into(),
        shipped_dir().display().to_string(),
        "--category".into(),
        categories.join(","),
        "--out".into(),
        out.display().to_string(),
        "--retries".into(),
        "0".into(),
        "--quiet".into(),
    ]);
    let results = std::fs::read_to_string(out.join("results.json")).unwrap();
    (exit, serde_json::from_str(&results).unwrap())
}

fn verdicts(results: &Value) -> HashMap<String, String> {
    results["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_string(),
                p["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn references_against_wrong_answers_differ_on_every_prompt() {
    let good = endpoint(|p| &p.reference);
    let bad = endpoint(|p| &p.wrong);
    let dir = tempfile::tempdir().unwrap();
    let (exit, results) = compare(&good, &bad, &dir.path().join("run"));
    assert_eq!(exit, Exit::GateFailed);
    let v = verdicts(&results);
    assert_eq!(v.len(), 88);
    let not_diff: Vec<_> = v.iter().filter(|(_, v)| *v != "diff").collect();
    assert!(not_diff.is_empty(), "{not_diff:?}");
    let a = &results["endpoints"][0];
    assert_eq!(
        (a["name"].as_str(), a["failed"].as_u64()),
        (Some("a"), Some(0))
    );
    // Open-ended prompts have no ground truth: their references are ungraded, not correct.
    let open = 14;
    assert_eq!(a["correct"].as_u64(), Some(88 - open));
    assert_eq!(a["ungraded"].as_u64(), Some(open));
    assert_eq!(results["endpoints"][1]["wrong"].as_u64(), Some(88));
}

#[test]
fn two_endpoints_giving_the_references_are_the_same_on_every_prompt() {
    let one = endpoint(|p| &p.reference);
    let two = endpoint(|p| &p.reference);
    let dir = tempfile::tempdir().unwrap();
    let (exit, results) = compare(&one, &two, &dir.path().join("run"));
    assert_eq!(exit, Exit::Success);
    let v = verdicts(&results);
    assert_eq!(v.len(), 88);
    assert!(v.values().all(|v| v == "same"), "{v:?}");
}
