//! Overhead benchmark: what `coherence bench`/`soak` itself costs per request (client plus
//! bookkeeping), against a zero-latency fake endpoint, so it can be compared with the latency of
//! a real server (tens of milliseconds at the least).
//!
//! Run with `cargo bench --bench bench_overhead`. Prints numbers; asserts nothing. Four figures:
//! 1. the floor: a bare reqwest POST and body read against the fake server (HTTP + fake);
//! 2. `bench::sample::measure`: the tool's client (retry loop, capped body, redaction, parsing,
//!    classification), same server;
//! 3. bookkeeping alone, no network: degenerate check of an 800-token reply + one JSONL line
//!    written and flushed;
//! 4. `coherence soak` end to end (separate process) at concurrency 1 and 4 for a few seconds.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use coherence::bench::degenerate::is_degenerate;
use coherence::bench::prompts::{chat_body, user};
use coherence::bench::sample::{measure, Sample, SampleOutcome};
use coherence::endpoint::{Client, ClientOptions};
use coherence::run_folder::JsonLines;
use coherence_testkit::{FakeServer, Reply};
use serde_json::{json, Map};

const REQUESTS: u32 = 2000;
const SOAK_SECONDS: u32 = 4;

fn per_request(label: &str, n: u32, took: Duration) -> f64 {
    let us = took.as_secs_f64() * 1e6 / n as f64;
    println!(
        "{label:<44} {n:>6} requests in {:>6.3} s = {:>8.0} req/s, {us:>8.1} µs/request",
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );
    us
}

fn main() {
    let server = FakeServer::start("overhead", |_| Reply::tokens(16));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = chat_body(
        "overhead",
        user("Write a long essay."),
        16,
        0.0,
        &Map::new(),
    );
    let url = format!("{}/chat/completions", server.url());

    // Warm both paths (connection setup, allocator) before timing.
    let floor = rt.block_on(async {
        let http = reqwest::Client::new();
        for _ in 0..100 {
            http.post(&url)
                .json(&body)
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
        }
        let start = Instant::now();
        for _ in 0..REQUESTS {
            let r = http.post(&url).json(&body).send().await.unwrap();
            std::hint::black_box(r.bytes().await.unwrap());
        }
        start.elapsed()
    });
    let floor = per_request("1. bare reqwest + fake server (floor)", REQUESTS, floor);

    let client = Client::new(&server.url(), None, ClientOptions::default()).unwrap();
    let tool = rt.block_on(async {
        let origin = Instant::now();
        for _ in 0..100 {
            measure(&client, &body, origin).await;
        }
        let start = Instant::now();
        for _ in 0..REQUESTS {
            let s = measure(&client, &body, origin).await;
            assert_eq!(s.outcome, SampleOutcome::Ok);
            std::hint::black_box(s);
        }
        start.elapsed()
    });
    let tool = per_request("2. bench::sample::measure + fake server", REQUESTS, tool);

    let dir = tempfile::tempdir().unwrap();
    let mut log = JsonLines::create(&dir.path().join("overhead.jsonl")).unwrap();
    let answer = (0..800)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let sample = Sample {
        start_s: 1.0,
        end_s: 2.0,
        latency_ms: 1000.0,
        attempts: 1,
        status: Some(200),
        prompt_tokens: Some(120),
        completion_tokens: Some(800),
        finish_reason: Some("length".into()),
        outcome: SampleOutcome::Ok,
        problem: None,
        answer: Some(answer.clone()),
    };
    let start = Instant::now();
    for seq in 0..REQUESTS {
        let degenerate = is_degenerate(&answer);
        let line = json!({"worker": 0, "seq": seq, "kind": "chat", "degenerate": degenerate, "sample": &sample});
        log.append(&line).unwrap();
    }
    let books = per_request(
        "3. bookkeeping: degenerate check + JSONL line",
        REQUESTS,
        start.elapsed(),
    );
    println!(
        "   => tool overhead per request: {:.1} µs client (2 − 1) + {books:.1} µs bookkeeping = {:.1} µs",
        tool - floor,
        tool - floor + books
    );

    for concurrency in [1, 4] {
        let run = dir.path().join(format!("soak-c{concurrency}"));
        let status = Command::new(env!("CARGO_BIN_EXE_coherence"))
            .args([
                "soak",
                "--endpoint",
                &format!("fake={}", server.url()),
                "--duration",
                &format!("{SOAK_SECONDS}s"),
                "--concurrency",
                &concurrency.to_string(),
                "--out",
                run.to_str().unwrap(),
                "--quiet",
            ])
            .env_remove("OPENAI_API_KEY")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("soak.json")).unwrap()).unwrap();
        let requests = report["requests"].as_u64().unwrap() as u32;
        let wall = Duration::from_secs_f64(report["wall_s"].as_f64().unwrap());
        per_request(
            &format!(
                "4. coherence soak, c{concurrency} (exit {})",
                status.code().unwrap_or(-1)
            ),
            requests,
            wall,
        );
    }
}
