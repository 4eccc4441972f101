//! Absurd request limits are refused with exit 2 naming the flag or the file and line, and a
//! generous limit starts no more requests than there are to send (issue 21, item 1).

use std::time::{Duration, Instant};

use crate::common::*;

#[test]
fn an_absurd_concurrency_flag_is_refused_naming_the_flag() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path());
    for n in [
        "18446744073709551615",
        "9223372036854775807",
        "1000000",
        "1025",
    ] {
        let out = coherence(
            &[
                "compare",
                "--catalogue",
                catalogue.to_str().unwrap(),
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
                "--endpoint",
                "b=http://127.0.0.1:9/v1",
                "--concurrency",
                n,
            ],
            dir.path(),
            &[],
        );
        assert_eq!(exit_code(&out), 2, "--concurrency {n}: {}", stderr(&out));
        assert!(stderr(&out).contains("--concurrency"), "{}", stderr(&out));
    }
}

#[test]
fn an_absurd_concurrency_in_the_config_file_is_refused_naming_file_and_line() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path());
    std::fs::write(
        dir.path().join("coherence.toml"),
        "[endpoint.a]\nurl = \"http://127.0.0.1:9/v1\"\nconcurrency = 1000000\n\n\
         [endpoint.b]\nurl = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let out = coherence(
        &[
            "compare",
            "--catalogue",
            catalogue.to_str().unwrap(),
            "a",
            "b",
            "--dry-run",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("coherence.toml:3"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_largest_concurrency_sends_a_few_requests_at_once() {
    let _serial = serial();
    let server = correct_server();
    let dir = tempfile::tempdir().unwrap();
    let began = Instant::now();
    let (out, run) = compare(
        dir.path(),
        &[("a", &server), ("b", &server)],
        &["--concurrency", "1024"],
    );
    assert!(exit_code(&out) != 2, "{}", stderr(&out));
    assert!(run.join("records.jsonl").exists());
    assert!(began.elapsed() < Duration::from_secs(20));
}

/// `--max-rps 10`: the reference's 5 prompts and its GET /models are 6 attempts, so its last
/// starts at least half a second after its first; with retries counted too, a 503 then an
/// answer on every prompt makes 11 attempts, at least a second apart end to end.
#[test]
fn max_rps_spaces_every_attempt_to_an_endpoint_retries_included() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    let b = FakeServer::start("test-model", move |req| {
        if seen.lock().unwrap().insert(req.question()) {
            Reply::status(503, "busy")
        } else {
            Reply::content(correct_answer(&req.question()))
        }
    });
    let started = Instant::now();
    let (out, _) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--max-rps", "10"]);
    let took = started.elapsed();
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        b.completion_requests().len(),
        10,
        "each prompt retried once"
    );
    assert!(
        took >= Duration::from_millis(1000),
        "11 attempts at 10 per second took {took:?}"
    );

    let bad = coherence(&["compare", "--max-rps", "0"], dir.path(), &[]);
    assert_eq!(exit_code(&bad), 2);
    assert!(stderr(&bad).contains("--max-rps"), "{}", stderr(&bad));
}
