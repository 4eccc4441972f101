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
    assert_eq!(manifest["control"], json!(60));
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
            .contains("20 decide `identical`"),
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
