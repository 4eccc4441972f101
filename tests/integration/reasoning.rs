//! A reasoning endpoint that spends a small budget on reasoning is re-run automatically at a
//! larger budget; both attempts stay in the journal and the report says so.

use crate::common::*;
use serde_json::json;

/// Like the seed's "full" deployment: below 4096 tokens of budget, the reasoning eats everything.
fn reasoning_server() -> FakeServer {
    FakeServer::start("reasoner", |req| {
        let budget = req.max_tokens().unwrap_or(0);
        if req.question() == LETTERS_Q && budget < 4096 {
            Reply::reasoning_only(
                "Let me spell it out: s, t, r, a, w, b, e, r, r, y...",
                budget,
            )
        } else {
            Reply::with_reasoning(
                correct_answer(&req.question()),
                "Spelling it out: three r's.",
            )
        }
    })
}

#[test]
fn reasoning_that_eats_the_budget_is_retried_at_a_larger_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), reasoning_server());
    let (out, run) = compare(dir.path(), &[("spark", &a), ("full", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "the retry answered: {}", stderr(&out));

    let recs = records(&run);
    let letters = records_for(&recs, "count_letters", "full");
    assert_eq!(letters.len(), 2, "both attempts are kept");
    assert_eq!(letters[0]["max_tokens"], json!(1024));
    assert_eq!(
        letters[0]["error"]["kind"],
        json!("reasoning_consumed_budget")
    );
    assert_eq!(letters[1]["max_tokens"], json!(4096));
    assert_eq!(letters[1]["error"], json!(null));
    assert!(letters[1]["note"]
        .as_str()
        .unwrap()
        .contains("whole budget of 1024 tokens"));
    assert_eq!(
        b.completion_requests()
            .iter()
            .filter(|r| r.question() == LETTERS_Q)
            .count(),
        2
    );
    assert_eq!(
        records_for(&recs, "count_letters", "spark").len(),
        1,
        "the other endpoint is not re-run"
    );

    let r = results(&run);
    let p = prompt(&r, "count_letters");
    assert_eq!(p["verdict"], json!("same"));
    assert_eq!(p["answers"]["full"]["max_tokens"], json!(4096));
    assert!(p["answers"]["full"]["note"].is_string());
    assert_eq!(r["endpoints"][1]["reasoning_retries"], json!(1));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("**Reasoning retries:**") && report.contains("`full` on 1 prompt(s)"),
        "{report}"
    );
}

#[test]
fn the_retry_can_be_disabled_and_the_prompt_then_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), reasoning_server());
    let (out, run) = compare(
        dir.path(),
        &[("spark", &a), ("full", &b)],
        &["--reasoning-retry-budget", "0"],
    );
    assert_eq!(exit_code(&out), 1, "a fail verdict fails the default gate");
    let r = results(&run);
    assert_eq!(prompt(&r, "count_letters")["verdict"], json!("fail"));
    assert!(prompt(&r, "count_letters")["answers"]["full"]["error"]
        .as_str()
        .unwrap()
        .contains("reasoning consumed the budget"));
    assert_eq!(
        records_for(&records(&run), "count_letters", "full").len(),
        1
    );
}

#[test]
fn resume_finishes_a_retry_that_never_happened() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), reasoning_server());
    let (out, run) = compare(
        dir.path(),
        &[("spark", &a), ("full", &b)],
        &["--reasoning-retry-budget", "0"],
    );
    assert_eq!(exit_code(&out), 1);
    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        prompt(&results(&run), "count_letters")["verdict"],
        json!("same")
    );
    assert_eq!(
        records(&run).len(),
        11,
        "10 planned records plus the one retry"
    );
}
