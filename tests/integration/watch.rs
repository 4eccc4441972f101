//! `coherence watch` against fakes: a baseline made by `compare`, then checks of a fake whose
//! numerics change at a known check, of one that perturbs a fifth of its requests, and of an
//! unchanged but jittery one over 100 checks; the history, the exit codes and the refusals.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common::*;

/// How the fake serves.
pub const SAME: u8 = 0;
/// Every answer's logprobs moved by 0.01 nats (another KV-cache dtype, another kernel).
pub const PERTURBED: u8 = 1;
/// Every fifth request perturbed, as a router sending a fifth of the traffic elsewhere would.
const FIFTH_PERTURBED: u8 = 2;
/// Logprobs jittered by a seeded 1e-3 on about a third of the requests, as a GPU's batch
/// nondeterminism does: unchanged, but A never answers exactly as it did.
const JITTERY: u8 = 3;

/// A fake answering any question with a fixed text per question, with logprobs and top-2
/// alternatives (a near-tie on some questions), served as `mode` says.
pub fn model_server(mode: Arc<AtomicU8>) -> FakeServer {
    let calls = Arc::new(AtomicU64::new(0));
    FakeServer::start("m", move |req| {
        let q = req.question();
        let h = q
            .bytes()
            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        let call = calls.fetch_add(1, Ordering::SeqCst);
        let shift = match mode.load(Ordering::SeqCst) {
            PERTURBED => 0.01,
            FIFTH_PERTURBED if call % 5 == 0 => 0.01,
            JITTERY => {
                let r = (call.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) % 3;
                if r == 0 {
                    1e-3
                } else {
                    0.0
                }
            }
            _ => 0.0,
        };
        let words = ["The", " answer", " is", &format!(" {}", h % 97)];
        let positions: Vec<Value> = words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let lp = -(((h >> (i * 8)) % 50) as f64) / 100.0 - shift;
                let gap = ((h >> (i * 5)) % 40) as f64 / 10.0 + 0.01;
                json!({"token": w, "logprob": lp,
                       "top_logprobs": [{"token": w, "logprob": lp},
                                        {"token": " no", "logprob": lp - gap}]})
            })
            .collect();
        Reply::json(
            200,
            json!({"choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": words.concat()},
                                "logprobs": {"content": positions}}],
                   "usage": {"prompt_tokens": 20, "completion_tokens": 4}}),
        )
    })
}

/// A baseline of `items` generated items made against `server` ([`watch_baseline`]).
fn baseline(dir: &std::path::Path, server: &FakeServer, items: usize) -> std::path::PathBuf {
    watch_baseline(dir, server, items, &[])
}

/// One `watch --once --json` of `server`; its exit code and the check it printed.
fn check_once(
    dir: &std::path::Path,
    base: &std::path::Path,
    server: &FakeServer,
    extra: &[&str],
) -> (i32, Value, std::process::Output) {
    let db = dir.join("history.sqlite");
    let mut args = vec![
        "watch".to_string(),
        "prod".into(),
        "--baseline".into(),
        base.display().to_string(),
        "--endpoint".into(),
        server.url(),
        "--db".into(),
        db.display().to_string(),
        "--once".into(),
        "--json".into(),
        "--quiet".into(),
        "--backoff-ms".into(),
        "10".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = coherence(&args, dir, &[]);
    let line = stdout(&out);
    let check = serde_json::from_str(line.lines().last().unwrap_or("null")).unwrap_or(Value::Null);
    (exit_code(&out), check, out)
}

#[test]
fn a_change_of_numerics_at_the_fifth_check_is_flagged_at_the_fifth_not_before() {
    let dir = tempfile::tempdir().unwrap();
    let mode = Arc::new(AtomicU8::new(SAME));
    let server = model_server(mode.clone());
    let base = baseline(dir.path(), &server, 60);
    let before = server.completion_requests().len();
    for n in 1..=5 {
        if n == 5 {
            mode.store(PERTURBED, Ordering::SeqCst);
        }
        let (code, check, out) = check_once(dir.path(), &base, &server, &["--probe", "30"]);
        if n < 5 {
            assert_eq!(code, 0, "check {n}: {check} {}", stderr(&out));
            assert_eq!(check["status"], json!("unchanged"), "check {n}: {check}");
            assert_eq!(check["identity"], json!("identical"), "check {n}: {check}");
            assert_eq!(check["substituted_share"], json!(0.0));
        } else {
            assert_eq!(code, 1, "check {n}: {check} {}", stderr(&out));
            assert_eq!(check["status"], json!("flagged"), "{check}");
            assert_eq!(check["identity"], json!("perturbed"), "{check}");
            assert!(check["e_value"].as_f64().unwrap() >= 100.0, "{check}");
            assert_eq!(check["substituted_share"], json!(1.0), "{check}");
        }
        assert_eq!(check["requests"], json!(30), "{check}");
        let run = std::path::PathBuf::from(check["run_dir"].as_str().unwrap());
        assert!(
            run.join("report.html").is_file(),
            "each check keeps its run folder"
        );
        assert!(
            run.starts_with(dir.path().join("checks").join("prod")),
            "{run:?}"
        );
    }
    let sent = server.completion_requests().len() - before;
    assert_eq!(sent, 5 * 30, "a check sends its probe and nothing else");
}

#[test]
fn a_fifth_of_requests_served_elsewhere_is_estimated_at_about_a_fifth() {
    let dir = tempfile::tempdir().unwrap();
    let base = baseline(
        dir.path(),
        &model_server(Arc::new(AtomicU8::new(SAME))),
        100,
    );
    let server = model_server(Arc::new(AtomicU8::new(FIFTH_PERTURBED)));
    let (code, check, out) = check_once(dir.path(), &base, &server, &["--probe", "50"]);
    assert_eq!(code, 1, "{check} {}", stderr(&out));
    let share = check["substituted_share"].as_f64().unwrap();
    let (low, high) = (
        check["substituted_low"].as_f64().unwrap(),
        check["substituted_high"].as_f64().unwrap(),
    );
    assert!((share - 0.2).abs() < 0.03, "{check}");
    assert!(
        low < 0.2 && 0.2 < high && low > 0.05 && high < 0.4,
        "{check}"
    );
}

#[test]
fn an_unchanged_jittery_deployment_is_not_flagged_over_a_hundred_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mode = Arc::new(AtomicU8::new(JITTERY));
    let server = model_server(mode);
    let base = baseline(dir.path(), &server, 40);
    let db = dir.path().join("history.sqlite");
    let out = coherence(
        &[
            "watch",
            "prod",
            "--baseline",
            base.to_str().unwrap(),
            "--endpoint",
            &server.url(),
            "--db",
            db.to_str().unwrap(),
            "--every",
            "100ms",
            "--checks",
            "100",
            "--probe",
            "20",
            "--concurrency",
            "4",
            "--json",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    let checks: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(checks.len(), 100, "{}", stderr(&out));
    let flagged = checks
        .iter()
        .filter(|c| c["status"] == json!("flagged"))
        .count();
    let discordant: u64 = checks
        .iter()
        .map(|c| c["pair_further"].as_u64().unwrap() + c["control_further"].as_u64().unwrap())
        .sum();
    assert!(
        discordant > 100,
        "the jitter shows: {discordant} discordant prompts"
    );
    eprintln!("{flagged} of 100 checks flagged, over {discordant} discordant prompts");
    assert!(
        flagged <= 1,
        "{flagged} of 100 checks flagged at --alpha 0.01"
    );
    assert_eq!(exit_code(&out), if flagged > 0 { 1 } else { 0 });
}

#[test]
fn bad_names_baselines_without_a_control_and_missing_baselines_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let server = model_server(Arc::new(AtomicU8::new(SAME)));
    let base = baseline(dir.path(), &server, 10);
    let (code, _, out) = {
        let out = coherence(
            &[
                "watch",
                "../x",
                "--baseline",
                base.to_str().unwrap(),
                "--once",
            ],
            dir.path(),
            &[],
        );
        (exit_code(&out), (), out)
    };
    assert_eq!(code, 2);
    assert!(stderr(&out).contains("NAME `../x`"), "{}", stderr(&out));

    let missing = coherence(
        &["watch", "prod", "--baseline", "nowhere", "--once"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&missing), 2);
    assert!(
        stderr(&missing).contains("--baseline"),
        "{}",
        stderr(&missing)
    );

    let run = dir.path().join("no-control");
    let out = coherence(
        &[
            "determinism",
            "--repeats",
            "1",
            "--suite",
            "generated",
            "--items",
            "10",
            "--endpoint",
            &format!("prod={}", server.url()),
            "--out",
            run.to_str().unwrap(),
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let (code, _, out) = check_once(dir.path(), &run, &server, &[]);
    assert_eq!(code, 2);
    assert!(
        stderr(&out).contains("compare --control N"),
        "{}",
        stderr(&out)
    );
}

/// `coherence history prod --db DB --json`: the stored checks.
fn stored(dir: &std::path::Path, db: &std::path::Path) -> Vec<Value> {
    let out = coherence(
        &["history", "prod", "--db", db.to_str().unwrap(), "--json"],
        dir,
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// A watcher killed (SIGKILL) between checks loses none of the checks it stored, and while it
/// runs a second watcher on the same database is refused, naming it.
#[cfg(unix)]
#[test]
fn a_killed_watcher_loses_no_stored_check_and_a_second_one_is_refused_meanwhile() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let server = model_server(Arc::new(AtomicU8::new(SAME)));
    let base = baseline(dir.path(), &server, 30);
    let db = dir.path().join("history.sqlite");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args([
            "watch",
            "prod",
            "--baseline",
            base.to_str().unwrap(),
            "--endpoint",
            &server.url(),
            "--db",
            db.to_str().unwrap(),
            "--every",
            "1h",
            "--probe",
            "20",
            "--json",
            "--quiet",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let printed: Value = serde_json::from_str(&first).unwrap();

    let (code, _, second) = check_once(dir.path(), &base, &server, &[]);
    assert_eq!(code, 2, "{}", stderr(&second));
    assert!(
        stderr(&second).contains(&format!("pid {}", child.id())),
        "{}",
        stderr(&second)
    );

    child.kill().unwrap();
    child.wait().unwrap();
    let checks = stored(dir.path(), &db);
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0]["started_at"], printed["started_at"]);
    assert_eq!(checks[0]["status"], json!("unchanged"));

    let (code, check, out) = check_once(dir.path(), &base, &server, &[]);
    assert_eq!(
        code,
        0,
        "the lock went with the killed watcher: {}",
        stderr(&out)
    );
    assert_eq!(stored(dir.path(), &db).len(), 2, "{check}");
}

/// `--keep-runs 1`: the unchanged checks but the newest lose their run folders, a flagged one
/// keeps its own, and the history keeps every check.
#[test]
fn keep_runs_removes_old_unchanged_run_folders_and_keeps_flagged_ones() {
    let dir = tempfile::tempdir().unwrap();
    let server = model_server(Arc::new(AtomicU8::new(SAME)));
    let base = baseline(dir.path(), &server, 30);
    let db = dir.path().join("history.sqlite");
    let out = coherence(
        &[
            "watch",
            "prod",
            "--baseline",
            base.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--every",
            "100ms",
            "--checks",
            "3",
            "--probe",
            "20",
            "--keep-runs",
            "1",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let perturbed = model_server(Arc::new(AtomicU8::new(PERTURBED)));
    let (code, flagged, _) = check_once(
        dir.path(),
        &base,
        &perturbed,
        &["--probe", "20", "--keep-runs", "1"],
    );
    assert_eq!(code, 1, "{flagged}");
    let checks = stored(dir.path(), &db);
    assert_eq!(checks.len(), 4);
    let kept: Vec<bool> = checks
        .iter()
        .map(|c| std::path::Path::new(c["run_dir"].as_str().unwrap()).exists())
        .collect();
    assert_eq!(kept, [false, false, true, true], "{checks:?}");
}

/// An endpoint that does not answer makes each check `incomplete` (stored, exit 3); the watch
/// goes on to its next check rather than ending.
#[test]
fn an_unreachable_endpoint_is_an_incomplete_check_and_the_watch_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = model_server(Arc::new(AtomicU8::new(SAME)));
    let base = baseline(dir.path(), &server, 30);
    let gone = {
        let s = model_server(Arc::new(AtomicU8::new(SAME)));
        s.url()
    };
    let db = dir.path().join("history.sqlite");
    let out = coherence(
        &[
            "watch",
            "prod",
            "--baseline",
            base.to_str().unwrap(),
            "--endpoint",
            &gone,
            "--db",
            db.to_str().unwrap(),
            "--every",
            "100ms",
            "--checks",
            "2",
            "--retries",
            "0",
            "--json",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
    let checks = stored(dir.path(), &db);
    assert_eq!(checks.len(), 2);
    for c in &checks {
        assert_eq!(c["status"], json!("incomplete"), "{c}");
        assert_eq!(c["failed"], c["requests"], "{c}");
        assert!(
            c["because"].as_str().unwrap().contains("nothing decided"),
            "{c}"
        );
        assert_eq!(c["substituted_share"], Value::Null);
    }
}

/// `--on-alert CMD` runs after a flagged check, never after an unchanged one, with the check on
/// its stdin; a failing command is a warning, and the check's exit code stands.
#[test]
fn on_alert_runs_the_command_after_a_flagged_check_only() {
    let dir = tempfile::tempdir().unwrap();
    let mode = Arc::new(AtomicU8::new(SAME));
    let server = model_server(mode.clone());
    let base = baseline(dir.path(), &server, 30);
    let alert = dir.path().join("alert.json");
    let command = format!("cat >> '{}'; exit 4", alert.display());
    let on_alert = ["--probe", "20", "--on-alert", &command];
    let (code, check, out) = check_once(dir.path(), &base, &server, &on_alert);
    assert_eq!(
        (code, &check["status"]),
        (0, &json!("unchanged")),
        "{}",
        stderr(&out)
    );
    assert!(!alert.exists(), "no alert after an unchanged check");

    mode.store(PERTURBED, Ordering::SeqCst);
    let (code, check, out) = check_once(dir.path(), &base, &server, &on_alert);
    assert_eq!(
        (code, &check["status"]),
        (1, &json!("flagged")),
        "{}",
        stderr(&out)
    );
    let told: Value = serde_json::from_str(&std::fs::read_to_string(&alert).unwrap()).unwrap();
    assert_eq!(told, check, "the command read the check the watch printed");
    assert!(
        stderr(&out).contains("warning: --on-alert: exited with 4"),
        "{}",
        stderr(&out)
    );
}

/// A baseline deleted (or moved) while the watch runs: the next check says the baseline is
/// gone, not that "0 of N requests failed".
#[test]
fn a_baseline_deleted_during_the_watch_is_said_to_be_gone() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let server = model_server(Arc::new(AtomicU8::new(SAME)));
    let base = baseline(dir.path(), &server, 10);
    let db = dir.path().join("history.sqlite");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args([
            "watch",
            "prod",
            "--baseline",
            base.to_str().unwrap(),
            "--endpoint",
            &server.url(),
            "--db",
            db.to_str().unwrap(),
            "--every",
            "2s",
            "--checks",
            "2",
            "--json",
            "--quiet",
        ])
        .current_dir(dir.path())
        .env_remove("OPENAI_API_KEY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_ne!(first["status"], json!("incomplete"), "{first}");
    std::fs::rename(&base, dir.path().join("moved")).unwrap();
    let second: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3));
    assert_eq!(second["status"], json!("incomplete"), "{second}");
    let because = second["because"].as_str().unwrap();
    assert!(
        because.contains("the baseline") && because.contains("is gone"),
        "{because}"
    );
    assert!(!because.contains("requests failed"), "{because}");
}
