//! `coherence score` and `coherence report` work from the run folder alone, reproduce identical
//! files, and write output that matches the committed JSON Schema and the report snapshots.

use std::path::Path;

use crate::common::*;
use serde_json::{json, Value};

/// A run with a diff, a failure, repeats and a third endpoint, so every part of the output is exercised.
fn rich_run(dir: &Path) -> std::path::PathBuf {
    let a = correct_server();
    let b = FakeServer::start("m", |req| match req.question().as_str() {
        LETTERS_Q => Reply::content(if req.call == 1 {
            "There are 4 r's."
        } else {
            "There are 5 r's."
        }),
        q => Reply::content(correct_answer(q)),
    });
    let c = FakeServer::start("m", |req| match req.question().as_str() {
        EGGS_Q => Reply::status(400, "context length exceeded"),
        q => Reply::content(correct_answer(q)),
    });
    let (out, run) = compare(
        dir,
        &[("a", &a), ("b", &b), ("c", &c)],
        &["--repeats", "2", "--logprobs", "--concurrency", "1"],
    );
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    run
}

fn read(run: &Path, file: &str) -> String {
    std::fs::read_to_string(run.join(file)).unwrap()
}

fn without_stamp(results: &str) -> Value {
    let mut v: Value = serde_json::from_str(results).unwrap();
    v.as_object_mut().unwrap().remove("generated_at");
    v
}

#[test]
fn results_match_the_committed_schema() {
    let dir = tempfile::tempdir().unwrap();
    let run = rich_run(dir.path());
    let schema: Value =
        serde_json::from_str(include_str!("../../src/report/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let results = results(&run);
    let errors: Vec<String> = validator
        .iter_errors(&results)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The schema has teeth: a verdict outside the enum and a missing summary are rejected.
    let mut broken = results.clone();
    broken["prompts"][0]["verdict"] = json!("maybe");
    assert!(!validator.is_valid(&broken));
    broken = results.clone();
    broken.as_object_mut().unwrap().remove("summary");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn score_and_report_reproduce_identical_files_offline() {
    let dir = tempfile::tempdir().unwrap();
    let run = rich_run(dir.path()); // the servers are gone once rich_run returns
    let files = [
        "report.md",
        "report.html",
        "comparison_table.md",
        "junit.xml",
    ];
    let before: Vec<String> = files.iter().map(|f| read(&run, f)).collect();
    let results_before = read(&run, "results.json");

    let out = coherence(&["score", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(
        exit_code(&out),
        3,
        "same exit semantics as the run: {}",
        stderr(&out)
    );
    assert_eq!(
        without_stamp(&read(&run, "results.json")),
        without_stamp(&results_before)
    );
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(&read(&run, f), b, "{f} changed after `coherence score`");
    }

    let out = coherence(&["report", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 3);
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(&read(&run, f), b, "{f} changed after `coherence report`");
    }
}

#[test]
fn report_writes_a_self_contained_report_html() {
    let dir = tempfile::tempdir().unwrap();
    let run = rich_run(dir.path());
    std::fs::remove_file(run.join("report.html")).unwrap();
    let out = coherence(&["report", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let page = read(&run, "report.html");
    let summary = &results(&run)["summary"];
    let counts = format!(
        "<strong id=\"headline\">{} same / {} format / {} no answer / {} diff",
        summary["same"], summary["format"], summary["no_answer"], summary["diff"]
    );
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains(&counts), "{counts}");
    assert!(page.contains("id=\"divergence-table\""));
    assert!(!page.contains("src=\"http"));
}

#[test]
fn rescoring_applies_a_fixed_catalogue_without_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let catalogue = write_catalogue(dir.path());
    // Ship a flawed expected value, like the seed's trains prompt.
    let math = catalogue.join("deterministic_math.toml");
    let good = std::fs::read_to_string(&math).unwrap();
    std::fs::write(
        &math,
        good.replace("expected = \"18\"", "expected = \"40\"")
            .replace("reference = \"18\"", "reference = \"40\""),
    )
    .unwrap();
    let run = dir.path().join("run");
    let mut args = compare_args(&catalogue, &[("a", &a), ("b", &b)], &run);
    args.push("--quiet".into());
    let out = coherence(&args, dir.path(), &[]);
    assert_eq!(
        exit_code(&out),
        0,
        "both wrong with the same answer is `same`"
    );
    assert_eq!(
        prompt(&results(&run), "eggs")["answers"]["a"]["correct"],
        json!(false)
    );
    drop((a, b));

    std::fs::write(&math, good).unwrap();
    let out = coherence(&["score", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    assert_eq!(prompt(&r, "eggs")["answers"]["a"]["correct"], json!(true));
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains("changed since the run"),
        "{}",
        r["warnings"]
    );
}

#[test]
fn junit_has_a_testcase_per_prompt_and_pair() {
    let dir = tempfile::tempdir().unwrap();
    let run = rich_run(dir.path());
    let junit = read(&run, "junit.xml");
    assert!(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"coherence\" tests=\"10\" skipped=\"0\" failures=\"1\" errors=\"1\">"), "{junit}");
    assert!(junit.contains(
        "<testsuite name=\"a vs b\" tests=\"5\" skipped=\"0\" errors=\"0\" failures=\"1\">"
    ));
    assert!(junit.contains(
        "<testsuite name=\"a vs c\" tests=\"5\" skipped=\"0\" errors=\"1\" failures=\"0\">"
    ));
    assert!(junit.contains("<testcase name=\"count_letters\" classname=\"coherence.counting_traps\">\n            <failure message=\"reference correct, other wrong\" type=\"diff\">"), "{junit}");
    assert!(junit.contains(
        "<error message=\"the other endpoint produced no usable answer\" type=\"fail\">"
    ));
    assert_eq!(junit.matches("<testcase ").count(), 10);
}

#[test]
fn score_and_report_refuse_a_folder_that_is_not_a_run() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["score", "report"] {
        let out = coherence(&[cmd, &dir.path().display().to_string()], dir.path(), &[]);
        assert_eq!(exit_code(&out), 2, "{cmd}");
        assert!(
            stderr(&out).contains(&dir.path().display().to_string()),
            "{cmd}: {}",
            stderr(&out)
        );
    }
}

/// Replace what changes from run to run (ports, timings) so the snapshot is stable.
fn redact(text: &str) -> String {
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    port.replace_all(text, "127.0.0.1:PORT").into_owned()
}

#[test]
fn rendered_reports_match_their_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let run = rich_run(dir.path());
    insta::assert_snapshot!("report_md", redact(&read(&run, "report.md")));
    insta::assert_snapshot!(
        "comparison_table_md",
        redact(&read(&run, "comparison_table.md"))
    );
    insta::assert_snapshot!("junit_xml", redact(&read(&run, "junit.xml")));
}

/// Rewrite one field of a run's manifest.json as a user with an editor might.
fn edit_manifest(run: &Path, edit: impl FnOnce(&mut Value)) {
    let path = run.join("manifest.json");
    let mut manifest: Value = serde_json::from_str(&read(run, "manifest.json")).unwrap();
    edit(&mut manifest);
    std::fs::write(path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
}

#[test]
fn score_refuses_a_manifest_without_endpoints_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--only", "capital"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    edit_manifest(&run, |m| m["endpoints"] = json!([]));
    let out = coherence(&["score", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("manifest.json") && err.contains("`endpoints` is empty"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn score_refuses_a_hand_edited_non_ascii_catalogue_hash_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--only", "capital"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    edit_manifest(&run, |m| m["catalogue"]["hash"] = json!("ééééééééééééé"));
    let out = coherence(&["score", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("`catalogue.hash` `ééééééééééééé` is not a sha256"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
