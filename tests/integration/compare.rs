//! `coherence compare` end to end against fake endpoints: verdicts, reports, exit codes, flags.

use crate::common::*;
use serde_json::json;

#[test]
fn identical_endpoints_are_coherent() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    let mut summary = r["summary"].clone();
    let same_model = summary.as_object_mut().unwrap().remove("same_model");
    let because = summary
        .as_object_mut()
        .unwrap()
        .remove("same_model_because");
    let behaviour = summary.as_object_mut().unwrap().remove("behaviour");
    assert_eq!(behaviour.unwrap()["verdict"], json!("undecided"));
    summary.as_object_mut().unwrap().remove("identity");
    assert_eq!(
        summary,
        json!({"same": 5, "format": 0, "no_answer": 0, "diff": 0, "review": 0, "fail": 0,
               "kinds": {"flip": 0, "answer": 0, "format": 0, "no_answer": 0}})
    );
    // Five graded prompts cannot show equivalence: identical text is not evidence enough.
    assert_eq!(same_model, Some(json!("undecided")));
    let because = because.unwrap();
    assert!(
        because[0]
            .as_str()
            .unwrap()
            .starts_with("identity: undecided"),
        "{because}"
    );
    assert!(
        because.as_array().unwrap().iter().any(|r| r
            .as_str()
            .unwrap()
            .starts_with("behaviour: undecided — quality inconclusive")),
        "{because}"
    );
    assert!(stdout(&out).starts_with("Same model: undecided — identity: undecided"));
    assert!(stdout(&out).contains("behaviour: undecided — quality inconclusive"));
    assert_eq!(r["complete"], json!(true));
    for file in [
        "manifest.json",
        "records.jsonl",
        "results.json",
        "report.md",
        "comparison_table.md",
    ] {
        assert!(run.join(file).exists(), "{file} missing");
    }
    assert_eq!(records(&run).len(), 10);
    assert!(stdout(&out).contains("5 same / 0 format / 0 no answer / 0 diff / 0 review / 0 fail"));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("**5 same / 0 format / 0 no answer / 0 diff / 0 review / 0 fail**"),
        "{report}"
    );
}

#[test]
fn a_counting_failure_is_a_diff_with_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let good = correct_server();
    let bad = FakeServer::start("test-model", |req| {
        if req.question() == LETTERS_Q {
            Reply::content("There are 5 r's in strawberry.")
        } else {
            Reply::content(correct_answer(&req.question()))
        }
    });
    let (out, run) = compare(
        dir.path(),
        &[("full", &good), ("spark", &bad)],
        &["--fail-on", "diff>0"],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let r = results(&run);
    assert_eq!(r["summary"]["diff"], json!(1));
    assert_eq!(r["summary"]["same"], json!(4));
    let p = prompt(&r, "count_letters");
    assert_eq!(p["verdict"], json!("diff"));
    assert_eq!(p["category"], json!("counting_traps"));
    assert_eq!(p["answers"]["full"]["extracted"], json!("3"));
    assert_eq!(p["answers"]["full"]["correct"], json!(true));
    assert_eq!(p["answers"]["spark"]["extracted"], json!("5"));
    assert_eq!(p["answers"]["spark"]["correct"], json!(false));
    assert_eq!(p["answers"]["spark"]["error"], json!(null));
    let rollup = r["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "counting_traps")
        .unwrap();
    assert_eq!(rollup["diff"], json!(1));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains(
        "4 same / 0 format / 0 no answer / 1 diff (1 flip, 0 answer) / 0 review / 0 fail"
    ));
    assert_eq!(p["pairs"][0]["kind"], json!("flip"));
    assert!(
        report.contains("`count_letters` (counting_traps): diff"),
        "{report}"
    );
    assert!(
        report.contains("There are 5 r's in strawberry."),
        "the evidence is quoted"
    );
    let table = std::fs::read_to_string(run.join("comparison_table.md")).unwrap();
    assert!(
        table.contains("| `count_letters` | counting_traps | 3 | 3 ✓ | 5 ✗ | **diff** |"),
        "{table}"
    );
}

#[test]
fn requests_use_identical_sampling_and_the_right_api() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, _) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--param", "seed=42", "--param", "top_p=1"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    for server in [&a, &b] {
        let reqs = server.completion_requests();
        assert_eq!(reqs.len(), 5);
        for r in &reqs {
            assert_eq!(r.body["temperature"].as_f64(), Some(0.0));
            assert_eq!(r.body["stream"], json!(false));
            assert_eq!(r.body["seed"], json!(42));
            assert_eq!(r.body["top_p"], json!(1));
            assert_eq!(r.body["model"], json!("test-model"));
        }
        let raw = reqs.iter().find(|r| r.question() == COMPLETION_Q).unwrap();
        assert_eq!(raw.path, "/v1/completions");
        assert_eq!(raw.body["max_tokens"], json!(16), "the prompt's own budget");
        let chat = reqs.iter().find(|r| r.question() == LETTERS_Q).unwrap();
        assert_eq!(chat.path, "/v1/chat/completions");
        assert_eq!(chat.body["max_tokens"], json!(1024), "the default budget");
    }
}

#[test]
fn model_flag_skips_discovery_and_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--model", "b=other-model", "--only", "capital"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        b.completion_requests()[0].body["model"],
        json!("other-model")
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["endpoints"][1]["model"], json!("other-model"));
    assert_eq!(manifest["prompts"], json!(["capital"]));
}

#[test]
fn think_blocks_and_reasoning_fields_are_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let b = FakeServer::start("m", |req| match req.question().as_str() {
        LETTERS_Q => Reply::content("<think>s-t-r... I count three.</think>\nThe answer is 3."),
        q => Reply::with_reasoning(correct_answer(q), "thinking hard"),
    });
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let recs = records(&run);
    let letters = records_for(&recs, "count_letters", "b")[0];
    assert_eq!(letters["answer"], json!("The answer is 3."));
    assert_eq!(letters["reasoning"], json!("s-t-r... I count three."));
    let capital = records_for(&recs, "capital", "b")[0];
    assert_eq!(capital["reasoning"], json!("thinking hard"));
}

#[test]
fn selection_flags_choose_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--category", "factual"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let ids: Vec<String> = results(&run)["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["capital", "capital_completion"]);
}

#[test]
fn three_endpoints_are_each_compared_with_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let c = FakeServer::start("m", |req| {
        if req.question() == CAPITAL_Q {
            Reply::content("Lyon")
        } else {
            Reply::content(correct_answer(&req.question()))
        }
    });
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b), ("c", &c)],
        &["--fail-on", "diff>0"],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let r = results(&run);
    let p = prompt(&r, "capital");
    assert_eq!(p["verdict"], json!("diff"));
    let pairs = p["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[0]["other"], json!("b"));
    assert_eq!(pairs[0]["verdict"], json!("same"));
    assert_eq!(pairs[1]["other"], json!("c"));
    assert_eq!(pairs[1]["verdict"], json!("diff"));
}

#[test]
fn usage_errors_exit_2_and_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path());
    let cat = catalogue.display().to_string();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://127.0.0.1:9/v1",
            ],
            "at least two",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a",
                "--endpoint",
                "b=http://x/v1",
            ],
            "--endpoint `a`",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=ftp://x",
                "--endpoint",
                "b=http://x/v1",
            ],
            "http://",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://x/v1",
                "--endpoint",
                "a=http://y/v1",
            ],
            "used twice",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://x/v1",
                "--endpoint",
                "b=http://y/v1",
                "--model",
                "c=m",
            ],
            "--model `c=m`",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://x/v1",
                "--endpoint",
                "b=http://y/v1",
                "--only",
                "nope",
            ],
            "--only",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://x/v1",
                "--endpoint",
                "b=http://y/v1",
                "--category",
                "nope",
            ],
            "--category",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://x/v1",
                "--endpoint",
                "b=http://y/v1",
                "--concurrency",
                "0",
            ],
            "--concurrency",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://x/v1",
                "--endpoint",
                "b=http://y/v1",
                "--param",
                "stream=true",
            ],
            "--param",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://x/v1",
                "--endpoint",
                "b=http://y/v1",
                "--api-key-env",
                "a=NO_SUCH_VAR_XYZ",
            ],
            "NO_SUCH_VAR_XYZ",
        ),
        (
            &[
                "compare",
                "--catalogue",
                &cat,
                "--endpoint",
                "a=http://u:p@x/v1",
                "--endpoint",
                "b=http://y/v1",
            ],
            "credentials",
        ),
        (
            &["compare", "--resume", "/nonexistent/run"],
            "not a run folder",
        ),
        (&["compare", "--bogus"], "--bogus"),
    ];
    for (args, needle) in cases {
        let out = coherence(args, dir.path(), &[]);
        assert_eq!(exit_code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(needle),
            "{args:?}: expected {needle:?} in {}",
            stderr(&out)
        );
    }
}

#[test]
fn unreachable_endpoint_without_model_exits_3_before_sending() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let catalogue = write_catalogue(dir.path());
    let out = coherence(
        &[
            "compare",
            "--catalogue",
            &catalogue.display().to_string(),
            "--endpoint",
            &format!("a={}", a.url()),
            "--endpoint",
            "b=http://127.0.0.1:9/v1",
            "--retries",
            "0",
            "--out",
            "run",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("endpoint b is not reachable at http://127.0.0.1:9/v1 (GET /models"),
        "{}",
        stderr(&out)
    );
    assert!(a.completion_requests().is_empty());
}
