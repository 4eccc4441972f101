//! `coherence selftest`: the endpoint against itself must not read `different`; against itself
//! at a higher temperature it should, and the power line says what the catalogue can detect.

use serde_json::{json, Value};

use crate::common::*;

/// Answers every shipped question with its reference, or its wrong answer when sampled hot.
fn endpoint_worse_when_hot() -> FakeServer {
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
        let hot = req.body["temperature"].as_f64().unwrap_or(0.0) > 0.5;
        match answers.get(&req.question()) {
            Some((right, wrong)) => Reply::content(if hot { wrong } else { right }),
            None => Reply::status(404, "unknown question"),
        }
    })
}

#[test]
fn the_negative_control_is_not_different_and_the_positive_one_is() {
    let server = endpoint_worse_when_hot();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("selftest");
    let categories: Vec<&str> = coherence::catalogue::CATEGORIES
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| *c != "code_generation")
        .collect();
    let args = [
        "selftest",
        "--endpoint",
        &format!("solo={}", server.url()),
        "--catalogue",
        &shipped_dir().display().to_string(),
        "--category",
        &categories.join(","),
        "--out",
        &out.display().to_string(),
        "--quiet",
        "--json",
    ];
    let res = coherence(&args, dir.path(), &[]);
    assert_eq!(exit_code(&res), 0, "{}", stderr(&res));
    let report: Value = serde_json::from_str(&stdout(&res)).unwrap();
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
