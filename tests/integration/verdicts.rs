//! The headline answers "is this the same model?": quality verdicts, divergence kinds, calibrated
//! noise, interleaved repeats and parity, end to end against fake endpoints.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::*;

/// `compare` over the shipped catalogue (optionally one category) into `dir/run`.
fn compare_shipped(
    dir: &Path,
    a: &FakeServer,
    b: &FakeServer,
    extra: &[&str],
) -> (std::process::Output, Value) {
    let run = dir.join("run");
    let mut args = vec![
        "compare".to_string(),
        "--catalogue".into(),
        shipped_dir().display().to_string(),
        "--endpoint".into(),
        format!("a={}", a.url()),
        "--endpoint".into(),
        format!("b={}", b.url()),
        "--out".into(),
        run.display().to_string(),
        "--retries".into(),
        "0".into(),
        "--quiet".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = coherence(&args, dir, &[]);
    assert!(run.join("results.json").exists(), "{}", stderr(&out));
    let results = results(&run);
    (out, results)
}

#[test]
fn a_systemic_counting_deficit_reads_different() {
    // The field report: the other endpoint wrong on 10 of the 13 counting prompts.
    let catalogue = coherence::catalogue::load_catalogue(&shipped_dir()).unwrap();
    let counting: Vec<String> = catalogue
        .prompts
        .iter()
        .filter(|p| p.category == "counting_traps")
        .map(|p| p.question().to_string())
        .collect();
    assert_eq!(counting.len(), 13);
    let good = catalogue_endpoint(|p| &p.reference);
    let answers: std::collections::HashMap<String, (String, String)> = catalogue
        .prompts
        .iter()
        .map(|p| {
            (
                p.question().to_string(),
                (p.reference.clone(), p.wrong.clone()),
            )
        })
        .collect();
    let deficit = counting[..10].to_vec();
    let bad = FakeServer::start("m", move |req| {
        let q = req.question();
        let (right, wrong) = &answers[&q];
        Reply::content(if deficit.contains(&q) { wrong } else { right })
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = compare_shipped(dir.path(), &good, &bad, &["--category", "counting_traps"]);
    assert_eq!(
        exit_code(&out),
        1,
        "the default gate fails: {}",
        stderr(&out)
    );
    let q = &r["quality"][0];
    assert_eq!(q["verdict"], json!("different"), "{q}");
    assert!(q["p_value"].as_f64().unwrap() < 0.01, "{q}");
    assert_eq!(
        (q["reference_only"].as_u64(), q["other_only"].as_u64()),
        (Some(10), Some(0))
    );
    assert!(q["difference"]["high"].as_f64().unwrap() < 0.0);
    assert_eq!(r["summary"]["kinds"]["flip"], json!(10));
    assert_eq!(r["gate"]["failed"], json!(["different>0"]));
    let report = std::fs::read_to_string(dir.path().join("run/report.md")).unwrap();
    assert!(report.contains("different"), "{report}");
}

#[test]
fn identical_endpoints_over_the_whole_catalogue_read_equivalent() {
    let (one, two) = (
        catalogue_endpoint(|p| &p.reference),
        catalogue_endpoint(|p| &p.reference),
    );
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = compare_shipped(dir.path(), &one, &two, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(r["prompts"].as_array().unwrap().len(), 100);
    let q = &r["quality"][0];
    assert_eq!(q["verdict"], json!("equivalent"), "{q}");
    assert!(q["graded"].as_u64().unwrap() >= 80, "{q}");
    assert_eq!(r["identity"][0]["identical"], json!(100));
    assert_eq!(r["parity"][0]["prompt_tokens_mismatches"], json!(0));
}

#[test]
fn different_wrong_answers_alone_never_read_different() {
    let wrong = catalogue_endpoint(|p| &p.wrong);
    let other_wrong = FakeServer::start("m", |_| Reply::content("I am not sure, perhaps 41."));
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = compare_shipped(
        dir.path(),
        &wrong,
        &other_wrong,
        &["--category", "counting_traps,deterministic_math,factual"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let q = &r["quality"][0];
    assert_ne!(q["verdict"], json!("different"), "{q}");
    assert_eq!(q["reference_only"], json!(0));
    assert_eq!(q["other_only"], json!(0));
    let kinds = &r["summary"]["kinds"];
    assert_eq!(kinds["flip"], json!(0), "{kinds}");
    assert!(kinds["answer"].as_u64().unwrap() > 0, "{kinds}");
    // A diff gate still fails on any text difference when asked for.
    std::fs::create_dir_all(dir.path().join("again")).unwrap();
    let (out, _) = compare_shipped(
        &dir.path().join("again"),
        &wrong,
        &other_wrong,
        &["--category", "counting_traps", "--fail-on", "diff>0"],
    );
    assert_eq!(exit_code(&out), 1);
}

#[test]
fn repeats_are_interleaved_unless_asked_back_to_back() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path());
    let questions = |name: &str, order: &[&str]| -> Vec<String> {
        let (a, b) = (correct_server(), correct_server());
        let mut args = compare_args(&catalogue, &[("a", &a), ("b", &b)], &dir.path().join(name));
        args.extend(
            [
                "--repeats",
                "2",
                "--concurrency",
                "1",
                "--quiet",
                "--only",
                "capital,eggs",
            ]
            .map(String::from),
        );
        args.extend(order.iter().map(|s| s.to_string()));
        let out = coherence(&args, dir.path(), &[]);
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        a.completion_requests()
            .iter()
            .map(|r| r.question())
            .collect()
    };
    assert_eq!(
        questions("interleaved", &[]),
        [EGGS_Q, CAPITAL_Q, EGGS_Q, CAPITAL_Q]
    );
    assert_eq!(
        questions("back", &["--repeat-order", "back-to-back"]),
        [EGGS_Q, EGGS_Q, CAPITAL_Q, CAPITAL_Q]
    );
    let warned = |name: &str| results(&dir.path().join(name))["warnings"].to_string();
    assert!(!warned("interleaved").contains("back to back"));
    assert!(
        warned("back").contains("back to back"),
        "{}",
        warned("back")
    );
    let r = results(&dir.path().join("interleaved"));
    let repeats = &prompt(&r, "eggs")["answers"]["a"]["repeats"];
    assert_eq!(repeats[1]["after"], json!("capital"), "{repeats}");
    assert_eq!(repeats[1]["sent"], json!(2), "{repeats}");
}

#[test]
fn a_new_answer_against_an_unstable_reference_is_inconclusive() {
    // The reference wavers between 3 and 4 on the letters prompt; the other always says 5.
    let a = FakeServer::start("m", |req| match req.question().as_str() {
        LETTERS_Q if req.call == 1 => Reply::content("There are 4 r's."),
        q => Reply::content(correct_answer(q)),
    });
    let b = FakeServer::start("m", |req| match req.question().as_str() {
        LETTERS_Q => Reply::content("There are 5 r's."),
        q => Reply::content(correct_answer(q)),
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--repeats", "3", "--only", "count_letters,capital"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    let p = prompt(&r, "count_letters");
    assert_eq!(p["pairs"][0]["difference"], json!("inconclusive"));
    assert_eq!(r["deployment_differences"], json!(0));
    assert_eq!(r["stability"][0]["unstable"], json!(1));
    assert_eq!(r["stability"][1]["unstable"], json!(0));
}
#[test]
fn template_drift_is_flagged_by_prompt_token_parity() {
    let a = correct_server();
    // Same answers, but every request costs 7 more prompt tokens: another chat template.
    let b = FakeServer::start("m", |req| {
        let answer = correct_answer(&req.question());
        let tokens = coherence_testkit::prompt_tokens(&req.body) + 7;
        if req.is_raw_completion() {
            Reply::json(
                200,
                json!({"choices": [{"index": 0, "text": answer, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": tokens, "completion_tokens": 3}}),
            )
        } else {
            Reply::json(
                200,
                json!({"choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": answer}}],
                       "usage": {"prompt_tokens": tokens, "completion_tokens": 3}}),
            )
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--fail-on", "parity>0"],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let r = results(&run);
    let parity = &r["parity"][0];
    assert_eq!(parity["prompt_tokens_mismatches"], json!(5), "{parity}");
    assert_eq!(parity["prompt_tokens_compared"], json!(5));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("prompt_tokens"), "{report}");
}

#[test]
fn an_answer_cut_off_at_the_budget_is_marked_truncated() {
    let a = correct_server();
    let b = FakeServer::start("m", |req| match req.question().as_str() {
        EGGS_Q => Reply::json(
            200,
            json!({"choices": [{"index": 0, "finish_reason": "length",
                                "message": {"role": "assistant", "content": "She makes 18 dollars and"}}],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 16}}),
        ),
        q => Reply::content(correct_answer(q)),
    });
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--only", "eggs"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    let p = prompt(&r, "eggs");
    assert_eq!(p["answers"]["b"]["truncated"], json!(true));
    assert_eq!(p["answers"]["a"]["truncated"], json!(false));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("truncated"), "{report}");
}

/// A chat reply whose logprobs list, for each token, its logprob and top alternatives.
fn with_top_logprobs(tokens: &[(&str, &[(&str, f64)])]) -> Reply {
    let content: String = tokens.iter().map(|(t, _)| *t).collect();
    let positions: Vec<Value> = tokens
        .iter()
        .map(|(t, top)| {
            json!({"token": t, "logprob": top[0].1,
                   "top_logprobs": top.iter().map(|(a, l)| json!({"token": a, "logprob": l})).collect::<Vec<_>>()})
        })
        .collect();
    Reply::json(
        200,
        json!({"choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content},
                            "logprobs": {"content": positions}}],
               "usage": {"prompt_tokens": 12, "completion_tokens": tokens.len()}}),
    )
}

#[test]
fn logprobs_classify_the_first_divergence_as_near_tie_or_substantive() {
    let reply = |answer: &'static str, top: &'static [(&'static str, f64)]| {
        move |req: &Incoming| match req.question().as_str() {
            LETTERS_Q => with_top_logprobs(&[
                ("There are", &[("There are", -0.01)]),
                (answer, top),
                (" r's.", &[(" r's.", -0.02)]),
            ]),
            EGGS_Q => with_top_logprobs(&[
                ("She makes", &[("She makes", -0.01)]),
                (" 18", &[(" 18", -0.1)]),
            ]),
            q => Reply::content(correct_answer(q)),
        }
    };
    let a = FakeServer::start("m", reply(" 3", &[(" 3", -0.60), (" 4", -0.80)]));
    let b = FakeServer::start("m", reply(" 4", &[(" 4", -0.65), (" 3", -0.75)]));
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--only", "count_letters,eggs", "--logprobs"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(a.completion_requests()[0].body["top_logprobs"].as_u64() >= Some(5));
    let r = results(&run);
    let d = &prompt(&r, "count_letters")["pairs"][0]["token_divergence"];
    assert_eq!(d["index"], json!(1), "{d}");
    assert_eq!(d["near_tie"], json!(true), "{d}");
    assert!(prompt(&r, "eggs")["pairs"][0]
        .get("token_divergence")
        .is_none());
    assert_eq!(
        r["token_divergences"][0]["overall"],
        json!({"near_tie": 1, "substantive": 0})
    );
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("near-tie"), "{report}");
}
