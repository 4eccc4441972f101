//! Every way an endpoint can misbehave ends as a recorded failure with a clear reason, never a crash.

use std::time::Duration;

use crate::common::*;
use serde_json::json;

/// Run with the reference answering correctly and `b` replying `bad` to the letters question only.
fn with_bad_letters(
    bad: impl Fn(&Incoming) -> Reply + Send + Sync + 'static,
    extra: &[&str],
) -> (
    std::process::Output,
    std::path::PathBuf,
    FakeServer,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let b = FakeServer::start("test-model", move |req| {
        if req.question() == LETTERS_Q {
            bad(req)
        } else {
            Reply::content(correct_answer(&req.question()))
        }
    });
    let mut args = vec!["--only", "count_letters,capital"];
    args.extend_from_slice(extra);
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &args);
    (out, run, b, dir)
}

fn letters_record(run: &std::path::Path) -> serde_json::Value {
    let recs = records(run);
    let mine = records_for(&recs, "count_letters", "b");
    assert_eq!(mine.len(), 1, "one record per attempt sequence");
    mine[0].clone()
}

fn assert_failed(run: &std::path::Path, kind: &str, attempts: u64) -> serde_json::Value {
    let rec = letters_record(run);
    assert_eq!(rec["error"]["kind"], json!(kind), "{rec}");
    assert_eq!(rec["attempts"], json!(attempts), "{rec}");
    let r = results(run);
    let p = prompt(&r, "count_letters");
    assert_eq!(p["verdict"], json!("fail"));
    assert!(p["answers"]["b"]["error"].as_str().unwrap().len() > 5);
    assert_eq!(p["answers"]["b"]["correct"], json!(null));
    assert_eq!(
        prompt(&r, "capital")["verdict"],
        json!("same"),
        "other prompts are unaffected"
    );
    rec
}

#[test]
fn server_errors_are_retried_then_recorded() {
    let (out, run, b, _d) = with_bad_letters(|_| Reply::status(500, "boom"), &["--retries", "2"]);
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let rec = assert_failed(&run, "server_error", 3);
    assert_eq!(rec["http_status"], json!(500));
    assert_eq!(
        b.completion_requests()
            .iter()
            .filter(|r| r.question() == LETTERS_Q)
            .count(),
        3
    );
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("## Errors"), "{report}");
    assert!(report.contains("Incomplete run"));
}

#[test]
fn unavailable_with_retry_after_is_honoured_then_succeeds() {
    let (out, run, _b, _d) = with_bad_letters(
        |req| {
            if req.call == 0 {
                Reply::status(503, "warming up").header("Retry-After", "1")
            } else {
                Reply::content("3")
            }
        },
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let rec = letters_record(&run);
    assert_eq!(rec["attempts"], json!(2));
    assert_eq!(rec["error"], json!(null));
    assert!(
        rec["elapsed_ms"].as_f64().unwrap() >= 950.0,
        "waited for Retry-After: {rec}"
    );
}

#[test]
fn rate_limits_are_retried() {
    let (out, run, _b, _d) = with_bad_letters(
        |req| {
            if req.call < 2 {
                Reply::status(429, "slow down").header("Retry-After", "0")
            } else {
                Reply::content("3")
            }
        },
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(letters_record(&run)["attempts"], json!(3));
}

#[test]
fn rate_limit_that_never_lifts_is_recorded() {
    let (out, run, _b, _d) = with_bad_letters(
        |_| Reply::status(429, "slow down").header("Retry-After", "0"),
        &["--retries", "1"],
    );
    assert_eq!(exit_code(&out), 3);
    assert_failed(&run, "rate_limited", 2);
}

#[test]
fn client_errors_are_not_retried() {
    let (out, run, _b, _d) =
        with_bad_letters(|_| Reply::status(400, "bad request: unknown field"), &[]);
    assert_eq!(exit_code(&out), 3);
    let rec = assert_failed(&run, "http_status", 1);
    assert!(rec["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown field"));
}

#[test]
fn a_hang_times_out() {
    let (out, run, _b, _d) =
        with_bad_letters(|_| Reply::hang(), &["--timeout", "1", "--retries", "1"]);
    assert_eq!(exit_code(&out), 3);
    let rec = assert_failed(&run, "timeout", 2);
    assert!(rec["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--timeout"));
}

#[test]
fn connection_resets_are_retried_then_recorded() {
    let (out, run, _b, _d) = with_bad_letters(|_| Reply::reset(), &["--retries", "1"]);
    assert_eq!(exit_code(&out), 3);
    assert_failed(&run, "connect", 2);
}

#[test]
fn a_reset_followed_by_success_recovers() {
    let (out, run, _b, _d) = with_bad_letters(
        |req| {
            if req.call == 0 {
                Reply::reset()
            } else {
                Reply::content("3")
            }
        },
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(letters_record(&run)["attempts"], json!(2));
}

#[test]
fn invalid_json_is_a_recorded_failure() {
    let (out, run, _b, _d) = with_bad_letters(|_| Reply::invalid_json(), &[]);
    assert_eq!(exit_code(&out), 3);
    let rec = assert_failed(&run, "invalid_json", 1);
    assert_eq!(
        rec["raw_body"],
        json!("{\"choices\": [ {\"message\": "),
        "the raw body is kept"
    );
}

#[test]
fn an_html_error_page_is_named_as_such() {
    let (out, run, _b, _d) = with_bad_letters(|_| Reply::html(200), &[]);
    assert_eq!(exit_code(&out), 3);
    assert_failed(&run, "html_page", 1);
    let (out, run, _b, _d) = with_bad_letters(|_| Reply::html(502), &["--retries", "1"]);
    assert_eq!(exit_code(&out), 3);
    let rec = assert_failed(&run, "server_error", 2);
    assert!(rec["error"]["message"].as_str().unwrap().contains("502"));
}

#[test]
fn empty_choices_and_null_content_are_failures() {
    let (out, run, _b, _d) = with_bad_letters(|_| Reply::empty_choices(), &[]);
    assert_eq!(exit_code(&out), 3);
    assert_failed(&run, "no_choices", 1);
    let (out, run, _b, _d) = with_bad_letters(|_| Reply::null_content(), &[]);
    assert_eq!(exit_code(&out), 3);
    assert_failed(&run, "null_content", 1);
}

#[test]
fn reasoning_that_eats_the_budget_is_flagged_not_an_incomplete_run() {
    let (out, run, _b, _d) = with_bad_letters(
        |req| {
            Reply::reasoning_only(
                "Let me count the letters one by one...",
                req.max_tokens().unwrap(),
            )
        },
        &["--max-tokens", "64", "--reasoning-retry-budget", "0"],
    );
    assert_eq!(
        exit_code(&out),
        1,
        "a fail verdict, but the run is complete: {}",
        stderr(&out)
    );
    let rec = assert_failed(&run, "reasoning_consumed_budget", 1);
    assert_eq!(
        rec["reasoning"],
        json!("Let me count the letters one by one...")
    );
    assert_eq!(rec["finish_reason"], json!("length"));
    assert!(rec["error"]["message"]
        .as_str()
        .unwrap()
        .contains("reasoning used the whole budget (64 tokens)"));
    assert_eq!(results(&run)["complete"], json!(true));
}

#[test]
fn a_huge_body_is_cut_off_at_the_cap() {
    let (out, run, _b, _d) = with_bad_letters(
        |_| Reply::huge(100 * 1024 * 1024),
        &["--max-response-bytes", "1048576", "--retries", "0"],
    );
    assert_eq!(exit_code(&out), 3);
    let rec = assert_failed(&run, "body_too_large", 1);
    assert!(rec["error"]["message"]
        .as_str()
        .unwrap()
        .contains("1048576"));
    assert!(std::fs::metadata(run.join("records.jsonl")).unwrap().len() < 1024 * 1024);
}

#[test]
fn latency_is_recorded() {
    let (out, run, _b, _d) = with_bad_letters(
        |_| Reply::content("3").after(Duration::from_millis(300)),
        &[],
    );
    assert_eq!(exit_code(&out), 0);
    let rec = letters_record(&run);
    assert!(rec["latency_ms"].as_f64().unwrap() >= 290.0, "{rec}");
}
