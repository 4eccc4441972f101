//! `coherence bench` against fake endpoints that generate at a known rate: the measured numbers
//! must match the truth, cold and steady numbers must both be reported, prefill must follow the
//! injected time to first token, metrics acceptance must cover the measured window only, and an
//! interrupted bench must still write what it measured.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{coherence, exit_code, stderr, stdout, FakeServer, Incoming, Reply};
#[cfg(unix)]
use crate::common::{serial, sigterm_when};
use coherence_testkit::ReplyKind;
use serde_json::Value;

/// A completion of `tokens` tokens generated at `rate` tok/s. The content is deliberately short,
/// so only the server's `usage.completion_tokens` can give the right rate.
fn generated(tokens: u64, rate: f64) -> Reply {
    Reply {
        kind: ReplyKind::Answer {
            content: Some("Once upon a time".into()),
            reasoning: None,
            finish_reason: "length".into(),
            completion_tokens: tokens,
        },
        delay: Duration::from_secs_f64(tokens as f64 / rate),
        headers: Vec::new(),
    }
}

/// A server without `/metrics` that generates every completion at `rate` tok/s.
fn steady_server(model: &str, rate: f64) -> FakeServer {
    FakeServer::start(model, move |req| {
        if is_metrics(req) {
            return Reply::status(404, "no metrics");
        }
        generated(req.max_tokens().unwrap_or(1), rate)
    })
}

fn is_metrics(req: &Incoming) -> bool {
    req.path.ends_with("/metrics")
}

/// What the fake server reports as prompt_tokens for this request.
fn fake_prompt_tokens(req: &Incoming) -> u64 {
    coherence_testkit::prompt_tokens(&req.body)
}

/// Run `bench --json --quiet` against `server` with the flags in `extra` (split on whitespace).
fn bench(dir: &Path, server: &FakeServer, extra: &str) -> (std::process::Output, Value) {
    let url = format!("fake={}", server.url());
    let out_dir = dir.join("run").display().to_string();
    let mut args = vec![
        "bench",
        "--endpoint",
        &url,
        "--out",
        &out_dir,
        "--json",
        "--quiet",
        "--backoff-ms",
        "10",
    ];
    args.extend(extra.split_whitespace());
    let out = coherence(&args, dir, &[]);
    let json = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            stdout(&out),
            stderr(&out)
        )
    });
    (out, json)
}

/// The least relative error a timing check allows: on a 2-core machine running the suite's tests
/// two at a time, debug-build figures were measured 8-12% off an injected truth that they hit
/// within 2-5% alone. A wrong formula is off by far more (a factor, a sign).
const LOADED_MACHINE_TOLERANCE: f64 = 0.2;

fn close(measured: &Value, truth: f64, tolerance: f64, what: &str) {
    let tolerance = tolerance.max(LOADED_MACHINE_TOLERANCE);
    let m = measured
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: no number in {measured}"));
    let err = (m - truth).abs() / truth;
    assert!(
        err <= tolerance,
        "{what}: measured {m}, truth {truth} ({:.2}% off)",
        err * 100.0
    );
}

#[test]
fn decode_and_concurrency_rates_match_the_server_within_two_percent() {
    let _serial = serial();
    const RATE: f64 = 200.0;
    let server = steady_server("rate-model", RATE);
    let dir = tempfile::tempdir().unwrap();
    let (out, json) = bench(
        dir.path(),
        &server,
        "--warmup 0 --runs 2 --max-tokens 200 --concurrency 1,6 --rounds 1 --prefill none",
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    close(&json["decode"]["peak_tps"], RATE, 0.02, "decode peak");
    close(&json["decode"]["mean_tps"], RATE, 0.02, "decode mean");
    let levels = json["concurrency"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[0]["n"], 1);
    close(&levels[0]["aggregate_tps"], RATE, 0.02, "c1 aggregate");
    close(&levels[0]["per_stream_tps"], RATE, 0.02, "c1 per stream");
    assert_eq!(levels[1]["n"], 6);
    close(
        &levels[1]["aggregate_tps"],
        6.0 * RATE,
        0.02,
        "c6 aggregate",
    );
    close(&levels[1]["per_stream_tps"], RATE, 0.02, "c6 per stream");
    // With no warm-up the cold number is the first measured run, and says so.
    assert!(json["warmup"].is_null());
    assert!(json["decode"]["cold_source"]
        .as_str()
        .unwrap()
        .contains("no warm-up"));
    assert_eq!(json["spec_decode"]["status"], "not_exposed");
    // 2 decode + 1 + 6 concurrency requests, all stream:false with the asked budget.
    let sent = server.completion_requests();
    assert_eq!(sent.len(), 9);
    assert!(sent.iter().all(|r| r.body["stream"] == false));
    assert!(sent.iter().all(|r| r.max_tokens() == Some(200)));
    // The run folder holds the reports and one log line per request.
    let run = dir.path().join("run");
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("bench.json")).unwrap()).unwrap();
    assert_eq!(on_disk, json);
    let md = std::fs::read_to_string(run.join("bench.md")).unwrap();
    assert!(md.contains("## Decode") && md.contains("| c6 |"), "{md}");
    let lines = std::fs::read_to_string(run.join("bench.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 9);
}

/// A server at `rate` tok/s that also notes when each completion request arrived.
fn timed_server(
    model: &str,
    rate: f64,
    arrivals: Arc<Mutex<Vec<std::time::Instant>>>,
) -> FakeServer {
    FakeServer::start(model, move |req| {
        if is_metrics(req) {
            return Reply::status(404, "no metrics");
        }
        arrivals.lock().unwrap().push(std::time::Instant::now());
        generated(req.max_tokens().unwrap_or(1), rate)
    })
}

#[test]
fn two_endpoints_are_benched_in_turn_and_read_four_times_apart() {
    let _serial = serial();
    let (at_a, at_b) = (
        Arc::new(Mutex::new(Vec::new())),
        Arc::new(Mutex::new(Vec::new())),
    );
    let fast = timed_server("fast-model", 400.0, at_a.clone());
    let slow = timed_server("slow-model", 100.0, at_b.clone());
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let (a, b) = (
        format!("fast={}", fast.url()),
        format!("slow={}", slow.url()),
    );
    let run_arg = run.display().to_string();
    let args = [
        "bench",
        "--endpoint",
        &a,
        "--endpoint",
        &b,
        "--out",
        &run_arg,
        "--json",
        "--quiet",
        "--warmup",
        "1",
        "--runs",
        "2",
        "--max-tokens",
        "100",
        "--concurrency",
        "2",
        "--rounds",
        "1",
        "--prefill",
        "none",
    ];
    let out = coherence(&args, dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let endpoints = json["endpoints"]
        .as_array()
        .expect("{\"endpoints\": [...]}");
    assert_eq!(endpoints.len(), 2);
    assert_eq!(endpoints[0]["endpoint"]["name"], "fast");
    assert_eq!(endpoints[1]["endpoint"]["name"], "slow");
    for (e, rate) in endpoints.iter().zip([400.0, 100.0]) {
        close(&e["decode"]["mean_tps"], rate, 0.05, "decode mean");
        close(
            &e["concurrency"][0]["aggregate_tps"],
            2.0 * rate,
            0.05,
            "c2 aggregate",
        );
        assert_eq!(e["settings"]["stream"], false);
    }
    let ratio = endpoints[1]["decode"]["mean_tps"].as_f64().unwrap()
        / endpoints[0]["decode"]["mean_tps"].as_f64().unwrap();
    assert!((ratio - 0.25).abs() / 0.25 < 0.05, "slow/fast {ratio}");
    // One after the other, never at once: every request to the slow endpoint came after the
    // last one to the fast endpoint, warm-up included (1 warm-up + 1 warm-up round of 2 + 2 runs + 2).
    let (at_a, at_b) = (at_a.lock().unwrap().clone(), at_b.lock().unwrap().clone());
    assert_eq!((at_a.len(), at_b.len()), (7, 7));
    assert!(at_a.iter().max().unwrap() < at_b.iter().min().unwrap());
    // Each endpoint keeps its own run folder; the top bench.md sets them side by side.
    for name in ["fast", "slow"] {
        let own: Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(name).join("bench.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(own["endpoint"]["name"], name);
        assert!(run.join(name).join("bench.jsonl").exists());
    }
    let md = std::fs::read_to_string(run.join("bench.md")).unwrap();
    assert!(
        md.contains("fast vs slow") && md.contains("slow/fast"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| decode.mean_tps "))
        .unwrap_or_else(|| panic!("{md}"));
    let cell = row
        .trim_end()
        .trim_end_matches('|')
        .rsplit('|')
        .next()
        .unwrap()
        .trim();
    let shown: f64 = cell
        .trim_end_matches('x')
        .parse()
        .unwrap_or_else(|_| panic!("{row}"));
    assert!((shown - 0.25).abs() / 0.25 < 0.05, "{row}");
}

#[test]
fn cold_numbers_are_reported_next_to_the_steady_state() {
    let _serial = serial();
    const RATE: f64 = 200.0;
    let calls = AtomicU64::new(0);
    let server = FakeServer::start("jit-model", move |req| {
        if is_metrics(req) {
            return Reply::status(404, "no metrics");
        }
        // The first request runs 30% slow, as before the JIT kernels are compiled; the first
        // batch of two (the warm-up round at c2) runs at half speed.
        let n = calls.fetch_add(1, Ordering::SeqCst);
        let rate = match n {
            0 => RATE * 0.7,
            1 | 2 => RATE * 0.5,
            _ => RATE,
        };
        generated(req.max_tokens().unwrap_or(1), rate)
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, json) = bench(
        dir.path(),
        &server,
        "--warmup 1 --runs 2 --max-tokens 100 --concurrency 2 --rounds 1 --prefill none",
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    close(&json["decode"]["cold_tps"], RATE * 0.7, 0.03, "cold decode");
    close(&json["decode"]["mean_tps"], RATE, 0.03, "steady decode");
    assert_eq!(json["warmup"]["requests"], 1);
    close(
        &json["warmup"]["decode_tps"][0],
        RATE * 0.7,
        0.03,
        "warm-up request",
    );
    let c2 = &json["concurrency"][0];
    close(&c2["cold_aggregate_tps"], 2.0 * RATE * 0.5, 0.03, "cold c2");
    close(&c2["aggregate_tps"], 2.0 * RATE, 0.03, "steady c2");
    let phases: Vec<String> = std::fs::read_to_string(dir.path().join("run/bench.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["phase"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        phases,
        [
            "warmup",
            "warmup",
            "warmup",
            "decode",
            "decode",
            "concurrency",
            "concurrency"
        ]
    );
}

#[test]
fn prefill_follows_the_injected_time_to_first_token_and_skips_what_does_not_fit() {
    let _serial = serial();
    const PREFILL_RATE: f64 = 5000.0;
    let injected = Arc::new(Mutex::new(Vec::new()));
    let log = injected.clone();
    let server = FakeServer::start("prefill-model", move |req| {
        if is_metrics(req) {
            return Reply::status(404, "no metrics");
        }
        assert_eq!(req.max_tokens(), Some(1), "prefill asks for one token");
        let tokens = fake_prompt_tokens(req);
        let delay = tokens as f64 / PREFILL_RATE;
        log.lock().unwrap().push((tokens, delay));
        Reply::tokens(1).after(Duration::from_secs_f64(delay))
    });
    let dir = tempfile::tempdir().unwrap();
    // The fake server reports max_model_len 4096: 8k cannot fit.
    let (out, json) = bench(
        dir.path(),
        &server,
        "--warmup 0 --runs 0 --concurrency none --prefill 1k,2k,8k --prefill-runs 2",
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let injected = injected.lock().unwrap().clone();
    assert_eq!(injected.len(), 4, "two runs of 1k and 2k, nothing for 8k");
    let prefill = json["prefill"].as_array().unwrap();
    assert_eq!(prefill.len(), 2);
    for (i, p) in prefill.iter().enumerate() {
        assert_eq!(p["tokens"], [1024, 2048][i]);
        let runs = p["runs"].as_array().unwrap();
        for (j, run) in runs.iter().enumerate() {
            let (tokens, delay) = injected[i * 2 + j];
            assert_eq!(run["prompt_tokens"], tokens, "the server's count is used");
            let ttft = run["ttft_ms"].as_f64().unwrap();
            let over = ttft - delay * 1000.0;
            assert!(
                (0.0..30.0).contains(&over),
                "TTFT {ttft} ms vs injected {} ms",
                delay * 1000.0
            );
            close(&run["prompt_tps"], PREFILL_RATE, 0.03, "prompt tok/s");
        }
        // The headline is the steady run (the second); the first is reported apart.
        assert_eq!(p["ttft_ms"], runs[1]["ttft_ms"]);
        assert_eq!(p["first_ttft_ms"], runs[0]["ttft_ms"]);
        close(&p["prompt_tps"], PREFILL_RATE, 0.03, "prompt tok/s");
    }
    // The prompts are about the requested size, and no two share a prefix a cache could reuse.
    let sent = server.completion_requests();
    let texts: Vec<String> = sent.iter().map(Incoming::question).collect();
    for (t, size) in texts.iter().zip([1024, 1024, 2048, 2048]) {
        let words = t.split_whitespace().count();
        assert!(
            words > size * 9 / 10 && words <= size,
            "{words} words for {size}"
        );
    }
    assert_ne!(texts[0][..24], texts[1][..24]);
    let skipped = json["prefill_skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["tokens"], 8192);
    assert!(skipped[0]["reason"]
        .as_str()
        .unwrap()
        .contains("max_model_len 4096"));
    assert!(json["decode"].is_null());
}

#[test]
fn a_size_the_server_rejects_is_skipped_with_its_reason_and_larger_ones_are_not_sent() {
    let _serial = serial();
    // Like llama.cpp: GET /models says nothing useful, the chat endpoint refuses long prompts.
    let server = FakeServer::start("short-context", |req| {
        if is_metrics(req) {
            return Reply::status(404, "no metrics");
        }
        if fake_prompt_tokens(req) > 3000 {
            return Reply::status(400, "This model's maximum context length is 3000 tokens");
        }
        Reply::tokens(1)
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, json) = bench(
        dir.path(),
        &server,
        "--warmup 0 --runs 0 --concurrency none --prefill 1k,3k,3.5k --prefill-runs 2",
    );
    assert_eq!(
        exit_code(&out),
        0,
        "a rejected size is not a failure: {}",
        stderr(&out)
    );
    assert!(json["problems"].as_array().unwrap().is_empty());
    assert_eq!(json["prefill"].as_array().unwrap().len(), 1);
    let skipped = json["prefill_skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(skipped[0]["tokens"], 3072);
    let reason = skipped[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("rejected by the server")
            && reason.contains("maximum context length is 3000"),
        "{reason}"
    );
    assert_eq!(skipped[1]["tokens"], 3584);
    assert!(skipped[1]["reason"]
        .as_str()
        .unwrap()
        .contains("rejected 3072"));
    // 1k twice, 3k once (refused), 3.5k never.
    assert_eq!(server.completion_requests().len(), 3);
}

#[test]
fn speculative_acceptance_comes_from_the_metrics_window() {
    let _serial = serial();
    // Counters start high (earlier traffic). The warm-up request drafts 100 tokens and accepts
    // none; every measured request drafts 10 and accepts 6. Only the measured window counts.
    let accepted = Arc::new(AtomicU64::new(1000));
    let drafted = Arc::new(AtomicU64::new(5000));
    let (a, d) = (accepted.clone(), drafted.clone());
    let completions = AtomicU64::new(0);
    let server = FakeServer::start("spec-model", move |req| {
        if is_metrics(req) {
            return Reply::text(
                200,
                &format!(
                    "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n\
                     vllm:spec_decode_num_accepted_tokens_total{{engine=\"0\",model_name=\"spec-model\"}} {}.0\n\
                     vllm:spec_decode_num_draft_tokens_total{{engine=\"0\",model_name=\"spec-model\"}} {}.0\n",
                    a.load(Ordering::SeqCst),
                    d.load(Ordering::SeqCst)
                ),
            );
        }
        if completions.fetch_add(1, Ordering::SeqCst) == 0 {
            d.fetch_add(100, Ordering::SeqCst);
        } else {
            a.fetch_add(6, Ordering::SeqCst);
            d.fetch_add(10, Ordering::SeqCst);
        }
        generated(req.max_tokens().unwrap_or(1), 2000.0)
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, json) = bench(
        dir.path(),
        &server,
        "--warmup 1 --runs 2 --max-tokens 20 --concurrency none --prefill none",
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let spec = &json["spec_decode"];
    assert_eq!(spec["status"], "measured", "{spec}");
    assert_eq!(spec["accepted"], 12.0);
    assert_eq!(spec["drafted"], 20.0);
    assert_eq!(spec["acceptance"], 0.6);
    // Metrics live at the server root, not under /v1.
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.iter().any(|p| p == "/metrics"), "{paths:?}");
    assert!(!paths.iter().any(|p| p == "/v1/metrics"));
    let md = std::fs::read_to_string(dir.path().join("run/bench.md")).unwrap();
    assert!(md.contains("Acceptance 60.0% (12/20"), "{md}");
}

#[test]
fn a_baseline_prints_claim_measured_and_delta() {
    let _serial = serial();
    const RATE: f64 = 200.0;
    let server = steady_server("base-model", RATE);
    let dir = tempfile::tempdir().unwrap();
    let claims = dir.path().join("claims.json");
    std::fs::write(
        &claims,
        r#"{"source": "the guide", "claims": {"decode.peak_tps": 250, "concurrency.1.aggregate_tps": 100, "prefill.8k.prompt_tps": 1513}}"#,
    )
    .unwrap();
    let quick = "--warmup 0 --runs 1 --max-tokens 60 --concurrency 1 --rounds 1 --prefill none";
    let args = format!("{quick} --baseline {}", claims.display());
    let (out, json) = bench(dir.path(), &server, &args);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let rows = json["baseline"]["rows"].as_array().unwrap();
    assert_eq!(json["baseline"]["source"], "the guide");
    assert_eq!(rows[0]["metric"], "decode.peak_tps");
    close(&rows[0]["delta_pct"], -20.0, 0.1, "peak delta");
    assert_eq!(rows[1]["metric"], "concurrency.c1.aggregate_tps");
    close(&rows[1]["delta_pct"], 100.0, 0.05, "c1 delta");
    assert_eq!(rows[2]["metric"], "prefill.8192.prompt_tps");
    assert!(rows[2]["measured"].is_null());
    let md = std::fs::read_to_string(dir.path().join("run/bench.md")).unwrap();
    assert!(md.contains("Claim vs measured (the guide)"), "{md}");
    assert!(
        md.contains("| prefill.8192.prompt_tps | 1513 | – | not measured |"),
        "{md}"
    );

    // An earlier bench.json is a baseline too: the same server gives deltas near zero.
    let earlier = dir.path().join("run/bench.json");
    let again = tempfile::tempdir().unwrap();
    let args = format!("{quick} --baseline {}", earlier.display());
    let (out, json) = bench(again.path(), &server, &args);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let rows = json["baseline"]["rows"].as_array().unwrap();
    let peak = rows
        .iter()
        .find(|r| r["metric"] == "decode.peak_tps")
        .unwrap();
    assert!(peak["delta_pct"].as_f64().unwrap().abs() < 3.0, "{peak}");
}

#[test]
fn failures_are_reported_and_exit_3() {
    let _serial = serial();
    let server = FakeServer::start("down-model", |_| Reply::status(503, "overloaded"));
    let dir = tempfile::tempdir().unwrap();
    let (out, json) = bench(
        dir.path(),
        &server,
        "--warmup 0 --runs 1 --max-tokens 10 --concurrency none --prefill none --retries 0",
    );
    assert_eq!(exit_code(&out), 3);
    assert!(json["decode"]["peak_tps"].is_null());
    assert_eq!(json["decode"]["errors"], 1);
    let problems = json["problems"].as_array().unwrap();
    assert!(
        problems[0].as_str().unwrap().contains("503"),
        "{problems:?}"
    );
}

#[test]
fn bad_flags_are_usage_errors_that_name_the_flag() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "bench",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--endpoint",
                "a=http://127.0.0.1:8/v1",
            ],
            "--endpoint",
        ),
        (&["bench"], "--endpoint"),
        (
            &[
                "bench",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--prefill",
                "8q",
            ],
            "--prefill",
        ),
        (
            &[
                "bench",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--concurrency",
                "0",
            ],
            "--concurrency",
        ),
        (
            &[
                "bench",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--baseline",
                "/nonexistent.json",
            ],
            "--baseline",
        ),
        (
            &[
                "bench",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--runs",
                "0",
                "--concurrency",
                "none",
                "--prefill",
                "none",
            ],
            "nothing left",
        ),
    ];
    for (args, flag) in cases {
        let out = coherence(args, dir.path(), &[]);
        assert_eq!(exit_code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(flag), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn the_api_key_is_sent_but_never_written() {
    let _serial = serial();
    const KEY: &str = "sk-bench-secret-4242";
    let server = FakeServer::start("key-model", |req| {
        let auth = req.header("authorization").unwrap_or("none").to_string();
        if is_metrics(req) {
            return Reply::text(404, &format!("no metrics for {auth}"));
        }
        Reply::content(&format!("you sent {auth}"))
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("fake={}", server.url());
    let out_dir = dir.path().join("run");
    let out = coherence(
        &[
            "bench",
            "--endpoint",
            &url,
            "--api-key-env",
            "fake=BENCH_KEY",
            "--out",
            out_dir.to_str().unwrap(),
            "--warmup",
            "1",
            "--runs",
            "1",
            "--max-tokens",
            "8",
            "--concurrency",
            "1",
            "--rounds",
            "1",
            "--prefill",
            "1k",
            "--prefill-runs",
            "1",
        ],
        dir.path(),
        &[("BENCH_KEY", KEY)],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(server
        .completion_requests()
        .iter()
        .all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}"))));
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));
    for entry in std::fs::read_dir(&out_dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(KEY), "{} holds the key", path.display());
    }
}

/// The lines of `bench.jsonl` written so far (a torn last line is left out).
fn logged(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("bench.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[cfg(unix)]
#[test]
fn sigterm_stops_the_bench_and_writes_what_was_measured() {
    let _serial = serial();
    const RATE: f64 = 100.0;
    let server = steady_server("slow-model", RATE);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("fake={}", server.url());
    // 200 ms a request: warm-up and decode take about a second, the sweep would take 20 s.
    let out_dir = run.display().to_string();
    let mut args = vec!["bench", "--endpoint", &url, "--out", &out_dir];
    args.extend(
        "--warmup 1 --runs 2 --max-tokens 20 --concurrency 2 --rounds 100 --prefill 1k \
         --prefill-runs 1 --backoff-ms 10"
            .split_whitespace(),
    );
    // Signalled once the first sweep round is logged: mid-sweep, before prefill.
    let (out, took) = sigterm_when(&args, "the bench logs as it goes", || {
        logged(&run).iter().any(|l| l["phase"] == "concurrency")
    });
    assert!(took < Duration::from_secs(5), "it stops at once ({took:?})");
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));

    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("bench.json")).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    // What was measured before the signal is all there.
    assert_eq!(r["warmup"]["requests"], 1);
    assert_eq!(r["decode"]["runs"].as_array().unwrap().len(), 2);
    close(&r["decode"]["mean_tps"], RATE, 0.05, "decode mean");
    let levels = r["concurrency"].as_array().unwrap();
    assert_eq!(levels.len(), 1);
    let rounds = levels[0]["rounds"].as_array().unwrap().len();
    assert!((1..100).contains(&rounds), "{rounds} rounds");
    close(
        &levels[0]["aggregate_tps"],
        2.0 * RATE,
        0.05,
        "c2 aggregate",
    );
    // The round in flight is abandoned, not half-counted: the log holds whole rounds only.
    let logged = logged(&run);
    let sweep = logged
        .iter()
        .filter(|l| l["phase"] == "concurrency")
        .count();
    assert_eq!(sweep, 2 * rounds);
    assert!(r["problems"].as_array().unwrap().is_empty());
    // What was not reached is absent, said so, and never sent.
    assert!(r["prefill"].as_array().unwrap().is_empty());
    assert!(r["spec_decode"].is_null());
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("during concurrency (n=2, round")
            && notes.contains("prefill 1024")
            && notes.contains("speculative-decoding acceptance"),
        "{notes}"
    );
    assert!(server
        .completion_requests()
        .iter()
        .all(|q| q.max_tokens() != Some(1)));
    let md = std::fs::read_to_string(run.join("bench.md")).unwrap();
    assert!(
        md.contains("Status **interrupted**") && md.contains("| c2 |"),
        "{md}"
    );
    assert!(
        !md.contains("## Prefill") && !md.contains("## Speculative"),
        "{md}"
    );
    assert_eq!(stdout(&out).split("\nreport: ").next().unwrap(), md);
    assert!(
        stderr(&out).contains("interrupted during concurrency"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn concurrency_above_the_cap_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let url = "a=http://127.0.0.1:9/v1";
    for (args, flag) in [
        (
            vec!["bench", "--endpoint", url, "--concurrency", "1,1000000"],
            "--concurrency",
        ),
        (
            vec![
                "soak",
                "--endpoint",
                url,
                "--sanity",
                "--sanity-levels",
                "1000000",
            ],
            "--sanity-levels",
        ),
    ] {
        let out = coherence(&args, dir.path(), &[]);
        assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains(flag), "{}", stderr(&out));
    }
}

/// A bench with the most requests in flight a flag allows obeys SIGTERM at once: it stops
/// sending, keeps what it had logged, writes its reports and exits 3.
#[cfg(unix)]
#[test]
fn sigterm_at_the_concurrency_cap_stops_the_bench_at_once() {
    let _serial = serial();
    let seen = Arc::new(AtomicU64::new(0));
    let counter = seen.clone();
    // The warm-up request is answered; every request after it hangs.
    let server = FakeServer::start("slow-model", move |req| {
        if is_metrics(req) {
            return Reply::status(404, "no metrics");
        }
        match counter.fetch_add(1, Ordering::SeqCst) {
            0 => generated(10, 1000.0),
            _ => Reply::hang(),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("fake={}", server.url());
    let out_dir = run.display().to_string();
    let mut args = vec!["bench", "--endpoint", &url, "--out", &out_dir];
    args.extend(
        "--warmup 1 --runs 1 --max-tokens 10 --concurrency 1024 --rounds 1 --prefill none"
            .split_whitespace(),
    );
    // Signalled once hundreds of the warm-up round's 1024 requests hang at the server.
    let (out, took) = sigterm_when(&args, "the round reaches the server", || {
        seen.load(Ordering::SeqCst) > 300
    });
    assert!(took < Duration::from_secs(5), "it stops at once ({took:?})");
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("bench.json")).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    assert_eq!(r["warmup"]["requests"], 1, "the answered request is kept");
    assert_eq!(logged(&run).len(), 1);
}

/// A metrics page that never answers does not hold up SIGTERM: the bench abandons the probe,
/// keeps what it measured and exits at once.
#[cfg(unix)]
#[test]
fn sigterm_while_the_metrics_probe_hangs_stops_the_bench_at_once() {
    let _serial = serial();
    let probes = Arc::new(AtomicU64::new(0));
    let counter = probes.clone();
    // The probe before the decode runs finds no page; the one after them hangs.
    let server = FakeServer::start("slow-model", move |req| {
        if !is_metrics(req) {
            return generated(10, 1000.0);
        }
        match counter.fetch_add(1, Ordering::SeqCst) {
            0 => Reply::status(404, "no metrics"),
            _ => Reply::hang(),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("fake={}", server.url());
    let out_dir = run.display().to_string();
    let mut args = vec!["bench", "--endpoint", &url, "--out", &out_dir];
    args.extend(
        "--warmup 0 --runs 2 --max-tokens 10 --concurrency none --prefill none --retries 0"
            .split_whitespace(),
    );
    let (out, took) = sigterm_when(&args, "the second probe reaches the server", || {
        probes.load(Ordering::SeqCst) >= 2
    });
    assert!(took < Duration::from_secs(5), "it stops at once ({took:?})");
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("bench.json")).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    assert_eq!(r["decode"]["runs"].as_array().unwrap().len(), 2, "{r}");
    assert!(r["spec_decode"].is_null());
    assert_eq!(logged(&run).len(), 2);
}
