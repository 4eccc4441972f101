//! `coherence soak` against fake endpoints with known latencies and known problems: rates and
//! latency percentiles must match what the server injected, problems must be counted exactly,
//! and an interrupted or killed soak must still yield its report.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{
    coherence, correct_answer, exit_code, stderr, stdout, write_catalogue, FakeServer, Incoming,
    Reply, CAPITAL_Q, EGGS_Q, JSON_Q, LETTERS_Q,
};
#[cfg(unix)]
use crate::common::{serial, sigterm_when};
use serde_json::{json, Value};

/// `n` distinct words: `n` completion tokens and nothing repetitive.
fn words(n: u64) -> String {
    (0..n)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Independent of the crate: the p-th percentile with linear interpolation between ranks.
fn percentile(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let rank = p / 100.0 * (v.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
}

fn soak_args<'a>(url: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "soak",
        "--endpoint",
        url,
        "--out",
        out,
        "--backoff-ms",
        "10",
    ];
    args.extend_from_slice(extra);
    args
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn rates_and_latency_percentiles_match_the_injected_ones() {
    let _serial = serial();
    const RATE: f64 = 100.0;
    let injected = Arc::new(Mutex::new(Vec::new()));
    let log = injected.clone();
    let calls = AtomicU64::new(0);
    let server = FakeServer::start("soak-model", move |_req| {
        // Latencies cycle through 100..1000 ms; tokens follow at RATE tok/s per stream.
        let n = calls.fetch_add(1, Ordering::SeqCst);
        let delay = 0.1 * (1 + n % 10) as f64;
        log.lock().unwrap().push(delay * 1000.0);
        Reply::content(&words((delay * RATE) as u64)).after(Duration::from_secs_f64(delay))
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("fake={}", server.url());
    let out_dir = dir.path().join("run").display().to_string();
    let started = Instant::now();
    let out = coherence(
        &soak_args(
            &url,
            &out_dir,
            &["--duration", "3s", "--concurrency", "4", "--json"],
        ),
        dir.path(),
        &[],
    );
    let took = started.elapsed();
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        took < Duration::from_secs(6),
        "the soak stops by itself ({took:?})"
    );
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let injected = injected.lock().unwrap().clone();
    assert_eq!(r["status"], "finished");
    assert_eq!(
        r["requests"],
        injected.len(),
        "every request sent is reported"
    );
    assert_eq!(r["errors"], 0);
    assert_eq!(r["soft_empty"], 0);
    assert_eq!(r["degenerate"], 0);
    for p in [50.0, 90.0, 95.0, 99.0, 100.0] {
        let key = if p == 100.0 {
            "max".to_string()
        } else {
            format!("p{p}")
        };
        let measured = r["latency_ms"][&key].as_f64().unwrap();
        let truth = percentile(&injected, p);
        assert!(
            (truth..truth + 30.0).contains(&measured),
            "{key}: measured {measured} ms, injected {truth} ms"
        );
    }
    let per_worker = r["per_worker_tps"].as_array().unwrap();
    assert_eq!(per_worker.len(), 4);
    for w in per_worker {
        let w = w.as_f64().unwrap();
        assert!((w - RATE).abs() / RATE < 0.03, "per worker {w} vs {RATE}");
    }
    let agg = r["aggregate_tps"].as_f64().unwrap();
    assert!(
        (agg - 4.0 * RATE).abs() / (4.0 * RATE) < 0.03,
        "aggregate {agg}"
    );
    let tokens: u64 = injected.iter().map(|d| (d / 1000.0 * RATE) as u64).sum();
    assert_eq!(r["completion_tokens"], tokens);

    // The journal has one line per request; the traffic is mixed and never streamed.
    let run = dir.path().join("run");
    assert_eq!(jsonl(&run.join("soak.jsonl")).len(), injected.len());
    let sent = server.completion_requests();
    assert!(sent.iter().all(|q| q.body["stream"] == false));
    let temps: std::collections::BTreeSet<String> = sent
        .iter()
        .map(|q| q.body["temperature"].to_string())
        .collect();
    assert_eq!(temps.len(), 3, "{temps:?}");
    let budgets: std::collections::BTreeSet<u64> =
        sent.iter().filter_map(Incoming::max_tokens).collect();
    assert!(budgets.is_subset(&[300, 500, 800].into()), "{budgets:?}");
    assert!(
        sent.iter().any(|q| q.body.get("tools").is_some()),
        "tool calls are part of the mix"
    );
    let md = std::fs::read_to_string(run.join("soak.md")).unwrap();
    assert!(
        md.contains("| p50 | p90 | p95 | p99 | max | mean |"),
        "{md}"
    );
}

#[test]
fn errors_soft_empty_and_degenerate_replies_are_counted_exactly() {
    let _serial = serial();
    #[derive(Default)]
    struct Served {
        errors: u64,
        empty: u64,
        looped: u64,
        tool_calls: u64,
    }
    let served = Arc::new(Mutex::new(Served::default()));
    let tally = served.clone();
    let calls = AtomicU64::new(0);
    let server = FakeServer::start("flaky-model", move |req| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        let mut s = tally.lock().unwrap();
        let reply = if req.body.get("tools").is_some() && n % 2 == 0 {
            // A tool call with null content is an answer, not an empty reply.
            s.tool_calls += 1;
            Reply::json(
                200,
                json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Lisbon\"}"}}]}}],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 12}}),
            )
        } else {
            match n % 5 {
                1 => {
                    s.empty += 1;
                    Reply::content("")
                }
                2 => {
                    s.looped += 1;
                    Reply::content(&"I will check the file again. ".repeat(20))
                }
                3 => {
                    s.errors += 1;
                    Reply::status(500, "engine died")
                }
                _ => Reply::content(&words(30)),
            }
        };
        reply.after(Duration::from_millis(40))
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("fake={}", server.url());
    let out_dir = dir.path().join("run").display().to_string();
    let out = coherence(
        &soak_args(
            &url,
            &out_dir,
            &[
                "--duration",
                "2s",
                "--concurrency",
                "3",
                "--retries",
                "0",
                "--json",
                "--quiet",
            ],
        ),
        dir.path(),
        &[],
    );
    assert_eq!(
        exit_code(&out),
        1,
        "problems make the soak fail: {}",
        stderr(&out)
    );
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let s = served.lock().unwrap();
    assert!(s.errors > 0 && s.empty > 0 && s.looped > 0 && s.tool_calls > 0);
    assert_eq!(r["errors"], s.errors);
    assert_eq!(r["error_kinds"]["server error (5xx)"], s.errors);
    assert_eq!(r["soft_empty"], s.empty);
    assert_eq!(r["degenerate"], s.looped);
    let examples = r["examples"].as_array().unwrap();
    assert!(examples.iter().any(|e| e["problem"]
        .as_str()
        .unwrap()
        .starts_with("degenerate: I will check")));
    assert!(stderr(&out).is_empty(), "--quiet: {}", stderr(&out));
}

#[test]
fn a_killed_soak_is_reported_from_its_journal() {
    let _serial = serial();
    let server = FakeServer::start("slow-model", |_| {
        Reply::content(&words(20)).after(Duration::from_millis(30))
    });
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("fake={}", server.url());
    let mut child = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(soak_args(
            &url,
            run.to_str().unwrap(),
            &["--duration", "60s", "--concurrency", "2"],
        ))
        .env_remove("OPENAI_API_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let journal = run.join("soak.jsonl");
    let deadline = Instant::now() + Duration::from_secs(20);
    while jsonl(&journal).len() < 10 {
        assert!(Instant::now() < deadline, "the soak journals as it goes");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: no chance to write a report
    child.wait().unwrap();
    assert!(!run.join("soak.json").exists());
    // A line torn by the kill is skipped and noted.
    let mut raw = std::fs::read(&journal).unwrap();
    raw.extend_from_slice(b"{\"worker\": 0, \"seq\"");
    std::fs::write(&journal, raw).unwrap();
    let lines = jsonl(&journal).len();

    let out = coherence(
        &["soak", "--report", run.to_str().unwrap(), "--json"],
        dir.path(),
        &[],
    );
    assert_eq!(
        exit_code(&out),
        3,
        "an unfinished soak is incomplete: {}",
        stderr(&out)
    );
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(r["status"], "unfinished");
    assert_eq!(r["requests"], lines);
    assert_eq!(r["completion_tokens"], lines * 20);
    assert!(r["latency_ms"]["p50"].as_f64().unwrap() >= 30.0);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("skipped") && notes.contains("did not end cleanly"),
        "{notes}"
    );
    assert!(run.join("soak.json").exists() && run.join("soak.md").exists());
}

/// Soak `fake` (answering after `latency_ms`) with `load`, send SIGTERM once the journal holds
/// `lines`, and check the interrupted report: prompt, exit 3, every journalled request counted.
#[cfg(unix)]
fn soak_until_sigterm(latency_ms: u64, load: &[&str], lines: usize) -> std::process::Output {
    let server = FakeServer::start("slow-model", move |_| {
        Reply::content(&words(10)).after(Duration::from_millis(latency_ms))
    });
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("fake={}", server.url());
    let journal = run.join("soak.jsonl");
    let (out, took) = sigterm_when(
        &soak_args(&url, run.to_str().unwrap(), load),
        "the soak journals as it goes",
        || jsonl(&journal).len() >= lines,
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("soak.json")).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    assert_eq!(r["requests"], jsonl(&journal).len());
    assert!(
        stdout(&out).contains("Status **interrupted**"),
        "{}",
        stdout(&out)
    );
    out
}

#[cfg(unix)]
#[test]
fn sigterm_stops_the_soak_and_writes_the_report() {
    let _serial = serial();
    let out = soak_until_sigterm(30, &["--duration", "60s", "--concurrency", "3"], 5);
    // Plain progress lines, since stderr is not a terminal.
    assert!(stderr(&out).contains("requests,"), "{}", stderr(&out));
}

/// Open loop at the highest rate allowed, the in-flight cap reached: the paced engine stops
/// at once.
#[cfg(unix)]
#[test]
fn sigterm_stops_an_open_loop_soak_at_the_highest_rate_and_writes_the_report() {
    let _serial = serial();
    let load = ["--duration", "1h", "--rate", "1000", "--max-in-flight", "8"];
    soak_until_sigterm(400, &load, 8);
}

#[test]
fn report_needs_a_soak_folder_and_flags_are_checked() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["soak", "--report", d], "not a soak run folder"),
        (
            &[
                "soak",
                "--report",
                d,
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
            ],
            "--endpoint",
        ),
        (
            &[
                "soak",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--duration",
                "soon",
            ],
            "--duration",
        ),
        (
            &[
                "soak",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--kinds",
                "poetry",
            ],
            "--kinds",
        ),
        (
            &[
                "soak",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--concurrency",
                "0",
            ],
            "--concurrency",
        ),
        (
            &[
                "soak",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--rate",
                "5",
                "--concurrency",
                "2",
            ],
            "cannot be used with",
        ),
        (
            &[
                "soak",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--rate",
                "0",
            ],
            "--rate",
        ),
        (
            &[
                "soak",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--burstiness",
                "0.5",
            ],
            "--rate",
        ),
        // Issue 21: an absurd rate was accepted and the soak never finished.
        (
            &[
                "soak",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--rate",
                "1e10",
            ],
            "--rate",
        ),
        (
            &[
                "soak",
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--concurrency",
                "4294967295",
            ],
            "--concurrency",
        ),
    ];
    for (args, needle) in cases {
        let out = coherence(args, dir.path(), &[]);
        assert_eq!(exit_code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn the_api_key_never_reaches_the_journal_or_report() {
    let _serial = serial();
    const KEY: &str = "sk-soak-secret-777";
    let server = FakeServer::start("key-model", |req| {
        let auth = req.header("authorization").unwrap_or("none").to_string();
        // Echo the key in a degenerate reply (so it would land in the snippet) and in errors.
        if req.body["max_tokens"] == 300 {
            Reply::status(400, &format!("bad request from {auth}"))
        } else {
            Reply::content(&format!("{auth} ").repeat(20))
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("fake={}", server.url());
    let run = dir.path().join("run");
    let out = coherence(
        &soak_args(
            &url,
            run.to_str().unwrap(),
            &[
                "--duration",
                "1s",
                "--concurrency",
                "2",
                "--api-key-env",
                "fake=SOAK_KEY",
                "--retries",
                "0",
            ],
        ),
        dir.path(),
        &[("SOAK_KEY", KEY)],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    assert!(
        server.completion_requests()[0].header("authorization") == Some(&format!("Bearer {KEY}"))
    );
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));
    let journal = std::fs::read_to_string(run.join("soak.jsonl")).unwrap();
    assert!(
        journal.contains("[REDACTED]"),
        "the echo was recorded, redacted"
    );
    for entry in std::fs::read_dir(&run).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(KEY), "{} holds the key", path.display());
    }
}

/// Seconds between the first and last instant, and how many there are.
fn span(at: &[Instant]) -> (usize, f64) {
    let first = at.iter().min().unwrap();
    let last = at.iter().max().unwrap();
    (at.len(), last.duration_since(*first).as_secs_f64())
}

#[test]
fn an_open_loop_soak_sends_at_the_rate_whatever_is_in_flight() {
    let _serial = serial();
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let log = arrivals.clone();
    // Half a second per answer: four closed-loop workers could send only 80 requests in 10 s.
    let server = FakeServer::start("rate-model", move |_req| {
        log.lock().unwrap().push(Instant::now());
        Reply::content(&words(20)).after(Duration::from_millis(500))
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("fake={}", server.url());
    let out_dir = dir.path().join("run").display().to_string();
    let started = Instant::now();
    let out = coherence(
        &soak_args(
            &url,
            &out_dir,
            &["--duration", "10s", "--rate", "20", "--json", "--quiet"],
        ),
        dir.path(),
        &[],
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "stops by itself"
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    // Rates from the server's own clock, not the client's.
    let (n, secs) = span(&arrivals.lock().unwrap());
    assert!((170..=230).contains(&n), "{n} requests for 200 expected");
    let rate = (n - 1) as f64 / secs;
    assert!(
        (rate - 20.0).abs() / 20.0 < 0.15,
        "server saw {rate:.2} req/s"
    );
    assert_eq!(r["requests"], n, "every request sent is reported");
    assert_eq!(r["settings"]["rates"], json!([20.0]));
    assert_eq!(r["settings"]["concurrency"], 0);
    let step = &r["steps"][0];
    assert_eq!(step["requests"], n);
    assert_eq!(step["delayed"], 0);
    assert_eq!(step["dropped"], 0);
    assert!(step["saturated"].is_null(), "{step}");
    let achieved = step["achieved_rps"].as_f64().unwrap();
    let offered = step["offered_rps"].as_f64().unwrap();
    assert!(
        (achieved / offered - 1.0).abs() < 0.1,
        "{achieved} vs {offered}"
    );
    assert!(r["sweep"]["verdict"].as_str().unwrap().contains("kept up"));
    let p50 = r["latency_ms"]["p50"].as_f64().unwrap();
    assert!((500.0..560.0).contains(&p50), "p50 {p50}");
}

#[test]
fn a_rate_sweep_stops_where_the_server_cannot_keep_up() {
    let _serial = serial();
    // One request at a time, 100 ms each: at most 10 req/s, the rest queues (FIFO).
    let free_at = Arc::new(Mutex::new(Instant::now()));
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let log = arrivals.clone();
    let server = FakeServer::start("queue-model", move |_req| {
        let now = Instant::now();
        log.lock().unwrap().push(now);
        let mut free = free_at.lock().unwrap();
        let done = (*free).max(now) + Duration::from_millis(100);
        *free = done;
        Reply::content(&words(10)).after(done - now)
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("fake={}", server.url());
    let out_dir = dir.path().join("run").display().to_string();
    let out = coherence(
        &soak_args(
            &url,
            &out_dir,
            &[
                "--duration",
                "1500ms",
                "--rate",
                "2,20,40",
                "--json",
                "--quiet",
            ],
        ),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let sweep = &r["sweep"];
    assert_eq!(sweep["ran"], json!([2.0, 20.0]), "{sweep}");
    assert_eq!(sweep["saturated_at"], 20.0);
    assert_eq!(sweep["sustained"], 2.0);
    let verdict = sweep["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("saturated at 20 req/s") && verdict.contains("not run: 40"),
        "{verdict}"
    );
    let steps = r["steps"].as_array().unwrap();
    assert!(steps[0]["saturated"].is_null(), "{}", steps[0]);
    let why = steps[1]["saturated"].as_str().unwrap();
    assert!(why.contains("achieved"), "{why}");
    // The server served about 10 req/s however many were offered.
    let achieved = steps[1]["achieved_rps"].as_f64().unwrap();
    assert!((8.5..11.0).contains(&achieved), "achieved {achieved}");
    assert_eq!(
        arrivals.lock().unwrap().len(),
        r["requests"].as_u64().unwrap() as usize
    );
    let md = std::fs::read_to_string(dir.path().join("run/soak.md")).unwrap();
    assert!(
        md.contains("## Load steps") && md.contains("Sweep: saturated at 20"),
        "{md}"
    );
}

#[test]
fn goodput_follows_the_injected_latency_and_the_per_token_fit_finds_it() {
    let _serial = serial();
    // 50 ms fixed plus 1 ms per token; every reply fills its budget (300, 500 or 800).
    let injected = Arc::new(Mutex::new(Vec::new()));
    let log = injected.clone();
    let server = FakeServer::start("slo-model", move |req| {
        let tokens = req.max_tokens().unwrap_or(1);
        let ms = 50 + tokens;
        log.lock().unwrap().push(ms);
        Reply {
            kind: coherence_testkit::ReplyKind::Answer {
                content: Some(words(12)),
                reasoning: None,
                finish_reason: "length".into(),
                completion_tokens: tokens,
            },
            delay: Duration::from_millis(ms),
            headers: Vec::new(),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let url = format!("fake={}", server.url());
    let out_dir = dir.path().join("run").display().to_string();
    let out = coherence(
        &soak_args(
            &url,
            &out_dir,
            &[
                "--duration",
                "3s",
                "--concurrency",
                "6",
                "--kinds",
                "chat",
                "--slo-e2e-ms",
                "700",
                "--slo-tpot-ms",
                "1.2",
                "--json",
                "--quiet",
            ],
        ),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let injected = injected.lock().unwrap().clone();
    let g = &r["goodput"];
    assert_eq!(g["requests"], injected.len());
    // Budgets 300 and 500 answer in 350 and 550 ms, within 700; 800 takes 850 ms.
    let truth = injected.iter().filter(|ms| **ms <= 700).count();
    assert_eq!(g["within_slo"], truth, "{g}");
    let share = g["within_slo_share"].as_f64().unwrap();
    assert!(
        (share - truth as f64 / injected.len() as f64).abs() < 1e-3,
        "{g}"
    );
    let wall = r["wall_s"].as_f64().unwrap();
    let rps = g["requests_per_s"].as_f64().unwrap();
    assert!(
        (rps - truth as f64 / wall).abs() / rps < 0.05,
        "{rps} vs {truth} in {wall} s"
    );
    let fit = &g["fit"];
    assert_eq!(fit["budgets"], json!([300, 800]));
    let b = fit["per_token_ms"].as_f64().unwrap();
    assert!((b - 1.0).abs() < 0.03, "per token {b} ms, injected 1");
    let a = fit["fixed_ms"].as_f64().unwrap();
    assert!((45.0..80.0).contains(&a), "fixed {a} ms, injected 50");
}

/// Right on the letters and capital prompts, wrong on the JSON and eggs ones, plain words for the
/// rest of the traffic; every question it saw is logged.
fn half_right_server(seen: Arc<Mutex<Vec<String>>>) -> FakeServer {
    FakeServer::start("graded-model", move |req| {
        let q = req.question();
        seen.lock().unwrap().push(q.clone());
        let reply = match q.as_str() {
            LETTERS_Q | CAPITAL_Q => Reply::content(correct_answer(&q)),
            JSON_Q => Reply::content("{\"n\": 3}"),
            EGGS_Q => Reply::content("9 * 2 = 16, so she makes $16."),
            _ => Reply::content(&words(20)),
        };
        reply.after(Duration::from_millis(20))
    })
}

#[test]
fn graded_accuracy_matches_what_the_server_got_right_and_wrong() {
    let _serial = serial();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = half_right_server(seen.clone());
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path()).display().to_string();
    let url = format!("fake={}", server.url());
    let out_dir = dir.path().join("run").display().to_string();
    let out = coherence(
        &soak_args(
            &url,
            &out_dir,
            &[
                "--duration",
                "2s",
                "--concurrency",
                "3",
                "--graded",
                "--graded-share",
                "0.5",
                "--catalogue",
                &catalogue,
                "--json",
                "--quiet",
            ],
        ),
        dir.path(),
        &[],
    );
    assert_eq!(
        exit_code(&out),
        0,
        "wrong answers alone do not fail a soak: {}",
        stderr(&out)
    );
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let seen = seen.lock().unwrap().clone();
    let right = seen
        .iter()
        .filter(|q| [LETTERS_Q, CAPITAL_Q].contains(&q.as_str()))
        .count();
    let wrong = seen
        .iter()
        .filter(|q| [JSON_Q, EGGS_Q].contains(&q.as_str()))
        .count();
    let g = &r["graded"];
    assert_eq!(g["correct"], right, "{g}");
    assert_eq!(g["wrong"], wrong, "{g}");
    assert_eq!(g["requests"], right + wrong);
    assert_eq!(g["unscored"], 0);
    let acc = g["accuracy"].as_f64().unwrap();
    assert!(
        (acc - right as f64 / (right + wrong) as f64).abs() < 1e-3,
        "{g}"
    );
    // Half the traffic is graded, spread evenly, and every chat prompt (not the raw completion one)
    // is sent in rotation.
    let n = r["requests"].as_u64().unwrap() as usize;
    assert!(
        ((right + wrong) as i64 - (n / 2) as i64).abs() <= 1,
        "{} of {n}",
        right + wrong
    );
    assert_eq!(r["settings"]["graded_prompts"].as_array().unwrap().len(), 4);
    let windows = g["by_window"].as_array().unwrap();
    let total: u64 = windows
        .iter()
        .map(|w| w["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, right + wrong);
    assert!(windows.len() >= 2, "{windows:?}");
    assert_eq!(g["by_level"][0]["concurrency"], 3);
    // The fake always answers the same: every prompt is stable.
    assert_eq!(g["stability"]["stable"], g["stability"]["prompts"]);
    assert_eq!(g["stability"]["unstable"], json!([]));
    let graded = r["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "graded")
        .unwrap();
    assert_eq!(graded["requests"], right + wrong);
    let md = std::fs::read_to_string(dir.path().join("run/soak.md")).unwrap();
    assert!(
        md.contains("## Graded prompts") && md.contains("| window (s) |"),
        "{md}"
    );
    // The rest of the traffic still rotates through every kind.
    assert_eq!(
        r["by_kind"].as_array().unwrap().len(),
        7,
        "{}",
        r["by_kind"]
    );
}

#[test]
fn the_sanity_sweep_counts_bad_outputs_per_level() {
    let _serial = serial();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = half_right_server(seen);
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path()).display().to_string();
    let url = format!("fake={}", server.url());
    let out_dir = dir.path().join("run").display().to_string();
    let out = coherence(
        &soak_args(
            &url,
            &out_dir,
            &[
                "--duration",
                "1s",
                "--sanity",
                "--sanity-levels",
                "1,3",
                "--catalogue",
                &catalogue,
                "--json",
                "--quiet",
            ],
        ),
        dir.path(),
        &[],
    );
    assert_eq!(
        exit_code(&out),
        1,
        "wrong graded answers fail the sanity sweep: {}",
        stderr(&out)
    );
    let r: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let s = &r["sanity"];
    assert_eq!(s["passed"], false);
    let levels = s["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[0]["concurrency"], 1);
    assert_eq!(levels[1]["concurrency"], 3);
    for l in levels {
        assert!(l["wrong"].as_u64().unwrap() > 0, "{l}");
        assert_eq!(l["bad"], l["wrong"], "{l}");
        assert_eq!(l["errors"], 0);
    }
    assert_eq!(
        r["graded"]["wrong"].as_u64().unwrap(),
        levels
            .iter()
            .map(|l| l["wrong"].as_u64().unwrap())
            .sum::<u64>()
    );
    assert_eq!(r["steps"].as_array().unwrap().len(), 2);
}
