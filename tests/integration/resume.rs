//! Interrupted and failed runs keep every record and resume sending only what is missing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;

fn key(r: &serde_json::Value) -> (String, String, u64, u64) {
    (
        r["prompt"].as_str().unwrap().to_string(),
        r["endpoint"].as_str().unwrap().to_string(),
        r["max_tokens"].as_u64().unwrap(),
        r["repeat"].as_u64().unwrap(),
    )
}

/// Two endpoints that answer every question correctly after 120 ms, and the arguments of a run
/// of 5 prompts x 2 endpoints x 4 repeats against them, one request at a time, into `dir/run`.
fn slow_run(dir: &Path) -> (FakeServer, FakeServer, Vec<String>, PathBuf) {
    let slow = || {
        FakeServer::start("m", |req| {
            Reply::content(correct_answer(&req.question())).after(Duration::from_millis(120))
        })
    };
    let (a, b) = (slow(), slow());
    let run = dir.join("run");
    let mut args = compare_args(&write_catalogue(dir), &[("a", &a), ("b", &b)], &run);
    args.extend(["--repeats", "4", "--concurrency", "1", "--quiet"].map(String::from));
    (a, b, args, run)
}

#[test]
fn sigkill_midway_then_resume_sends_only_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, args, run) = slow_run(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(&args)
        .env_remove("OPENAI_API_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let lines = std::fs::read_to_string(run.join("records.jsonl"))
            .map(|s| s.lines().count())
            .unwrap_or(0);
        if lines >= 8 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "run made no progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = records(&run);
    assert!(before.len() < 40, "killed before the end");
    let completed: HashSet<_> = before.iter().map(key).collect();
    assert_eq!(
        completed.len(),
        before.len(),
        "no duplicate records before resume"
    );

    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let after = records(&run);
    let keys: HashSet<_> = after.iter().map(key).collect();
    assert_eq!(
        after.len(),
        40,
        "exactly one record per key: 5 prompts x 2 endpoints x 4 repeats"
    );
    assert_eq!(keys.len(), 40);
    // What had completed was not sent again: each server saw its 20 requests plus at most the one
    // that was in flight when the run was killed.
    for server in [&a, &b] {
        let n = server.completion_requests().len();
        assert!((20..=21).contains(&n), "{n} requests");
    }
    let r = results(&run);
    assert_eq!(r["summary"]["same"], json!(5));
    assert_eq!(r["complete"], json!(true));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], json!("finished"));
    assert_eq!(manifest["invocations"].as_array().unwrap().len(), 2);
}

/// Two processes on one run folder: a second `compare --resume` (and a `score`, which writes
/// results.json) is refused with exit 2 naming the first one's pid, sending nothing; once the
/// first is killed, its lock is gone with it and a resume completes the run.
#[cfg(unix)]
#[test]
fn a_run_folder_in_use_is_refused_to_a_second_process_until_the_first_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, args, run) = slow_run(dir.path());
    let mut first = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(&args)
        .env_remove("OPENAI_API_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while records_so_far(&run) < 2 {
        assert!(started.elapsed() < Duration::from_secs(20), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    let holder = format!("in use by pid {}", first.id());
    let second = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&second), 2, "{}", stderr(&second));
    assert!(stderr(&second).contains(&holder), "{}", stderr(&second));
    let run_s = run.display().to_string();
    let score = coherence(&["score", &run_s], dir.path(), &[]);
    assert_eq!(exit_code(&score), 2, "{}", stderr(&score));
    assert!(stderr(&score).contains(&holder), "{}", stderr(&score));

    first.kill().unwrap(); // SIGKILL: no chance to release anything
    first.wait().unwrap();
    std::thread::sleep(Duration::from_millis(200)); // what it wrote before dying has arrived
    let sent = a.completion_requests().len() + b.completion_requests().len();
    let kept = records(&run).len();
    assert!(kept < 40, "killed before the end ({kept} answers kept)");
    let third = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&third), 0, "{}", stderr(&third));
    assert_eq!(records(&run).len(), 40);
    assert_eq!(results(&run)["complete"], json!(true));
    // The refused processes sent nothing: the resume sent exactly what was missing.
    let resent = a.completion_requests().len() + b.completion_requests().len() - sent;
    assert_eq!(resent, 40 - kept);
}

/// The records journalled in `run` so far.
fn records_so_far(run: &Path) -> usize {
    std::fs::read_to_string(run.join("records.jsonl"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_torn_last_line_is_tolerated_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--only", "capital,eggs"],
    );
    assert_eq!(exit_code(&out), 0);
    // Drop the last record and leave half of it behind, as a kill during the write would.
    let text = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let last = lines.pop().unwrap();
    let torn = format!("{}\n{}", lines.join("\n"), &last[..last.len() / 2]);
    std::fs::write(run.join("records.jsonl"), torn).unwrap();

    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let after = records(&run); // every line parses again
    assert_eq!(after.len(), 4);
    assert_eq!(
        a.completion_requests().len() + b.completion_requests().len(),
        5,
        "only the torn record was re-sent"
    );
}

#[test]
fn failed_requests_are_resent_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let healthy = Arc::new(AtomicBool::new(false));
    let flag = healthy.clone();
    let a = correct_server();
    let b = FakeServer::start("m", move |req| {
        if req.question() == EGGS_Q && !flag.load(Ordering::SeqCst) {
            Reply::status(503, "overloaded")
        } else {
            Reply::content(correct_answer(&req.question()))
        }
    });
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--retries", "1"]);
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    assert!(stdout(&out).contains("continue with --resume"));
    assert_eq!(prompt(&results(&run), "eggs")["verdict"], json!("fail"));

    healthy.store(true, Ordering::SeqCst);
    let sent_before = a.completion_requests().len();
    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        a.completion_requests().len(),
        sent_before,
        "nothing resent to the healthy endpoint"
    );
    let r = results(&run);
    assert_eq!(prompt(&r, "eggs")["verdict"], json!("same"));
    assert_eq!(r["complete"], json!(true));
    assert_eq!(
        records_for(&records(&run), "eggs", "b").len(),
        2,
        "both attempts stay in the journal"
    );
}

#[test]
fn a_rerun_at_a_larger_budget_replaces_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let b = FakeServer::start("m", |req| {
        if req.question() == CAPITAL_Q && req.max_tokens() < Some(4096) {
            Reply::content("The capital of France is")
        } else {
            Reply::content(correct_answer(&req.question()))
        }
    });
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--fail-on", "diff>0"],
    );
    assert_eq!(exit_code(&out), 1);
    assert_eq!(prompt(&results(&run), "capital")["verdict"], json!("diff"));

    let out = resume(
        dir.path(),
        &run,
        &["--only", "capital", "--max-tokens", "4096"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    let p = prompt(&r, "capital");
    assert_eq!(p["verdict"], json!("same"));
    assert_eq!(p["answers"]["b"]["max_tokens"], json!(4096));
    assert_eq!(
        r["prompts"].as_array().unwrap().len(),
        5,
        "the report still covers the whole run"
    );
    let recs = records(&run);
    let budgets: Vec<u64> = records_for(&recs, "capital", "b")
        .iter()
        .map(|r| r["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(budgets, [1024, 4096]);
}

#[test]
fn out_refuses_to_overwrite_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, _) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--only", "capital"]);
    assert_eq!(exit_code(&out), 0);
    let (out, _) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--only", "capital"]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("--resume"), "{}", stderr(&out));
}

#[test]
fn sigterm_stops_sending_keeps_every_record_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let (_a, _b, args, run) = slow_run(dir.path());
    let journal = run.join("records.jsonl");
    let lines = || {
        std::fs::read_to_string(&journal)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };
    let (out, took) = sigterm_when(&args, "the run made no progress", || lines() >= 4);
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    assert!(took < Duration::from_secs(5), "stops promptly ({took:?})");
    assert!(stdout(&out)
        .contains("interrupted: every finished request is saved; continue with --resume"));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], json!("interrupted"));
    let kept = records(&run).len();
    assert!((4..40).contains(&kept), "{kept} records");
    assert!(
        run.join("report.md").exists(),
        "the report covers what arrived"
    );
    assert_eq!(results(&run)["complete"], json!(false));

    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(records(&run).len(), 40);
}

#[test]
fn a_plain_resume_keeps_the_budget_the_run_was_started_with() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--only", "capital,eggs", "--max-tokens", "300"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let sent = a.completion_requests().len() + b.completion_requests().len();
    assert_eq!(sent, 4);

    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        a.completion_requests().len() + b.completion_requests().len(),
        sent,
        "a complete run resumed without --max-tokens sends nothing"
    );
    assert!(records(&run).iter().all(|r| r["max_tokens"] == json!(300)));
    let r = results(&run);
    assert_eq!(r["sampling"]["max_tokens_override"], json!(300));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("max_tokens 300 for every prompt"),
        "the header states the budget the requests used"
    );
}

#[test]
fn a_different_budget_on_resume_is_sent_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--only", "capital,eggs", "--max-tokens", "300"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let out = resume(dir.path(), &run, &["--only", "eggs", "--max-tokens", "500"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    assert_eq!(prompt(&r, "eggs")["answers"]["b"]["max_tokens"], json!(500));
    assert_eq!(r["sampling"]["other_budgets"], json!({"500": 2}));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("read at another budget: 2 answers at 500"),
        "the report shows the other budget"
    );
    // A later plain resume keeps the run's own budget rule and sends nothing.
    let sent = a.completion_requests().len();
    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(a.completion_requests().len(), sent);
}
