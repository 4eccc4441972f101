//! `determinism --under-load`, `--cache-states` and `--samples` against fakes whose answers do
//! or do not depend on concurrent requests and on what was sent before. Fillers get a short
//! delayed reply so that they are in flight while the probe runs; everything is on loopback.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{json, Value};

/// How long a fake keeps a filler request in flight.
const FILLER_DELAY: Duration = Duration::from_millis(400);
/// The wrong capital, and the answer the exact scorer reads from it.
const LYON: &str = "The capital of France is Lyon.";
const LYON_KEY: &str = "the capital of france is lyon";

fn is_filler(req: &Incoming) -> bool {
    req.question().contains("(Filler request")
}

/// A fake that answers every probe correctly; `wrong_when(fillers in flight)` turns the capital
/// answer to Lyon. Fillers are answered after `FILLER_DELAY`, and the fake counts them in flight
/// from when each arrived until its reply is due.
fn load_server(wrong_when: impl Fn(usize) -> bool + Send + Sync + 'static) -> FakeServer {
    let due: Arc<Mutex<Vec<Instant>>> = Arc::default();
    FakeServer::start("m", move |req| {
        let now = Instant::now();
        let mut due = due.lock().unwrap();
        due.retain(|t| *t > now);
        if is_filler(req) {
            due.push(now + FILLER_DELAY);
            return Reply::content("A long story ...").after(FILLER_DELAY);
        }
        match req.question().as_str() {
            CAPITAL_Q if wrong_when(due.len()) => Reply::content(LYON),
            q => Reply::content(correct_answer(q)),
        }
    })
}

fn determinism(dir: &std::path::Path, server: &FakeServer, extra: &[&str]) -> std::process::Output {
    let catalogue = write_catalogue(dir);
    let mut args: Vec<String> = [
        "determinism",
        "--catalogue",
        &catalogue.display().to_string(),
        "--endpoint",
        &format!("solo={}", server.url()),
        "--out",
        "run",
        "--backoff-ms",
        "10",
        "--quiet",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    coherence(&args, dir, &[])
}

fn rows<'a>(r: &'a Value, field: &str, prompt: &str) -> Vec<&'a Value> {
    r[field]
        .as_array()
        .map(|a| a.iter().filter(|x| x["prompt"] == json!(prompt)).collect())
        .unwrap_or_default()
}

/// The results validate against the committed schema, new fields included.
fn assert_schema(results: &Value) {
    let schema: Value =
        serde_json::from_str(include_str!("../../src/report/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(results)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

fn load_lines(run: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("load.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_server_that_never_varies_reads_batch_invariant() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let server = load_server(|_| false);
    let out = determinism(
        dir.path(),
        &server,
        &[
            "--only",
            "capital,eggs",
            "--repeats",
            "2",
            "--under-load",
            "4,2",
        ],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let run = dir.path().join("run");
    let r = results(&run);
    assert_eq!(
        r["load_verdicts"],
        json!([{"endpoint": "solo", "verdict": "batch_invariant", "changes_at": null,
                "completions_change_at": null, "levels": [0, 2, 4], "prompts": 2,
                "prompts_changed": 0,
                "statement": "batch-invariant: no answer changed at load 2, 4 (2 prompts)"}])
    );
    assert_schema(&r);
    let capital = rows(&r, "under_load", "capital");
    assert_eq!(capital.len(), 3, "levels 0 (always), 2 and 4");
    for row in &capital {
        assert_eq!(row["requests"], json!(2));
        assert_eq!(row["unique_completions"], json!(1));
        assert_eq!(row["histogram"], json!({"paris": 2}));
        assert_eq!(row["changed"], json!(false));
    }
    let four = capital.iter().find(|x| x["load"] == json!(4)).unwrap();
    let seen = four["fillers_in_flight"].as_f64().unwrap();
    assert!(
        seen > 3.0,
        "fillers were in flight when the probe went: {seen}"
    );
    // Only probes are journalled: 2 prompts x 2 repeats x 3 levels; fillers are not.
    let lines = load_lines(&run);
    assert_eq!(lines.len(), 12);
    assert!(lines
        .iter()
        .all(|l| l["prompt"] == json!("capital") || l["prompt"] == json!("eggs")));
    let fillers = server
        .completion_requests()
        .into_iter()
        .filter(is_filler)
        .count();
    assert!(fillers >= 6, "fillers kept in flight: {fillers}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("## Under load (batch invariance)"),
        "{report}"
    );
    assert!(report.contains("| solo | batch-invariant |"), "{report}");
    assert!(stdout(&out).contains("under load: solo: batch-invariant"));
}

#[test]
fn a_server_that_changes_with_four_requests_in_flight_reads_changes_at_load_4() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let server = load_server(|in_flight| in_flight >= 4);
    let out = determinism(
        dir.path(),
        &server,
        &[
            "--only",
            "capital,eggs",
            "--repeats",
            "3",
            "--under-load",
            "2,4,8",
            "--logprobs",
        ],
    );
    assert_eq!(
        exit_code(&out),
        1,
        "the answers alone are stable, under load they are not: {}",
        stderr(&out)
    );
    let run = dir.path().join("run");
    let r = results(&run);
    assert_schema(&r);
    assert_eq!(r["nondeterministic"], json!(0));
    assert_eq!(r["gate"]["failed"], json!(["changes_at_load>0"]));
    let v = &r["load_verdicts"][0];
    assert_eq!(v["verdict"], json!("changes_at_load"), "{v}");
    assert_eq!(v["changes_at"], json!(4));
    assert_eq!(v["prompts_changed"], json!(1), "eggs never changes");
    let capital = rows(&r, "under_load", "capital");
    let at = |k: u32| *capital.iter().find(|x| x["load"] == json!(k)).unwrap();
    assert_eq!(at(0)["histogram"], json!({"paris": 3}));
    assert_eq!(at(2)["changed"], json!(false));
    assert_eq!(at(8)["changed"], json!(true));
    assert_eq!(at(8)["histogram"][LYON_KEY], json!(3));
    let d = &at(8)["first_divergence"];
    assert_eq!(d["char_offset"], json!(25), "{d}");
    assert_eq!(
        d["token_index"],
        json!(5),
        "\"The\" \" capital\" \" of\" \" France\" \" is\" \" Paris.\""
    );
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("changes at load 4"), "{report}");
}

#[test]
fn a_server_whose_answer_follows_the_previous_prompt_is_cache_dependent() {
    let dir = tempfile::tempdir().unwrap();
    // The first request after a different prompt gets a wrong capital; a repeat gets it right.
    let last = Mutex::new(String::new());
    let server = FakeServer::start("m", move |req| {
        let q = req.question();
        let after_other = *last.lock().unwrap() != q;
        *last.lock().unwrap() = q.clone();
        if q.ends_with(CAPITAL_Q) && after_other {
            Reply::content(LYON)
        } else {
            Reply::content(correct_answer(&q))
        }
    });
    let out = determinism(
        dir.path(),
        &server,
        &[
            "--only",
            "capital,eggs",
            "--repeats",
            "2",
            "--cache-states",
            "--fail-on",
            "fail>0",
        ],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&dir.path().join("run"));
    assert_schema(&r);
    let v = &r["cache_verdicts"][0];
    assert_eq!(v["verdict"], json!("cache_dependent"), "{v}");
    assert_eq!(v["dependent"], json!(["capital"]));
    let states: Vec<(Value, Value)> = rows(&r, "cache_states", "capital")
        .iter()
        .map(|x| (x["state"].clone(), x["histogram"].clone()))
        .collect();
    assert_eq!(
        states,
        [
            (json!("cold"), json!({LYON_KEY: 2})),
            (json!("warm"), json!({"paris": 2})),
            (json!("prefix_cold"), json!({LYON_KEY: 2})),
            (json!("prefix_cached"), json!({LYON_KEY: 2})),
        ]
    );
    // The prefix states carry the long preamble before the question.
    let prefixed = server
        .completion_requests()
        .into_iter()
        .filter(|q| q.question().ends_with(CAPITAL_Q) && q.question().len() > 1000)
        .count();
    assert_eq!(prefixed, 4);
    let report = std::fs::read_to_string(dir.path().join("run/report.md")).unwrap();
    assert!(report.contains("## Cache state"), "{report}");
    assert!(report.contains("cache-dependent"), "{report}");

    // A server that ignores what came before is cache-independent.
    let dir = tempfile::tempdir().unwrap();
    let stable = correct_server();
    let out = determinism(
        dir.path(),
        &stable,
        &["--only", "capital", "--repeats", "1", "--cache-states"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&dir.path().join("run"));
    assert_eq!(
        r["cache_verdicts"][0]["verdict"],
        json!("cache_independent")
    );
}

#[test]
fn load_and_cache_verdicts_feed_the_gate() {
    let _serial = serial();
    let gated = |server: &FakeServer, extra: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["--only", "capital,eggs", "--repeats", "2"];
        args.extend(extra);
        let out = determinism(dir.path(), server, &args);
        let r = results(&dir.path().join("run"));
        (exit_code(&out), r["gate"]["failed"].clone(), dir, out)
    };
    let under_load = ["--under-load", "4", "--fail-on", "changes_at_load>0"];

    let varying = load_server(|in_flight| in_flight >= 4);
    let (code, failed, dir, out) = gated(&varying, &under_load);
    assert_eq!(code, 1, "{}", stderr(&out));
    assert_eq!(failed, json!(["changes_at_load>0"]));
    assert!(stdout(&out).contains("gate failed: changes_at_load>0"));
    // `score` reads load.jsonl for the gate too, with the run's gate or another.
    let run = dir.path().join("run").display().to_string();
    let rescore = |fail_on: &[&str]| {
        let mut args = vec!["score", run.as_str()];
        args.extend(fail_on);
        exit_code(&coherence(&args, dir.path(), &[]))
    };
    assert_eq!(rescore(&[]), 1, "the run's own gate");
    assert_eq!(rescore(&["--fail-on", "changes_at_load>1"]), 0);
    assert_eq!(rescore(&["--fail-on", "nondeterministic>0"]), 0);

    let steady = load_server(|_| false);
    let (code, failed, _dir, out) = gated(&steady, &under_load);
    assert_eq!(code, 0, "{}", stderr(&out));
    assert_eq!(failed, json!([]));
    // Without the phase the metric is undefined, so even `=0` does not hold.
    let (code, _, _dir, out) = gated(&steady, &["--fail-on", "changes_at_load=0"]);
    assert_eq!(code, 0, "{}", stderr(&out));
    let measured = ["--under-load", "4", "--fail-on", "changes_at_load=0"];
    let (code, _, _dir, out) = gated(&steady, &measured);
    assert_eq!(code, 1, "measured, and zero: {}", stderr(&out));

    // A cache-dependent answer fails the default gate of `determinism`; a steady one does not.
    // (The first capital request after another prompt is wrong, so its repeats, each sent after
    // eggs, agree: one request at a time, so that they arrive in the order they are sent.)
    let last = Mutex::new(String::new());
    let cache_dependent = FakeServer::start("m", move |req| {
        let q = req.question();
        let after_other = std::mem::replace(&mut *last.lock().unwrap(), q.clone()) != q;
        Reply::content(if q.ends_with(CAPITAL_Q) && after_other {
            LYON
        } else {
            correct_answer(&q)
        })
    });
    let one_at_a_time = ["--cache-states", "--concurrency", "1"];
    let (code, failed, _dir, out) = gated(&cache_dependent, &one_at_a_time);
    assert_eq!(code, 1, "{}", stderr(&out));
    assert_eq!(failed, json!(["cache_dependent>0"]));
    let (code, failed, _dir, out) = gated(&steady, &["--cache-states"]);
    assert_eq!(code, 0, "{}", stderr(&out));
    assert_eq!(failed, json!([]));
}

#[test]
fn samples_report_unique_completions_identical_prefix_and_divergence_points() {
    let dir = tempfile::tempdir().unwrap();
    // By arrival: every 5th is Lyon, calls 3 and 17 are worded differently.
    let server = FakeServer::start("m", |req| {
        let text = match req.call {
            c if c % 5 == 0 => LYON,
            c if c % 7 == 3 => "The capital is Paris.",
            _ => "The capital of France is Paris.",
        };
        Reply::content(text)
    });
    let out = determinism(
        dir.path(),
        &server,
        &[
            "--only",
            "capital",
            "--repeats",
            "2",
            "--samples",
            "20",
            "--logprobs",
            "--fail-on",
            "fail>0",
        ],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let run = dir.path().join("run");
    let r = results(&run);
    assert_schema(&r);
    let s = &r["samples"][0];
    assert_eq!(s["prompt"], json!("capital"));
    assert_eq!(s["requests"], json!(20));
    assert_eq!(s["unique_completions"], json!(3));
    assert_eq!(s["modal_completions"], json!(14));
    assert_eq!(s["histogram"], json!({LYON_KEY: 4, "paris": 16}));
    assert_eq!(s["identical_prefix_chars"], json!(12), "\"The capital \"");
    assert_eq!(s["identical_prefix_tokens"], json!(2));
    assert_eq!(s["divergence_unit"], json!("token"));
    assert_eq!(s["divergence_points"], json!({"2": 2, "5": 4}));
    assert_eq!(load_lines(&run).len(), 20);
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("## Samples: `capital` on solo"), "{report}");
    assert!(
        report.contains("20 completions (20 answered), 3 unique"),
        "{report}"
    );
    assert!(report.contains("| token 5 | 4 |"), "{report}");
}

#[test]
fn probe_flags_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let server = correct_server();
    let out = determinism(dir.path(), &server, &["--samples", "5"]);
    assert_eq!(exit_code(&out), 2);
    assert!(
        stderr(&out).contains("--samples: name exactly one prompt"),
        "{}",
        stderr(&out)
    );
    let (out, _) = compare(
        dir.path(),
        &[("a", &server), ("b", &server)],
        &["--under-load", "4"],
    );
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("only for `coherence determinism`"));
    assert!(server.completion_requests().is_empty());
}

#[test]
fn a_resumed_run_sends_only_the_probes_it_lost() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let server = load_server(|_| false);
    let out = determinism(
        dir.path(),
        &server,
        &[
            "--only",
            "capital,eggs",
            "--repeats",
            "2",
            "--under-load",
            "2",
            "--cache-states",
        ],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let run = dir.path().join("run");
    let full = std::fs::read_to_string(run.join("load.jsonl")).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(lines.len(), 2 * 2 * (2 + 4));
    // As a kill leaves it: the last level-2 probes gone, the cache phase gone, a torn line.
    let kept = 6;
    let torn = format!("{}\n{}", lines[..kept].join("\n"), &lines[kept][..20]);
    std::fs::write(run.join("load.jsonl"), torn).unwrap();
    // Scored as it stands, the run is incomplete: the lost probes are missing, not absent.
    let scored = coherence(&["score", run.to_str().unwrap()], dir.path(), &[]);
    assert_eq!(exit_code(&scored), 3, "{}", stdout(&scored));
    let r = results(&run);
    assert_eq!(r["complete"], json!(false));
    assert_eq!(r["missing"], json!(2 * 2 * (2 + 4) - kept));
    let before = server.completion_requests().len();
    let out = coherence(
        &["determinism", "--resume", run.to_str().unwrap(), "--quiet"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let sent: Vec<Incoming> = server.completion_requests()[before..].to_vec();
    let probes = sent
        .iter()
        .filter(|q| q.question() == CAPITAL_Q || q.question() == EGGS_Q)
        .count();
    // 2 level-2 probes and 4 cache sequences (2 plain probes each, plus their prefix probes).
    assert_eq!(probes, 2 + 4 * 2, "only what was lost is sent again");
    let r = results(&run);
    assert_eq!(r["under_load"].as_array().unwrap().len(), 4);
    assert_eq!(r["cache_states"].as_array().unwrap().len(), 8);
    assert_eq!(r["load_verdicts"][0]["verdict"], json!("batch_invariant"));
    assert_eq!(r["complete"], json!(true));
}

#[cfg(unix)]
#[test]
fn sigterm_during_the_load_phase_keeps_every_probe_that_returned() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // Probes take 150 ms each, so the phase is still running when the signal comes.
    let server = FakeServer::start("m", |req| {
        if is_filler(req) {
            return Reply::content("A long story ...").after(FILLER_DELAY);
        }
        Reply::content(correct_answer(&req.question())).after(Duration::from_millis(150))
    });
    let catalogue = write_catalogue(dir.path());
    let run = dir.path().join("run");
    let args: Vec<String> = [
        "determinism",
        "--catalogue",
        catalogue.to_str().unwrap(),
        "--endpoint",
        &format!("solo={}", server.url()),
        "--out",
        run.to_str().unwrap(),
        "--only",
        "capital,eggs",
        "--repeats",
        "4",
        "--under-load",
        "2",
        "--quiet",
    ]
    .map(String::from)
    .to_vec();
    let journal = run.join("load.jsonl");
    let (out, _) = sigterm_when(&args, "three probes journalled", || {
        std::fs::read_to_string(&journal).is_ok_and(|t| t.lines().count() >= 3)
    });
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let kept = load_lines(&run).len();
    assert!((3..16).contains(&kept), "{kept} probes kept of 16");
    assert!(!results(&run)["under_load"].as_array().unwrap().is_empty());
    let out = coherence(
        &["determinism", "--resume", run.to_str().unwrap(), "--quiet"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(load_lines(&run).len(), 16, "the resume sent only the rest");
}
