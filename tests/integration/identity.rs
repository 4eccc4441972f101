//! The identity axis end to end against fakes: the reference's A-vs-A control is sent (repeat 1,
//! the reference only), decode logprobs are requested after the probe finds them harmless, and
//! results.json, the manifest and the report's first line carry both axes.

use serde_json::json;

use crate::common::*;

fn compare_with_control(
    dir: &std::path::Path,
    a: &FakeServer,
    b: &FakeServer,
) -> (std::process::Output, std::path::PathBuf) {
    let run = dir.join("run");
    let catalogue = write_catalogue(dir);
    let args = [
        "compare".to_string(),
        "--catalogue".into(),
        catalogue.display().to_string(),
        "--endpoint".into(),
        format!("a={}", a.url()),
        "--endpoint".into(),
        format!("b={}", b.url()),
        "--out".into(),
        run.display().to_string(),
        "--backoff-ms".into(),
        "10".into(),
        "--quiet".into(),
    ];
    (coherence(&args, dir, &[]), run)
}

#[test]
fn the_reference_answers_twice_and_both_axes_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare_with_control(dir.path(), &a, &b);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));

    let recs = records(&run);
    let control: Vec<_> = recs.iter().filter(|r| r["repeat"] == json!(1)).collect();
    assert_eq!(
        control.len(),
        5,
        "every prompt of the 5 answered twice by the reference"
    );
    assert!(control.iter().all(|r| r["endpoint"] == json!("a")));

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    // `--control auto`: the first 30 prompts, here all 5; one look, and no more to grow into.
    assert_eq!(manifest["control"], json!(5));
    assert_eq!(manifest["control_max"], json!(300));
    assert_eq!(manifest["control_looks"], json!([5]));
    assert_eq!(
        manifest["sampling"]["logprobs"],
        json!(true),
        "{}",
        manifest["sampling"]
    );
    let note = manifest["sampling"]["logprobs_note"].as_str().unwrap();
    assert!(note.starts_with("requested:"), "{note}");
    // Every chat request of the run asked for decode logprobs; the probe's plain requests did not.
    let chat: Vec<_> = b
        .completion_requests()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect();
    assert!(
        chat.iter()
            .filter(|r| r.body["logprobs"] == json!(true))
            .count()
            >= 4
    );

    let res = results(&run);
    let summary = &res["summary"];
    assert_eq!(
        summary["behaviour"]["verdict"],
        json!("undecided"),
        "{summary}"
    );
    let identity = &summary["identity"];
    assert_eq!(identity["verdict"], json!("undecided"), "{identity}");
    assert_eq!(identity["evidence"][0]["control_prompts"], json!(5));
    assert!(
        identity["because"][0]
            .as_str()
            .unwrap()
            .contains("`identical` needs 21 at least"),
        "{identity}"
    );
    assert!(res["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| !w.as_str().unwrap().contains("does not have")));

    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    let first = report
        .lines()
        .find(|l| l.starts_with("**Same model"))
        .unwrap();
    assert!(first.contains("identity: undecided"), "{first}");
    assert!(first.contains("behaviour: undecided"), "{first}");
    assert!(report.contains("## Identity"), "the identity section");
}

#[test]
fn a_server_whose_text_changes_with_logprobs_is_compared_by_text_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let b = FakeServer::start("test-model", |req| {
        let with = req.body.get("logprobs").is_some_and(|v| v == &json!(true));
        let answer = correct_answer(&req.question());
        Reply::content(if with {
            "Something else entirely."
        } else {
            answer
        })
    });
    let (out, run) = compare_with_control(dir.path(), &a, &b);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["sampling"]["logprobs"], json!(false));
    let note = manifest["sampling"]["logprobs_note"].as_str().unwrap();
    assert!(
        note.contains("b's greedy text") && note.contains("changes"),
        "{note}"
    );
    let identity = &results(&run)["summary"]["identity"];
    assert_eq!(
        identity["evidence"][0]["level"],
        json!("text"),
        "{identity}"
    );
}

/// A deployment of a model that answers each question with its own 30 words, and on 40% of
/// requests parts from them at a random word (other words from there on), as batch
/// nondeterminism does; with `early`, it also parts at its third word on that share of the
/// questions, as one serving part of its answers from another model does. Seeded: each answer
/// is a function of the seed, the question, the server (its own jitter) and how many times the
/// question was asked before.
fn jittered_server(seed: u64, server: u64, early: f64) -> FakeServer {
    FakeServer::start("m", move |req| jittered(seed, server, early, req))
}

/// What [`jittered_server`] answers to `req`.
fn jittered(seed: u64, server: u64, early: f64, req: &Incoming) -> Reply {
    let question = req
        .question()
        .bytes()
        .fold(seed, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let draw = (u64::from(req.call) + 1) * 1_000 + server;
    let mut rng = fastrand::Rng::with_seed(question ^ draw.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut part = (rng.f64() < 0.4).then(|| rng.usize(..30));
    if fastrand::Rng::with_seed(question).f64() < early {
        part = Some(part.map_or(2, |k| k.min(2)));
    }
    let words: Vec<String> = (0..30)
        .map(|w| match part {
            Some(k) if w >= k => format!("other{}", rng.u32(..1_000_000)),
            _ => format!("word{}", (question >> (w % 32)) % 1000),
        })
        .collect();
    Reply::content(&words.join(" "))
}

/// A compare of 300 generated items at the text level with the default growing control, and
/// `extra` flags; its output and run folder.
fn growing_control(
    dir: &std::path::Path,
    a: &FakeServer,
    b: &FakeServer,
    extra: &[&str],
) -> (std::process::Output, std::path::PathBuf) {
    let run = dir.join("run");
    let mut args: Vec<String> = [
        "compare",
        "--suite",
        "generated",
        "--items",
        "300",
        "--difficulty",
        "5",
        "--no-logprobs",
        "--concurrency",
        "16",
        "--backoff-ms",
        "10",
        "--quiet",
        "--out",
    ]
    .map(String::from)
    .into();
    args.push(run.display().to_string());
    for (name, server) in [("a", a), ("b", b)] {
        args.push("--endpoint".into());
        args.push(format!("{name}={}", server.url()));
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    (coherence(&args, dir, &[]), run)
}

/// A run's results and manifest.
fn read_run(run: &std::path::Path) -> (serde_json::Value, serde_json::Value) {
    let manifest =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    (results(run), manifest)
}

/// The identity verdict, the prompts the reference answered twice, and the control's looks.
fn identity_of(
    results: &serde_json::Value,
    manifest: &serde_json::Value,
) -> (String, u64, Vec<u64>) {
    let identity = &results["summary"]["identity"];
    let looks: Vec<u64> = manifest["control_looks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_u64().unwrap())
        .collect();
    assert_eq!(
        identity["control_growth"]["looks"], manifest["control_looks"],
        "{identity}"
    );
    (
        identity["verdict"].as_str().unwrap().to_string(),
        identity["evidence"][0]["control_prompts"].as_u64().unwrap(),
        looks,
    )
}

/// What a growing control found for a pair of jittered deployments.
struct Found {
    verdict: String,
    control: u64,
    looks: Vec<u64>,
    manifest: serde_json::Value,
    /// Completion requests each endpoint received.
    requests: [usize; 2],
}

/// Run [`growing_control`] on a reference jittered with `seed` and a candidate jittered alike,
/// also parting early on `early` of the questions.
fn jittered_pair(seed: u64, early: f64) -> Found {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        jittered_server(seed, 1, 0.0),
        jittered_server(seed, 2, early),
    );
    let (out, run) = growing_control(dir.path(), &a, &b, &[]);
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    let (results, manifest) = read_run(&run);
    let (verdict, control, looks) = identity_of(&results, &manifest);
    eprintln!(
        "seed {seed}, early {early}: {verdict} on {control} control prompts, looks {looks:?}"
    );
    assert!(control <= 300, "seed {seed}: {control}");
    Found {
        verdict,
        control,
        looks,
        manifest,
        requests: [a.completion_requests().len(), b.completion_requests().len()],
    }
}

/// Two text-jittered deployments alike: the control grows until they read `identical`, within
/// 300 control prompts, on every seed; the control's requests went to the reference alone.
#[test]
fn text_jittered_twins_read_identical_as_the_control_grows() {
    for seed in 1..=3 {
        let found = jittered_pair(seed, 0.0);
        assert_eq!(found.verdict, "identical", "seed {seed}");
        assert_eq!(
            found.looks.last(),
            Some(&found.control),
            "seed {seed}: the last look"
        );
        assert_eq!(found.manifest["control"], json!(found.control));
        assert_eq!(found.requests, [300 + found.control as usize, 300]);
    }
}

/// The same, the candidate also parting at its third word on a fifth of the questions: it reads
/// `perturbed` within 300 control prompts on every seed.
#[test]
fn a_twin_parting_early_on_a_fifth_of_questions_reads_perturbed() {
    for seed in 1..=3 {
        assert_eq!(jittered_pair(seed, 0.2).verdict, "perturbed", "seed {seed}");
    }
}

/// A candidate whose every answer is other words from the first token, against a jittery
/// reference: `perturbed` at the first look.
#[test]
fn a_candidate_parting_at_the_first_token_reads_perturbed_at_the_first_look() {
    let dir = tempfile::tempdir().unwrap();
    let a = jittered_server(7, 1, 0.0);
    let b = FakeServer::start("m", |req| {
        Reply::content(&format!("Elsewhere entirely, {} words later", req.call))
    });
    // The plan: 30 control answers counted on the reference, up to 300 as it grows.
    let (dry, _) = growing_control(dir.path(), &a, &b, &["--dry-run", "--json"]);
    let plan: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(
        plan["control"],
        json!({"prompts": 30, "max": 300}),
        "{plan}"
    );
    assert_eq!(plan["endpoints"][0]["requests"], 330);
    let (out, run) = growing_control(dir.path(), &a, &b, &[]);
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    let (results, manifest) = read_run(&run);
    let (verdict, control, looks) = identity_of(&results, &manifest);
    assert_eq!(verdict, "perturbed", "{}", results["summary"]["identity"]);
    assert_eq!((control, looks), (30, vec![30]));
    let pair = &results["summary"]["identity"]["evidence"][0];
    assert_eq!(pair["pair"]["median_first_divergence"], json!(0), "{pair}");
}

/// A control request that fails stops the growth (the run is incomplete); `--resume` sends it
/// again and the control goes on growing from where it stopped, the looks recorded after the
/// first run's.
#[test]
fn a_resumed_run_goes_on_growing_its_control() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let failing = Arc::new(AtomicBool::new(true));
    let served = Arc::new(AtomicUsize::new(0));
    let a = {
        let (failing, served) = (failing.clone(), served.clone());
        // The first 30 control answers come; while `failing`, later ones are server errors.
        FakeServer::start("m", move |req| {
            if req.call == 1
                && served.fetch_add(1, Ordering::SeqCst) >= 30
                && failing.load(Ordering::SeqCst)
            {
                return Reply::status(500, "overloaded");
            }
            jittered(4, 1, 0.0, req)
        })
    };
    let b = jittered_server(4, 2, 0.0);
    let (out, run) = growing_control(dir.path(), &a, &b, &["--retries", "0"]);
    assert_eq!(exit_code(&out), 3, "incomplete: {}", stderr(&out));
    let (results, manifest) = read_run(&run);
    assert_eq!(manifest["control_looks"], json!([30, 60]), "{manifest}");
    assert_eq!(results["summary"]["identity"]["verdict"], "undecided");

    failing.store(false, Ordering::SeqCst);
    let out = resume(dir.path(), &run, &[]);
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    let (results, manifest) = read_run(&run);
    let (verdict, control, looks) = identity_of(&results, &manifest);
    assert_eq!(verdict, "identical", "{}", results["summary"]["identity"]);
    assert_eq!(
        &looks[..2],
        [30, 60],
        "the first run's looks are kept: {looks:?}"
    );
    assert!(looks.len() > 2 && control > 60, "it grew on: {looks:?}");
    assert_eq!(manifest["control"], json!(control));
}
