//! What the careful re-grade of the committed example found (issue 20, item 6), end to end
//! against fake endpoints: a format-only divergence is not a difference, a looping answer cut
//! off at the budget is no answer, repeats that disagree are shown, answers appear as written,
//! the gate says where it came from, and text that changes under load is batch non-invariance.

use serde_json::json;

use crate::common::*;

/// Two endpoints that fail the eggs prompt the same way (no number at all), in other words:
/// neither gives an answer.
fn same_failure_in_other_words() -> (FakeServer, FakeServer) {
    let reply = |unreadable: &'static str| {
        move |req: &Incoming| match req.question().as_str() {
            EGGS_Q => Reply::content(unreadable),
            q => Reply::content(correct_answer(q)),
        }
    };
    (
        FakeServer::start("m", reply("I cannot say how much she makes.")),
        FakeServer::start("m", reply("That is impossible to tell.")),
    )
}

#[test]
fn the_same_failure_rendered_differently_is_not_a_difference() {
    let (a, b) = same_failure_in_other_words();
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--only", "eggs", "--fail-on", "diff>0,deployment>0"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    let p = prompt(&r, "eggs");
    assert_eq!(p["verdict"], json!("no_answer"), "{p}");
    assert_eq!(p["pairs"][0]["kind"], json!("no_answer"), "{p}");
    assert_eq!(p["pairs"][0]["difference"], json!(null), "{p}");
    assert_eq!(r["summary"]["diff"], json!(0));
    assert_eq!(r["summary"]["no_answer"], json!(1));
    assert_eq!(r["summary"]["format"], json!(0));
    assert_eq!(r["deployment_differences"], json!(0));
    assert_eq!(r["gate"]["failed"], json!([]));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("0 diff"), "{report}");
    assert!(report.contains("1 no answer"), "{report}");
    // The gate line says where its expression came from: the flag, then the run's manifest.
    assert!(
        report.contains("Gate `diff>0,deployment>0` (from --fail-on): passed."),
        "{report}"
    );
    let rescored = coherence(&["score", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&rescored), 0, "{}", stderr(&rescored));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("Gate `diff>0,deployment>0` (from the run's manifest): passed."),
        "{report}"
    );
    assert_eq!(results(&run)["gate"]["origin"], json!("manifest"));
}

/// A completion cut off at the budget (`finish_reason: length`) with this content.
fn cut_off(content: &str) -> Reply {
    Reply::json(
        200,
        json!({"choices": [{"index": 0, "finish_reason": "length",
                            "message": {"role": "assistant", "content": content}}],
               "usage": {"prompt_tokens": 10, "completion_tokens": 1024}}),
    )
}

#[test]
fn a_looping_answer_cut_off_without_a_final_answer_marker_is_no_answer() {
    let a = correct_server();
    let looping = "Let me count the r letters again, so the count is 3 for now. ".repeat(20);
    let b = FakeServer::start("m", move |req| match req.question().as_str() {
        LETTERS_Q => cut_off(&looping),
        q => Reply::content(correct_answer(q)),
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--only", "count_letters"],
    );
    assert!(run.join("results.json").exists(), "{}", stderr(&out));
    let r = results(&run);
    let p = prompt(&r, "count_letters");
    let b = &p["answers"]["b"];
    assert_eq!(b["truncated"], json!(true), "{b}");
    assert_eq!(b["correct"], json!(false), "{b}");
    assert_eq!(b["extracted"], json!(null), "{b}");
    assert!(
        b["evidence"]
            .as_str()
            .unwrap()
            .contains("no answer: cut off"),
        "{b}"
    );
    assert_eq!(p["verdict"], json!("diff"), "{p}");
    assert_eq!(p["pairs"][0]["kind"], json!("flip"), "{p}");
}

/// A fake whose answer to the capital question is `texts[i % len]` on its i-th asking.
fn cycling(texts: &'static [&'static str]) -> FakeServer {
    let asked = std::sync::atomic::AtomicUsize::new(0);
    FakeServer::start("m", move |req| match req.question().as_str() {
        CAPITAL_Q => {
            let i = asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Reply::content(texts[i % texts.len()])
        }
        q => Reply::content(correct_answer(q)),
    })
}

#[test]
fn the_text_shown_is_the_modal_one_and_repeats_that_differ_in_text_are_flagged() {
    // factual_author: one repeat names the author plainly, two add a made-up one.
    const PLAIN: &str = "The capital of France is Paris.";
    const SKARO: &str = "Paris, founded by A.A. Skaro in 1942, is the capital of France.";
    let a = cycling(&[PLAIN, SKARO, SKARO]);
    let b = correct_server();
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--only", "capital", "--repeats", "3"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    let answer = &prompt(&r, "capital")["answers"]["a"];
    assert_eq!(answer["answer"], json!(SKARO), "{answer}");
    assert_eq!(answer["determinism"]["modal_text_repeats"], json!(2));
    // The repeat that wrote the other text carries it (which repeat depends on arrival order).
    let others: Vec<&serde_json::Value> = answer["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r.get("text"))
        .collect();
    assert_eq!(others, [&json!(PLAIN)], "{answer}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("Skaro"), "{report}");
    assert!(
        report.contains("2 of 3 repeats wrote this text; 1 wrote another"),
        "{report}"
    );
}

#[test]
fn answers_are_shown_as_written_not_as_their_normalised_key() {
    let a = correct_server();
    let b = FakeServer::start("m", |req| match req.question().as_str() {
        CAPITAL_Q => Reply::content("It's Lyon, 2.5 km away."),
        q => Reply::content(correct_answer(q)),
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--only", "capital"]);
    assert!(run.join("results.json").exists(), "{}", stderr(&out));
    let r = results(&run);
    let b = &prompt(&r, "capital")["answers"]["b"];
    let key = b["extracted"].as_str().unwrap();
    let written = b["as_written"].as_str().unwrap();
    assert_ne!(key, written, "{b}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    let divergences = report.split("## Divergences").nth(1).unwrap();
    let divergences = divergences.split("\n## ").next().unwrap();
    assert!(divergences.contains(written), "{divergences}");
    assert!(!divergences.contains(key), "{divergences}");
}

#[test]
fn instability_that_follows_the_prompt_cache_is_said_where_stability_is() {
    // Cold (after another prompt) the answer is Paris; warm (right after itself) it is Lyon.
    let last = std::sync::Mutex::new(String::new());
    let a = FakeServer::start("m", move |req| {
        let q = req.question();
        let mut last = last.lock().unwrap();
        let warm = *last == q;
        *last = q.clone();
        match q.as_str() {
            CAPITAL_Q if warm => Reply::content("The capital of France is Lyon."),
            q => Reply::content(correct_answer(q)),
        }
    });
    let b = correct_server();
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &[
            "--only",
            "capital,eggs",
            "--repeats",
            "3",
            "--concurrency",
            "1",
            "--repeat-order",
            "back-to-back",
        ],
    );
    assert!(run.join("results.json").exists(), "{}", stderr(&out));
    let r = results(&run);
    let stability = &r["stability"][0];
    assert_eq!(stability["unstable"], json!(1), "{stability}");
    assert_eq!(stability["cache_split"], json!(1), "{stability}");
    assert_eq!(stability["back_to_back"], json!(true), "{stability}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    let line = report
        .lines()
        .find(|l| l.contains("**Stability**"))
        .unwrap();
    assert!(line.contains("split by prompt-cache state"), "{line}");
    assert!(line.contains("sent back to back"), "{line}");
}

/// `determinism --catalogue … --endpoint solo=URL --out run` plus `extra`, in `dir`.
fn determinism(dir: &std::path::Path, server: &FakeServer, extra: &[&str]) -> std::process::Output {
    let catalogue = write_catalogue(dir);
    let mut args: Vec<String> = vec![
        "determinism".into(),
        "--catalogue".into(),
        catalogue.display().to_string(),
        "--endpoint".into(),
        format!("solo={}", server.url()),
        "--out".into(),
        "run".into(),
        "--backoff-ms".into(),
        "10".into(),
        "--quiet".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    coherence(&args, dir, &[])
}

#[test]
fn text_that_changes_under_load_is_not_batch_invariant_and_is_gateable() {
    let _serial = serial();
    // Alone: "Paris."; amid fillers: the same answer in other words.
    let in_flight = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = FakeServer::start("m", move |req| {
        use std::sync::atomic::Ordering;
        if req.question().contains("(Filler request") {
            in_flight.fetch_add(1, Ordering::SeqCst);
            let reply =
                Reply::content("A long story ...").after(std::time::Duration::from_millis(400));
            let counter = in_flight.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(400));
                counter.fetch_sub(1, Ordering::SeqCst);
            });
            return reply;
        }
        match req.question().as_str() {
            CAPITAL_Q if in_flight.load(Ordering::SeqCst) > 0 => {
                Reply::content("Paris is the capital of France.")
            }
            q => Reply::content(correct_answer(q)),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = determinism(
        dir.path(),
        &server,
        &[
            "--only",
            "capital",
            "--repeats",
            "2",
            "--under-load",
            "4",
            "--fail-on",
            "text_changes_at_load>0",
        ],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let run = dir.path().join("run");
    let r = results(&run);
    let v = &r["load_verdicts"][0];
    assert_eq!(v["verdict"], json!("text_changes_at_load"), "{v}");
    assert_eq!(v["changes_at"], json!(null), "{v}");
    assert_eq!(r["gate"]["failed"], json!(["text_changes_at_load>0"]));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    let headline = report.split("\n## ").next().unwrap();
    assert!(headline.contains("not batch-invariant"), "{headline}");
    assert!(!report.contains("| solo | batch-invariant |"), "{report}");
}

#[test]
fn one_endpoint_whose_repeats_disagree_is_not_called_same() {
    let server = cycling(&[
        "The capital of France is Paris.",
        "The capital of France is Lyon.",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let out = determinism(
        dir.path(),
        &server,
        &["--only", "capital,eggs", "--repeats", "2"],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let r = results(&dir.path().join("run"));
    assert_eq!(prompt(&r, "capital")["verdict"], json!("diff"));
    assert_eq!(prompt(&r, "eggs")["verdict"], json!("same"));
    assert_eq!(r["summary"]["same"], json!(1));
}
