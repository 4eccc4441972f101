//! `coherence smoke`: models listing plus the exact-reply chat; pass, wrong reply, empty reply
//! from a reasoning endpoint, unreachable endpoint, several endpoints, and secrets.

use crate::common::{coherence, exit_code, stderr, stdout, FakeServer, Reply};
use serde_json::Value;

const ASK: &str = "Reply exactly: COHERENCE SMOKE OK";

fn server(reply: &'static str) -> FakeServer {
    FakeServer::start("smoke-model", move |req| {
        assert_eq!(req.question(), ASK);
        assert_eq!(req.body["stream"], false);
        assert_eq!(req.body["temperature"], 0.0);
        Reply::content(reply)
    })
}

fn smoke(endpoints: &[(&str, &FakeServer)], extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["smoke".into()];
    for (name, s) in endpoints {
        args.push("--endpoint".into());
        args.push(format!("{name}={}", s.url()));
    }
    args.extend(["--backoff-ms".into(), "10".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    coherence(&refs, dir.path(), &[])
}

#[test]
fn an_exact_reply_passes_and_the_model_listing_is_shown() {
    let s = server("  COHERENCE SMOKE OK\n");
    let out = smoke(&[("spark", &s)], &[]);
    assert_eq!(exit_code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("models smoke-model, max_model_len 4096"),
        "{text}"
    );
    assert!(text.contains("PASS"), "{text}");
    let sent = s.completion_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body["model"], "smoke-model");
    assert!(s
        .requests()
        .iter()
        .any(|r| r.method == "GET" && r.path == "/v1/models"));
}

#[test]
fn a_think_block_before_the_reply_still_passes() {
    let s = server("<think>the user wants the phrase</think>COHERENCE SMOKE OK");
    assert_eq!(exit_code(&smoke(&[("r", &s)], &[])), 0);
}

#[test]
fn anything_but_the_exact_phrase_fails_with_the_reply() {
    for reply in [
        "COHERENCE SMOKE OK.",
        "Sure! COHERENCE SMOKE OK",
        "coherence smoke ok",
    ] {
        let s = server(reply);
        let out = smoke(&[("spark", &s)], &[]);
        assert_eq!(exit_code(&out), 1, "{reply}: {}", stdout(&out));
        let text = stdout(&out);
        assert!(
            text.contains("FAIL: expected exactly `COHERENCE SMOKE OK`, got"),
            "{text}"
        );
        assert!(text.contains(reply), "{text}");
    }
}

#[test]
fn a_reasoning_endpoint_that_spends_the_budget_fails_with_advice() {
    let s = FakeServer::start("thinker", |_| {
        Reply::reasoning_only("Let me think about", 16)
    });
    let out = smoke(&[("full", &s)], &["--max-tokens", "16"]);
    assert_eq!(exit_code(&out), 1);
    let text = stdout(&out);
    assert!(text.contains("reasoning used the whole budget"), "{text}");
    assert!(text.contains("--max-tokens"), "{text}");
    assert_eq!(s.completion_requests()[0].max_tokens(), Some(16));
}

#[test]
fn an_unreachable_endpoint_exits_3_with_the_reason() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("gone=http://127.0.0.1:{port}/v1");
    let out = coherence(
        &["smoke", "--endpoint", &url, "--retries", "0"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 3);
    assert!(
        stdout(&out).contains("FAIL: GET /models failed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn every_endpoint_is_checked_and_json_shows_each_verdict() {
    let good = server("COHERENCE SMOKE OK");
    let bad = server("COHERENCE SMOKE KO");
    let out = smoke(&[("a", &good), ("b", &bad)], &["--json"]);
    assert_eq!(exit_code(&out), 1);
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["passed"], false);
    assert_eq!(json["endpoints"][0]["verdict"], "pass");
    assert_eq!(json["endpoints"][0]["max_model_len"], 4096);
    assert_eq!(json["endpoints"][1]["verdict"], "wrong_reply");
    assert_eq!(json["endpoints"][1]["reply"], "COHERENCE SMOKE KO");
}

#[test]
fn the_api_key_is_sent_but_never_printed() {
    const KEY: &str = "sk-smoke-secret-99";
    let s = FakeServer::start("m", |req| {
        Reply::content(&format!(
            "got {}",
            req.header("authorization").unwrap_or("")
        ))
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("k={}", s.url());
    let out = coherence(
        &["smoke", "--endpoint", &url, "--json"],
        dir.path(),
        &[("OPENAI_API_KEY", KEY)],
    );
    assert_eq!(exit_code(&out), 1);
    assert_eq!(
        s.completion_requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));
    assert!(
        stdout(&out).contains("got Bearer [REDACTED]"),
        "{}",
        stdout(&out)
    );
}
