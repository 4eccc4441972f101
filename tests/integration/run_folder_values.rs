//! A run folder's values are checked where they are read: a manifest out of bounds is a usage
//! error (exit 2) naming manifest.json for `score` and `compare --resume`, a results.json of a
//! later layout is refused by `report`, journal lines outside the run are noted, and a huge
//! `--repeats` is refused before anything is planned.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::*;

/// A finished, complete run of two agreeing endpoints in `dir/run`.
fn finished_run(dir: &Path) -> std::path::PathBuf {
    let (a, b) = (correct_server(), correct_server());
    let (out, run) = compare(dir, &[("a", &a), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    run
}

/// Rewrite one field of the run's manifest.json.
fn set_manifest(run: &Path, field: &str, value: Value) {
    let path = run.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest[field] = value;
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
}

/// `score RUN` and `compare --resume RUN` both refuse the manifest with exit 2, naming the file
/// and `expect`.
fn refused(dir: &Path, run: &Path, expect: &str) {
    let score = coherence(&["score", &run.display().to_string()], dir, &[]);
    assert_eq!(exit_code(&score), 2, "score: {}", stderr(&score));
    let resumed = resume(dir, run, &[]);
    assert_eq!(exit_code(&resumed), 2, "resume: {}", stderr(&resumed));
    for out in [&score, &resumed] {
        let err = stderr(out);
        assert!(
            err.contains("manifest.json") && err.contains(expect),
            "{err}"
        );
    }
}

#[test]
fn a_huge_repeats_in_the_manifest_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished_run(dir.path());
    set_manifest(&run, "repeats", json!(4294967295u32));
    refused(dir.path(), &run, "`repeats`");
}

#[test]
fn an_empty_scope_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished_run(dir.path());
    set_manifest(&run, "prompts", json!([]));
    refused(dir.path(), &run, "`prompts` is empty");
}

#[test]
fn a_prompt_listed_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished_run(dir.path());
    set_manifest(&run, "prompts", json!(["capital", "capital"]));
    refused(dir.path(), &run, "prompt `capital` appears twice");
}

#[test]
fn a_margin_out_of_range_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished_run(dir.path());
    set_manifest(&run, "margin", json!(-5.0));
    refused(dir.path(), &run, "`margin` is -5");
}

#[test]
fn a_broken_base_url_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished_run(dir.path());
    let path = run.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["endpoints"][1]["base_url"] = json!("not a url");
    std::fs::write(&path, manifest.to_string()).unwrap();
    refused(dir.path(), &run, "endpoint `b`: `base_url`");
}

#[test]
fn results_of_a_later_layout_are_not_rendered() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished_run(dir.path());
    let path = run.join("results.json");
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    results["schema_version"] = json!(999);
    std::fs::write(&path, results.to_string()).unwrap();
    let out = coherence(&["report", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("results.json") && stderr(&out).contains("999"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn records_outside_the_run_are_noted() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished_run(dir.path());
    let mut lines = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    let first: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    for (field, value) in [
        ("prompt", json!("nowhere")),
        ("endpoint", json!("c")),
        ("repeat", json!(7)),
    ] {
        let mut stray = first.clone();
        stray[field] = value;
        lines += &format!("{stray}\n");
    }
    std::fs::write(run.join("records.jsonl"), lines).unwrap();
    let out = coherence(&["score", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let warnings = results(&run)["warnings"].clone();
    let text = warnings.to_string();
    for expect in [
        "1 record for a prompt the run does not have (`nowhere`",
        "1 record for a endpoint the run does not have (`c`",
        "1 record for a repeat the run does not have (8",
    ] {
        assert!(text.contains(expect), "{expect}: {warnings}");
    }
}

#[test]
fn a_huge_repeats_flag_is_refused_before_planning() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let catalogue = write_catalogue(dir.path());
    let mut args = compare_args(&catalogue, &[("a", &a), ("b", &a)], &dir.path().join("run"));
    args.extend(["--dry-run", "--repeats", "1000000000"].map(String::from));
    let out = coherence(&args, dir.path(), &[]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--repeats 1000000000"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_dry_run_counts_without_listing() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let catalogue = write_catalogue(dir.path());
    let loaded = coherence::catalogue::load_catalogue(&catalogue).unwrap();
    let prompts = loaded.prompts.len();
    let tokens: u64 = loaded
        .prompts
        .iter()
        .map(|p| u64::from(p.max_tokens.unwrap_or(1024)))
        .sum();
    let mut args = compare_args(&catalogue, &[("a", &a), ("b", &a)], &dir.path().join("run"));
    args.extend(["--dry-run", "--json", "--repeats", "10000"].map(String::from));
    let out = coherence(&args, dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let plan: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(plan["requests"], json!(prompts * 2 * 10_000), "{plan}");
    assert_eq!(
        plan["endpoints"][0]["token_ceiling"],
        json!(tokens * 10_000),
        "{plan}"
    );
}

/// Rewrite the value at a JSON pointer of the run's manifest.json.
fn set_manifest_at(run: &Path, pointer: &str, value: Value) {
    let path = run.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    *manifest.pointer_mut(pointer).unwrap() = value;
    std::fs::write(&path, manifest.to_string()).unwrap();
}

/// Values a tampered manifest could smuggle into a resumed run: an endpoint named as a path
/// (sent and written under that name), a budget of 0 tokens (every request resent with
/// `max_tokens` 0), a catalogue hash zeroed or not a hash at all (so a changed catalogue went
/// unnoticed). Each is refused on load, naming the field.
#[test]
fn a_path_for_a_name_a_zero_budget_or_a_forged_catalogue_hash_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = finished_run(dir.path());
    let original = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    let cases = [
        (
            "/endpoints/1/name",
            json!("../../x"),
            "endpoint `name` `../../x`",
        ),
        ("/endpoints/1/name", json!(".."), "endpoint `name` `..`"),
        (
            "/sampling/default_max_tokens",
            json!(0),
            "`sampling.default_max_tokens`",
        ),
        (
            "/catalogue/hash",
            json!("0".repeat(64)),
            "`catalogue.hash` is all zeros",
        ),
        (
            "/catalogue/hash",
            json!(""),
            "`catalogue.hash` `` is not a sha256",
        ),
        (
            "/catalogue/hash",
            json!("ééé"),
            "`catalogue.hash` `ééé` is not a sha256",
        ),
    ];
    for (pointer, value, expect) in cases {
        std::fs::write(run.join("manifest.json"), &original).unwrap();
        set_manifest_at(&run, pointer, value);
        refused(dir.path(), &run, expect);
    }
}
