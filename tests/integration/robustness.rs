//! Hostile input and hostile servers at the face: a closed stdout, flags and config files that
//! would silently change a run, keys echoed back in escaped form, and `Retry-After` waits.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use coherence_testkit::ReplyKind;

use crate::common::{
    coherence, compare, correct_server, exit_code, stderr, write_catalogue, FakeServer, Reply,
};

/// Run the binary with its stdout a pipe whose reading end is closed before it writes anything.
fn into_closed_pipe(args: &[&str], cwd: &Path) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(args)
        .current_dir(cwd)
        .env_remove("OPENAI_API_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start coherence");
    drop(child.stdout.take());
    child.wait_with_output().expect("wait for coherence")
}

fn assert_quiet_success(what: &str, out: &std::process::Output) {
    assert_eq!(exit_code(out), 0, "{what}: {}", stderr(out));
    assert!(stderr(out).is_empty(), "{what}: {}", stderr(out));
}

#[test]
fn a_closed_stdout_ends_every_printing_command_quietly_with_0() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    assert_quiet_success("prompts list", &into_closed_pipe(&["prompts", "list"], cwd));

    let smoke = FakeServer::start("m", |_| Reply::content("COHERENCE SMOKE OK"));
    let url = format!("a={}", smoke.url());
    assert_quiet_success(
        "smoke",
        &into_closed_pipe(&["smoke", "--endpoint", &url], cwd),
    );

    let fast = FakeServer::start("m", |req| {
        if req.path.ends_with("/metrics") {
            return Reply::status(404, "no metrics");
        }
        Reply::content("one two three four five six seven eight")
    });
    let url = format!("a={}", fast.url());
    let bench_dir = cwd.join("bench").display().to_string();
    let bench = into_closed_pipe(
        &[
            "bench",
            "--endpoint",
            &url,
            "--out",
            &bench_dir,
            "--quiet",
            "--warmup",
            "0",
            "--runs",
            "1",
            "--concurrency",
            "none",
            "--prefill",
            "none",
        ],
        cwd,
    );
    assert_quiet_success("bench", &bench);

    let soak_dir = cwd.join("soak").display().to_string();
    let soak = into_closed_pipe(
        &[
            "soak",
            "--endpoint",
            &url,
            "--out",
            &soak_dir,
            "--quiet",
            "--duration",
            "1s",
            "--concurrency",
            "1",
        ],
        cwd,
    );
    assert_quiet_success("soak", &soak);
}

#[test]
fn a_closed_stdout_keeps_a_failed_gate_and_an_incomplete_run() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let cat = write_catalogue(cwd).display().to_string();
    let good = correct_server();
    let wrong = FakeServer::start("test-model", |_| Reply::content("I don't know."));
    let down = FakeServer::start("test-model", |_| Reply::status(500, "down"));
    let a = format!("a={}", good.url());
    let (wrong, down) = (format!("b={}", wrong.url()), format!("b={}", down.url()));
    let exits = |what: &str, args: &[&str], code: i32| {
        let out = into_closed_pipe(args, cwd);
        assert_eq!(exit_code(&out), code, "{what}: {}", stderr(&out));
    };
    let (diff_run, failed_run) = (cwd.join("diff"), cwd.join("failed"));
    for (b, run, code) in [(&wrong, &diff_run, 1), (&down, &failed_run, 3)] {
        let run = run.display().to_string();
        let compare = [
            "compare",
            "--catalogue",
            &cat,
            "--endpoint",
            &a,
            "--endpoint",
            b,
            "--out",
            &run,
            "--control",
            "0",
            "--no-logprobs",
            "--quiet",
            "--retries",
            "0",
            "--fail-on",
            "diff>0",
        ];
        exits("compare", &compare, code);
        exits("score", &["score", &run], code);
    }
    let retries = ["--retries", "0"];
    let gone = "b=http://127.0.0.1:9/v1".to_string();
    for (smoke, contract, code) in [(&wrong, &wrong, 1), (&gone, &down, 3)] {
        exits(
            "smoke",
            &[&["smoke", "--endpoint", smoke][..], &retries].concat(),
            code,
        );
        let contract = ["contract", "--endpoint", contract];
        exits("contract", &[&contract[..], &retries].concat(), code);
    }
    let logprobs = [
        "logprobs",
        "--endpoint",
        &a,
        "--endpoint",
        &down,
        "--limit",
        "1",
    ];
    exits("logprobs", &[&logprobs[..], &retries].concat(), 3);
}

/// `coherence ARGS` from `dir`: exit 2, and stderr names `flag`.
fn refused(args: &[&str], dir: &Path, flag: &str) -> String {
    let out = coherence(args, dir, &[]);
    let err = stderr(&out);
    assert_eq!(exit_code(&out), 2, "{args:?}: {err}");
    assert!(err.contains(flag), "{args:?} should name {flag}: {err}");
    err
}

#[test]
fn flags_that_would_silently_change_a_run_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let cat = write_catalogue(dir.path()).display().to_string();
    let base = [
        "compare",
        "--catalogue",
        &cat,
        "--endpoint",
        "a=http://127.0.0.1:9/v1",
        "--endpoint",
        "b=http://127.0.0.1:9/v1",
        "--dry-run",
    ];
    let with = |extra: &[&'static str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |extra: &[&'static str], flag: &str| {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, dir.path(), flag)
    };
    run(&["--fail-on", ""], "--fail-on");
    run(&["--fail-on", ","], "--fail-on");
    run(&["--concurrency", "-1"], "--concurrency");
    run(&["--repeats", "-1"], "--repeats");
    let e = run(&["--param", "temperature=1.0"], "--param");
    assert!(e.contains("changes what is sampled"), "{e}");

    let e = refused(
        &[
            "compare",
            "--catalogue",
            &cat,
            "--endpoint",
            "a=http://h/v1?x=1",
            "--dry-run",
        ],
        dir.path(),
        "--endpoint",
    );
    assert!(e.contains("`?query` or `#fragment`"), "{e}");
    let e = refused(
        &[
            "compare",
            "--catalogue",
            &cat,
            "--endpoint",
            "a=http://user:sk-live-secret@h/v1",
            "--dry-run",
        ],
        dir.path(),
        "--endpoint",
    );
    assert!(!e.contains("sk-live-secret"), "the key is printed: {e}");
}

/// Every duration and rate flag is bounded when it is parsed: a value past its bounds is exit 2
/// naming the flag and the range, never a panic in a schedule's arithmetic later (`watch
/// --every 300000y` panicked after its first check), and never a pacer of one request in years.
#[test]
fn durations_and_rates_past_their_bounds_are_refused_naming_the_flag_and_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let watch = ["watch", "w", "--baseline", "missing-run"];
    let compare = [
        "compare",
        "--endpoint",
        "a=http://127.0.0.1:9/v1",
        "--dry-run",
    ];
    let cases: [(&[&str], &[&str], &str, &str); 9] = [
        (
            &watch,
            &["--every", "300000y"],
            "--every",
            "from 100ms to 1year",
        ),
        (&watch, &["--every", "0"], "--every", "from 100ms to 1year"),
        (
            &watch,
            &["--max-rps", "1e-9"],
            "--max-rps",
            "from 0.001 to 1000",
        ),
        (
            &compare,
            &["--max-rps", "1e-300"],
            "--max-rps",
            "from 0.001 to 1000",
        ),
        (
            &compare,
            &["--timeout", "100000000000"],
            "--timeout",
            "86400",
        ),
        (
            &compare,
            &["--backoff-ms", "18446744073709551615"],
            "--backoff-ms",
            "30000",
        ),
        (
            &["soak", "--endpoint", "a=http://127.0.0.1:9/v1"],
            &["--duration", "300000y"],
            "--duration",
            "from 1s to 30days",
        ),
        (
            &["contract", "--endpoint", "a=http://127.0.0.1:9/v1"],
            &["--deadline", "0"],
            "--deadline",
            "from 1s to 1day",
        ),
        (
            &["contract", "--endpoint", "a=http://127.0.0.1:9/v1"],
            &["--deadline", "1e40"],
            "--deadline",
            "from 1s to 1day",
        ),
    ];
    for (command, flag_value, flag, range) in cases {
        let args: Vec<&str> = command.iter().chain(flag_value).copied().collect();
        let e = refused(&args, dir.path(), flag);
        assert!(e.contains(range), "{args:?} should say {range}: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
}

#[test]
fn a_config_file_url_error_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("coherence.toml"),
        "[endpoint.a]\nmodel = \"m\"\nurl = \"http://h/v1#frag\"\n\n[endpoint.b]\nurl = \"http://h/v1\"\n",
    )
    .unwrap();
    let e = refused(
        &["compare", "a", "b", "--dry-run"],
        dir.path(),
        "coherence.toml:3:",
    );
    assert!(e.contains("`?query` or `#fragment`"), "{e}");
}

#[test]
fn an_empty_catalogue_says_so_instead_of_blaming_filters_never_given() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("empty");
    std::fs::create_dir_all(&cat).unwrap();
    std::fs::write(cat.join("factual.toml"), "").unwrap();
    let cat = cat.display().to_string();
    let out = coherence(
        &[
            "compare",
            "--catalogue",
            &cat,
            "--endpoint",
            "a=http://h/v1",
            "--endpoint",
            "b=http://h/v1",
            "--dry-run",
        ],
        dir.path(),
        &[],
    );
    let err = stderr(&out);
    assert_eq!(exit_code(&out), 2, "{err}");
    assert!(!err.contains("--only/--category"), "{err}");
}

#[test]
fn harmless_params_are_sent_and_recorded_in_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--param", "seed=42"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["sampling"]["params"]["seed"], 42, "{manifest}");
    assert_eq!(manifest["sampling"]["temperature"], 0.0);
}

#[test]
fn a_key_echoed_with_json_escapes_is_redacted_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let key = "sk-escaped-echo-9f8e7d";
    // The key as a JSON escape spells it: `sk\u002d...`; decoded, the answer holds it verbatim.
    let echo = FakeServer::start("test-model", |req| {
        let text = r#""your key is sk\u002descaped\u002decho-9f8e7d""#;
        let choice = if req.is_raw_completion() {
            format!(r#"{{"text":{text},"finish_reason":"stop"}}"#)
        } else {
            format!(
                r#"{{"message":{{"role":"assistant","content":{text}}},"finish_reason":"stop"}}"#
            )
        };
        Reply {
            kind: ReplyKind::Raw {
                status: 200,
                content_type: "application/json".into(),
                body: format!(r#"{{"model":"test-model","choices":[{choice}]}}"#).into_bytes(),
            },
            delay: Duration::ZERO,
            headers: Vec::new(),
        }
    });
    let (a, b) = (correct_server(), echo);
    let out = dir.path().join("run");
    let mut args =
        crate::common::compare_args(&write_catalogue(dir.path()), &[("a", &a), ("b", &b)], &out);
    args.extend(
        [
            "--quiet",
            "--backoff-ms",
            "10",
            "--api-key-env",
            "b=ECHO_KEY",
        ]
        .map(String::from),
    );
    let run = coherence(&args, dir.path(), &[("ECHO_KEY", key)]);
    assert!(exit_code(&run) <= 1, "{}", stderr(&run));
    for name in ["records.jsonl", "results.json", "report.md", "report.html"] {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(!text.contains(key), "{name} holds the key");
        assert!(
            !text.contains("escaped\\u002decho"),
            "{name} holds the escaped key"
        );
    }
}

#[test]
fn a_long_retry_after_is_not_waited_past_the_request_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start("m", |_| {
        Reply::status(503, "busy").header("Retry-After", "120")
    });
    let url = format!("a={}", server.url());
    let started = Instant::now();
    let out = coherence(
        &[
            "smoke",
            "--endpoint",
            &url,
            "--timeout",
            "2",
            "--retries",
            "2",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "waited {:?} for a 120 s Retry-After with --timeout 2",
        started.elapsed()
    );
}
