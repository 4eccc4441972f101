//! Repeats: answer histograms, classes, first divergences, sampler noise vs deployment difference,
//! paired statistics and the --fail-on gate.

use crate::common::*;
use serde_json::json;

/// Answers by call index: the seed's flaky counter {9: 4, 5: 1}.
fn flaky_counter(call: u32) -> &'static str {
    if call == 2 {
        "There are 5 r's in strawberry."
    } else {
        "There are 9 r's in strawberry."
    }
}

#[test]
fn repeats_reveal_a_flaky_counter_and_a_deployment_difference() {
    let dir = tempfile::tempdir().unwrap();
    let full = correct_server();
    let spark = FakeServer::start("m", |req| match req.question().as_str() {
        LETTERS_Q => Reply::content(flaky_counter(req.call)),
        q => Reply::content(correct_answer(q)),
    });
    let (out, run) = compare(
        dir.path(),
        &[("full", &full), ("spark", &spark)],
        &[
            "--repeats",
            "5",
            "--logprobs",
            "--concurrency",
            "1",
            "--fail-on",
            "diff>0",
        ],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let r = results(&run);
    let p = prompt(&r, "count_letters");
    let spark_det = &p["answers"]["spark"]["determinism"];
    assert_eq!(spark_det["histogram"], json!({"9": 4, "5": 1}));
    assert_eq!(spark_det["class"], json!("nondeterministic"));
    assert_eq!(spark_det["unique_completions"], json!(2));
    assert!((spark_det["modal_share"].as_f64().unwrap() - 0.8).abs() < 1e-9);
    assert_eq!(spark_det["first_divergence"]["repeats"], json!([0, 2]));
    assert_eq!(spark_det["first_divergence"]["char_offset"], json!(10));
    assert_eq!(
        spark_det["first_divergence"]["token_index"],
        json!(2),
        "\"There\" \" are\" \" 9\""
    );
    assert_eq!(
        spark_det["first_divergence"]["left"],
        json!("9 r's in strawberry.")
    );
    assert_eq!(
        p["answers"]["spark"]["extracted"],
        json!("9"),
        "the modal answer represents spark"
    );
    assert_eq!(
        p["answers"]["full"]["determinism"]["class"],
        json!("deterministic_correct")
    );
    assert_eq!(p["pairs"][0]["difference"], json!("deployment_difference"));
    assert_eq!(r["nondeterministic"], json!(1));
    assert_eq!(r["deployment_differences"], json!(1));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("## Determinism (5 repeats at temperature 0)"),
        "{report}"
    );
    assert!(report.contains("{5: 1, 9: 4}"), "{report}");
    assert!(report.contains("non-deterministic"), "{report}");
    assert!(report.contains("deployment difference"));
}

#[test]
fn a_difference_inside_the_references_own_noise_is_sampler_noise() {
    let dir = tempfile::tempdir().unwrap();
    // The reference itself wavers between Paris and Lyon; the other endpoint says Lyon.
    let a = FakeServer::start("m", |req| match req.question().as_str() {
        CAPITAL_Q if req.call % 2 == 1 => Reply::content("Lyon"),
        q => Reply::content(correct_answer(q)),
    });
    let b = FakeServer::start("m", |req| match req.question().as_str() {
        CAPITAL_Q => Reply::content("Lyon"),
        q => Reply::content(correct_answer(q)),
    });
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &[
            "--repeats",
            "3",
            "--only",
            "capital,eggs",
            "--fail-on",
            "diff>0",
        ],
    );
    assert_eq!(exit_code(&out), 1);
    let r = results(&run);
    let p = prompt(&r, "capital");
    assert_eq!(
        p["answers"]["a"]["determinism"]["histogram"],
        json!({"lyon": 1, "paris": 2})
    );
    assert_eq!(p["pairs"][0]["difference"], json!("sampler_noise"));
    assert_eq!(r["deployment_differences"], json!(0));
}

#[test]
fn determinism_command_measures_one_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let stable = correct_server();
    let catalogue = write_catalogue(dir.path());
    let out = coherence(
        &[
            "determinism",
            "--catalogue",
            &catalogue.display().to_string(),
            "--endpoint",
            &format!("solo={}", stable.url()),
            "--out",
            "stable",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stable.completion_requests().len(),
        25 + 4,
        "5 prompts x 5 repeats by default, after the logprobs probe (2 prompts, without and with)"
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("stable").join("manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["sampling"]["logprobs"],
        json!(true),
        "the fake returns logprobs and the same text: requested, as compare does"
    );
    let r = results(&dir.path().join("stable"));
    assert_eq!(r["nondeterministic"], json!(0));
    assert_eq!(
        r["gate"]["expression"],
        json!("nondeterministic>0,fail>0,changes_at_load>0,cache_dependent>0")
    );
    assert_eq!(
        prompt(&r, "capital")["answers"]["solo"]["determinism"]["class"],
        json!("deterministic_correct")
    );

    let flaky = FakeServer::start("m", |req| match req.question().as_str() {
        LETTERS_Q => Reply::content(flaky_counter(req.call)),
        q => Reply::content(correct_answer(q)),
    });
    let out = coherence(
        &[
            "determinism",
            "--catalogue",
            &catalogue.display().to_string(),
            "--endpoint",
            &format!("solo={}", flaky.url()),
            "--out",
            "flaky",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(
        exit_code(&out),
        1,
        "the default gate fails on non-determinism"
    );
    let r = results(&dir.path().join("flaky"));
    assert_eq!(r["gate"]["failed"], json!(["nondeterministic>0"]));
    let junit = std::fs::read_to_string(dir.path().join("flaky/junit.xml")).unwrap();
    assert!(
        junit.contains(
            "<testsuite name=\"solo\" tests=\"5\" skipped=\"0\" errors=\"0\" failures=\"1\">"
        ),
        "{junit}"
    );
    assert!(junit.contains("type=\"nondeterministic\""));
}

#[test]
fn paired_statistics_name_a_systemic_deficit_and_gate_on_p() {
    let dir = tempfile::tempdir().unwrap();
    // 12 letter-counting prompts: the reference is always right, the other always wrong.
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    let mut body = String::new();
    for i in 0..12 {
        body.push_str(&format!(
            "[[prompt]]\nid = \"cnt_{i}\"\nuser = \"Count item {i}\"\nreference = \"{i}\"\nwrong = \"{}\"\nscore = {{ type = \"numeric\", expected = \"{i}\" }}\n\n",
            i + 1
        ));
    }
    std::fs::write(prompts.join("counting_traps.toml"), body).unwrap();
    let number = |req: &Incoming| {
        req.question()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse::<u32>()
            .unwrap()
    };
    let full = FakeServer::start("m", move |req| {
        Reply::content(&format!("It is {}.", number(req)))
    });
    let spark = FakeServer::start("m", move |req| {
        Reply::content(&format!("It is {}.", number(req) + 2))
    });
    let args = |out: &str, gate: &str| {
        vec![
            "compare".to_string(),
            "--catalogue".into(),
            prompts.display().to_string(),
            "--endpoint".into(),
            format!("full={}", full.url()),
            "--endpoint".into(),
            format!("spark={}", spark.url()),
            "--out".into(),
            out.into(),
            "--quiet".into(),
            "--fail-on".into(),
            gate.into(),
        ]
    };
    let run = |a: Vec<String>| {
        coherence(
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            dir.path(),
            &[],
        )
    };
    let out = run(args("p", "p<0.05"));
    assert_eq!(exit_code(&out), 1);
    let r = results(&dir.path().join("p"));
    let overall = &r["statistics"][0]["overall"];
    assert_eq!(overall["reference_only"], json!(12));
    assert_eq!(overall["other_only"], json!(0));
    assert!((overall["p_value"].as_f64().unwrap() - 0.000488).abs() < 1e-5);
    let cat = &r["statistics"][0]["categories"][0];
    assert_eq!(
        cat["statement"],
        json!("counting_traps: full right and spark wrong on 12 of 12, the reverse on 0; p = 4.9e-4: a systemic deficit of spark")
    );
    assert!(stdout(&out).contains("a systemic deficit of spark"));
    let full_acc = &r["endpoints"][0]["accuracy"];
    assert_eq!(full_acc["value"], json!(1.0));
    assert!(full_acc["low"].as_f64().unwrap() > 0.7);
    // A gate that does not hold passes even though there are diffs.
    let out = run(args("q", "p<0.0001"));
    assert_eq!(exit_code(&out), 0, "{}", stdout(&out));
    // A malformed gate is a usage error naming the flag.
    let out = run(args("r", "diff>>0"));
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("--fail-on"));
}
