//! `compare --suite long --logprobs`: each long item's passage teacher-forced on every endpoint
//! and bucketed by token position, against the fake tiny model of the teacher-forcing tests. A
//! twin reads 0 KL in every bucket, a fake whose distributions change only past position 600
//! reads 0 before it and more after, the reference's control reads 0, a resumed run sends no
//! scoring twice, a failed scoring makes the run incomplete and is sent again on resume, and a
//! dry run counts the passages' requests and prompt tokens.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::common::*;
use crate::teacher_forcing::{reply, server, Fake, Style, BASE};

/// A passage (the scored text of a plain echo request) is longer than this; the self-check and
/// probe texts are not.
const PASSAGE_CHARS: usize = 500;

fn long_logprobs_run(
    dir: &std::path::Path,
    servers: &[(&str, &FakeServer)],
    extra: &[&str],
) -> (std::process::Output, std::path::PathBuf) {
    let out = dir.join("run");
    let mut args: Vec<String> = ["compare", "--suite", "long", "--logprobs"]
        .map(String::from)
        .to_vec();
    for (name, server) in servers {
        args.push("--endpoint".into());
        args.push(format!("{name}={}", server.url()));
    }
    args.extend(["--out".to_string(), out.display().to_string()]);
    args.extend(
        [
            "--backoff-ms",
            "10",
            "--quiet",
            "--depths",
            "50",
            "--per-cell",
            "1",
        ]
        .map(String::from),
    );
    args.extend(extra.iter().map(|s| s.to_string()));
    (coherence(&args, dir, &[]), out)
}

fn tokens_figures(r: &Value) -> &Value {
    &r["long_context"]["token_agreement"]
}

fn pair<'a>(r: &'a Value, other: &str) -> &'a Value {
    tokens_figures(r)["pairs"]
        .as_array()
        .unwrap_or_else(|| panic!("no pairs: {}", tokens_figures(r)))
        .iter()
        .find(|p| p["other"] == other)
        .unwrap()
}

fn buckets(pair: &Value) -> Vec<(u64, f64, f64)> {
    pair["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["from_tokens"].as_u64().unwrap(),
                b["mean_kld"].as_f64().unwrap(),
                b["top1_agreement"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn schema_errors(r: &Value) -> Vec<String> {
    let schema: Value =
        serde_json::from_str(include_str!("../../src/report/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(r)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn a_twin_reads_zero_in_every_bucket_and_a_late_change_reads_only_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a_scored) = server(BASE);
    let (twin, twin_scored) = server(BASE);
    let (late, _) = server(Fake {
        drift: Some((600, -0.9)),
        ..BASE
    });
    let (llama_cpp, _) = server(Fake {
        style: Style::LlamaCpp,
        ..BASE
    });
    let (out, run) = long_logprobs_run(
        dir.path(),
        &[
            ("a", &a),
            ("twin", &twin),
            ("late", &late),
            ("cpp", &llama_cpp),
        ],
        &["--lengths", "1024"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    assert!(schema_errors(&r).is_empty(), "{:#?}", schema_errors(&r));
    let figures = tokens_figures(&r);
    assert_eq!(figures["passages"], 1, "{figures}");
    assert_eq!(figures["problems"], serde_json::json!([]), "{figures}");
    let twin_buckets = buckets(pair(&r, "twin"));
    assert_eq!(
        twin_buckets.iter().map(|b| b.0).collect::<Vec<_>>(),
        [0, 512],
        "a passage of 1024 planned tokens: {twin_buckets:?}"
    );
    assert!(
        twin_buckets.iter().all(|b| b.1 == 0.0 && b.2 == 1.0),
        "{twin_buckets:?}"
    );
    // The same model listed one position off (llama-cpp-python's echo), read at its offset.
    let cpp_buckets = buckets(pair(&r, "cpp"));
    assert!(
        cpp_buckets.len() == 2 && cpp_buckets.iter().all(|b| b.1 == 0.0 && b.2 == 1.0),
        "{cpp_buckets:?}"
    );
    let late_buckets = buckets(pair(&r, "late"));
    assert_eq!(late_buckets[0].1, 0.0, "{late_buckets:?}");
    assert!(late_buckets[1].1 > 0.0, "{late_buckets:?}");
    let statement = pair(&r, "late")["statement"].as_str().unwrap();
    assert!(
        statement.starts_with("mean KL grows with position: 0.0000 nats at positions 0–512"),
        "{statement}"
    );
    let control = &figures["control"];
    assert_eq!(control["other"], "a");
    assert_eq!(control["passages_compared"], 1);
    assert!(buckets(control).iter().all(|b| b.1 == 0.0), "{control}");
    // One scoring per passage per endpoint and the reference's control, beside each endpoint's
    // plain-text mode probe and three self-checks.
    assert_eq!(*a_scored.lock().unwrap(), 2 + 1 + 3);
    assert_eq!(*twin_scored.lock().unwrap(), 1 + 1 + 3);
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("Token-level evidence by position"), "{md}");
    assert!(
        md.contains("`late` against `a`, 1 passage: mean KL grows"),
        "{md}"
    );
    assert!(md.contains("| 0–512 |"), "{md}");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("control mean KL"));
}

#[test]
fn a_resumed_run_sends_no_passage_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a_scored) = server(BASE);
    let (b, b_scored) = server(BASE);
    let servers = [("a", &a), ("b", &b)];
    let flags = ["--lengths", "256,512", "--concurrency", "1"];
    let (out, run) = long_logprobs_run(dir.path(), &servers, &flags);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let first = results(&run);
    assert_eq!(tokens_figures(&first)["passages"], 2);
    // The controls follow the other passages, so no passage is sent twice in a row (a server
    // keeping its last prompt's state would read it back).
    let passages: Vec<String> = a
        .completion_requests()
        .iter()
        .filter_map(|r| r.body["prompt"].as_str().map(String::from))
        .filter(|p| p.len() > PASSAGE_CHARS)
        .collect();
    assert_eq!(passages.len(), 4);
    assert_ne!(passages[0], passages[1]);
    assert_eq!(passages[2..], passages[..2]);
    let before = (*a_scored.lock().unwrap(), *b_scored.lock().unwrap());
    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        (*a_scored.lock().unwrap(), *b_scored.lock().unwrap()),
        before
    );
    assert_eq!(
        tokens_figures(&results(&run)),
        tokens_figures(&first),
        "the same figures from the journal"
    );
    // Re-scored from the files alone, too.
    let out = coherence(&["score", run.to_str().unwrap()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(tokens_figures(&results(&run)), tokens_figures(&first));
}

#[test]
fn a_failed_passage_scoring_makes_the_run_incomplete_and_is_sent_again_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let failing = Arc::new(AtomicBool::new(true));
    let passages_scored = Arc::new(Mutex::new(0));
    let (fail, count) = (failing.clone(), passages_scored.clone());
    let scored = Mutex::new(0);
    let a = FakeServer::start("m", move |req| {
        let long = req.body["echo"] == true
            && req.body["prompt"].as_str().unwrap_or_default().len() > PASSAGE_CHARS;
        if long {
            *count.lock().unwrap() += 1;
            if fail.load(Ordering::SeqCst) {
                return Reply::status(400, "no room for that");
            }
        }
        reply(&BASE, &req.body, &scored)
    });
    let (b, _) = server(BASE);
    let servers = [("a", &a), ("b", &b)];
    let (out, run) = long_logprobs_run(dir.path(), &servers, &["--lengths", "256"]);
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let r = results(&run);
    assert_eq!(r["complete"], false);
    let problems = tokens_figures(&r)["problems"].as_array().unwrap().clone();
    assert_eq!(
        problems.len(),
        2,
        "the passage and its control: {problems:?}"
    );
    assert!(problems
        .iter()
        .all(|p| p["kind"] == "request" && p["endpoint"] == "a"));
    failing.store(false, Ordering::SeqCst);
    let sent_before = *passages_scored.lock().unwrap();
    let out = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        *passages_scored.lock().unwrap() - sent_before,
        2,
        "the passage and the control on a, nothing on b"
    );
    let r = results(&run);
    assert_eq!(r["complete"], true);
    assert_eq!(tokens_figures(&r)["problems"], serde_json::json!([]));
    assert_eq!(pair(&r, "b")["passages_compared"], 1);
}

#[test]
fn a_dry_run_counts_the_passage_scorings_and_their_prompt_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = server(BASE);
    let (b, _) = server(BASE);
    let flags = ["--lengths", "256,1k", "--dry-run", "--json"];
    let (out, _) = long_logprobs_run(dir.path(), &[("a", &a), ("b", &b)], &flags);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = coherence(
        &[
            "prompts",
            "list",
            "--suite",
            "long",
            "--lengths",
            "256,1k",
            "--depths",
            "50",
            "--per-cell",
            "1",
            "--json",
        ],
        dir.path(),
        &[],
    );
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    // A long item's planned tokens are the length its id names (the dry run builds no text).
    let planned: u64 = listed["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["context_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(planned, 256 + 1024);
    // Two passages, each on both endpoints and once more on the reference.
    assert_eq!(plan["long_passage_requests"], 2 * 3);
    assert_eq!(plan["long_passage_prompt_tokens"], planned * 3);
    assert_eq!(
        plan["teacher_forcing_requests"],
        (2 + 2 * 7) * 2 + 2 * 3,
        "{plan}"
    );
    assert!(a.requests().is_empty() && b.requests().is_empty());
}
