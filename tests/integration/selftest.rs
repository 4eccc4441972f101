//! `coherence selftest`: the endpoint against itself must not read `different`; against itself
//! at a higher temperature it should, and the power line says what the catalogue can detect.

use serde_json::{json, Value};

use crate::common::*;

/// Answers every shipped question with its reference, or its wrong answer when sampled hot.
fn endpoint_worse_when_hot() -> FakeServer {
    endpoint(true)
}

/// Answers every shipped question with its reference; with `hot_is_wrong`, with its wrong answer
/// when sampled hot (else it ignores `temperature`).
fn endpoint(hot_is_wrong: bool) -> FakeServer {
    let catalogue = coherence::catalogue::load_catalogue(&shipped_dir()).unwrap();
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
    FakeServer::start("m", move |req| {
        let hot = hot_is_wrong && req.body["temperature"].as_f64().unwrap_or(0.0) > 0.5;
        match answers.get(&req.question()) {
            Some((right, wrong)) => Reply::content(if hot { wrong } else { right }),
            None => Reply::status(404, "unknown question"),
        }
    })
}

/// `coherence selftest` of `server` into `dir/selftest` over every category but code generation.
fn selftest(server: &FakeServer, dir: &std::path::Path, json: bool) -> std::process::Output {
    let out = dir.join("selftest");
    let categories: Vec<&str> = coherence::catalogue::CATEGORIES
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| *c != "code_generation")
        .collect();
    let mut args = vec![
        "selftest".to_string(),
        "--endpoint".into(),
        format!("solo={}", server.url()),
        "--catalogue".into(),
        shipped_dir().display().to_string(),
        "--category".into(),
        categories.join(","),
        "--out".into(),
        out.display().to_string(),
        "--quiet".into(),
    ];
    if json {
        args.push("--json".into());
    }
    coherence(&args, dir, &[])
}

#[test]
fn the_negative_control_is_not_different_and_the_positive_one_is() {
    let server = endpoint_worse_when_hot();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("selftest");
    let res = selftest(&server, dir.path(), true);
    assert_eq!(exit_code(&res), 0, "{}", stderr(&res));
    let report: Value = serde_json::from_str(&stdout(&res)).unwrap();
    assert_eq!(report["temperature_ignored"], json!(false));
    assert_eq!(
        report["negative"]["verdict"],
        json!("equivalent"),
        "{report}"
    );
    assert_eq!(
        report["positive"]["verdict"],
        json!("different"),
        "{report}"
    );
    assert_eq!(report["sensitive"], json!(true));
    assert_eq!(report["power"]["noise_flips"], json!(0));
    let mdd = report["power"]["min_detectable_points"].as_f64().unwrap();
    assert!(
        mdd > 5.0 && mdd < 12.0,
        "6 one-way flips of ~74 graded: {mdd}"
    );
    // The hot side really was sampled hot, and the manifest says so.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("positive/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["endpoints"][1]["sampling_override"],
        json!({"temperature": 1.0})
    );
    assert!(manifest["endpoints"][0].get("sampling_override").is_none());
    assert!(out.join("selftest.json").exists());
}

#[test]
fn an_endpoint_that_ignores_temperature_is_said_to_and_not_called_insensitive() {
    let server = endpoint(false);
    let dir = tempfile::tempdir().unwrap();
    let res = selftest(&server, dir.path(), false);
    assert_eq!(exit_code(&res), 0, "{}", stderr(&res));
    let text = stdout(&res);
    assert!(
        text.contains(
            "not perturbed: the hotter side's texts matched the reference's as often as the twin's"
        ),
        "{text}"
    );
    assert!(!text.contains("not sensitive"), "{text}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("selftest/selftest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["temperature_ignored"], json!(true));
    assert_eq!(report["sensitive"], json!(false));
}

#[test]
fn selftest_takes_exactly_one_endpoint() {
    let (a, b) = (correct_server(), correct_server());
    let dir = tempfile::tempdir().unwrap();
    let res = coherence(
        &[
            "selftest",
            "--endpoint",
            &format!("a={}", a.url()),
            "--endpoint",
            &format!("b={}", b.url()),
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&res), 2);
    assert!(
        stderr(&res).contains("exactly one endpoint"),
        "{}",
        stderr(&res)
    );
}

#[test]
fn selftest_takes_a_name_from_the_config_file() {
    let server = correct_server();
    let dir = tempfile::tempdir().unwrap();
    let catalogue = write_catalogue(dir.path());
    std::fs::write(
        dir.path().join("coherence.toml"),
        format!(
            "[endpoint.solo]\nurl = \"{}\"\nmodel = \"m\"\n",
            server.url()
        ),
    )
    .unwrap();
    let res = coherence(
        &[
            "selftest",
            "solo",
            "--catalogue",
            &catalogue.display().to_string(),
            "--out",
            "st",
            "--quiet",
            "--json",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&res), 0, "{}", stderr(&res));
    let report: Value = serde_json::from_str(&stdout(&res)).unwrap();
    assert_eq!(report["endpoint"], json!("solo"), "{report}");
    // Five prompts are too few to decide equivalence; the endpoint must not differ from itself.
    assert_ne!(
        report["negative"]["verdict"],
        json!("different"),
        "{report}"
    );
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("st/negative/manifest.json")).unwrap(),
    )
    .unwrap();
    let names: Vec<&Value> = manifest["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["name"])
        .collect();
    assert_eq!(names, [&json!("solo"), &json!("solo-twin")]);
    assert_eq!(manifest["endpoints"][1]["base_url"], json!(server.url()));
    assert!(server.requests().len() >= 4, "both controls were sent");
}
