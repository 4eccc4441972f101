//! Issue 50's done-when, end to end against fakes whose skill has an edge: calibration on the
//! reference picks each family's level, floors are said, and no calibration item reaches the
//! compared endpoint.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use coherence::catalogue::generator::{self, Levels, Version, HIGHEST, LOWEST};

use crate::common::*;

const SEED: u64 = 5;
const ITEMS: usize = 280;

/// Every item a run of seed [`SEED`] can send: the measured items and the first 40 calibration
/// items of each family, at every level.
fn every_item() -> Vec<coherence::catalogue::Prompt> {
    let mut all = Vec::new();
    for level in LOWEST..=HIGHEST {
        all.extend(generator::generate_at(
            Version::V3,
            SEED,
            ITEMS,
            &Levels::all_at(level),
        ));
        for family in generator::families() {
            all.extend((0..40).filter_map(|k| generator::calibration_item(SEED, family, level, k)));
        }
    }
    all
}

/// Every question a run of seed [`SEED`] can send, with its level, family, reference and wrong
/// answers.
fn every_question() -> HashMap<String, (u8, String, String, String)> {
    every_item()
        .into_iter()
        .map(|p| {
            let level = generator::difficulty(&p).unwrap_or_default();
            (
                p.question().to_string(),
                (level, p.category, p.reference, p.wrong),
            )
        })
        .collect()
}

/// A model right on every generated item up to level `edge` (up to `letters_edge` for the
/// letters family) and wrong above it: the fake computes each answer from the generator.
fn model_with_edge(edge: u8, letters_edge: u8) -> FakeServer {
    failing_model_with_edge(edge, letters_edge, Arc::new(AtomicBool::new(false)))
}

/// [`model_with_edge`], failing (HTTP 500) every `logic` calibration request while `failing`.
fn failing_model_with_edge(edge: u8, letters_edge: u8, failing: Arc<AtomicBool>) -> FakeServer {
    let answers = every_question();
    let logic_calibration = calibration_questions_of("logic");
    FakeServer::start("m", move |req| match answers.get(&req.question()) {
        _ if failing.load(Ordering::SeqCst) && logic_calibration.contains(&req.question()) => {
            Reply::status(500, "down")
        }
        Some((level, family, reference, wrong)) => {
            let reach = if family == "letters" {
                letters_edge
            } else {
                edge
            };
            Reply::content(if *level <= reach { reference } else { wrong })
        }
        None => Reply::status(404, "unknown question"),
    })
}

/// `compare --suite generated` of `a` (the reference) against `b`, calibrated (the default).
fn calibrated_compare(dir: &std::path::Path, a: &FakeServer, b: &FakeServer) -> serde_json::Value {
    let (out, run) = calibrated_run(dir, a, b);
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    results(&run)
}

/// The output and folder of `compare --suite generated` of `a` against `b` into `dir/run`.
fn calibrated_run(
    dir: &std::path::Path,
    a: &FakeServer,
    b: &FakeServer,
) -> (std::process::Output, std::path::PathBuf) {
    let run = dir.join("run");
    let items = ITEMS.to_string();
    let out = coherence(
        &[
            "compare",
            "--endpoint",
            &format!("a={}", a.url()),
            "--endpoint",
            &format!("b={}", b.url()),
            "--suite",
            "generated",
            "--items",
            &items,
            "--seed",
            "5",
            "--no-logprobs",
            "--concurrency",
            "8",
            "--backoff-ms",
            "1",
            "--quiet",
            "--out",
            run.to_str().unwrap(),
        ],
        dir,
        &[],
    );
    (out, run)
}

/// The questions of the calibration stream of seed [`SEED`] (every level, the first 40 items).
fn calibration_questions() -> BTreeSet<String> {
    calibration_questions_of("")
}

/// [`calibration_questions`] of the families whose name contains `family`.
fn calibration_questions_of(family: &str) -> BTreeSet<String> {
    every_item()
        .iter()
        .filter(|p| p.id.contains(".cal") && p.category.contains(family))
        .map(|p| p.question().to_string())
        .collect()
}

/// The questions of the chat requests `server` received.
fn chat_questions(server: &FakeServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| r.question())
        .filter(|q| !q.is_empty())
        .collect()
}

#[test]
fn a_model_right_up_to_level_3_is_measured_there_and_equivalent_to_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (model_with_edge(3, 3), model_with_edge(3, 3));
    let r = calibrated_compare(dir.path(), &a, &b);
    let difficulty = r["difficulty"].as_array().unwrap();
    assert_eq!(difficulty.len(), 14);
    for f in difficulty {
        assert_eq!(f["level"], 3, "{f}");
        assert_eq!(f["status"], "measured", "{f}");
        assert!(f["requests"].as_u64().unwrap() <= 24, "{f}");
    }
    for e in r["endpoints"].as_array().unwrap() {
        let (right, wrong) = (e["correct"].as_f64().unwrap(), e["wrong"].as_f64().unwrap());
        assert!(right / (right + wrong) >= 0.9, "{e}");
    }
    assert_eq!(
        r["summary"]["behaviour"]["verdict"], "equivalent",
        "{}",
        r["summary"]
    );
    let because = r["summary"]["behaviour"]["because"].to_string();
    assert!(because.contains("on 14 of 14 families"), "{because}");

    // No calibration item reached the compared endpoint: it was asked exactly the measured
    // items, at level 3; the reference answered the calibration items besides.
    let measured: BTreeSet<String> =
        generator::generate_at(Version::V3, SEED, ITEMS, &Levels::all_at(3))
            .iter()
            .map(|p| p.question().to_string())
            .collect();
    let to_b = chat_questions(&b);
    assert_eq!(to_b.len(), ITEMS, "b answers the measured items only");
    assert!(to_b.iter().all(|q| measured.contains(q)));
    let calibration = calibration_questions();
    let only_calibration = chat_questions(&a)
        .iter()
        .filter(|q| calibration.contains(*q) && !measured.contains(*q))
        .count();
    assert!(
        only_calibration >= 14 * 8,
        "{only_calibration} calibration requests"
    );
}

#[test]
fn a_model_that_does_letters_only_to_level_2_reads_different_with_letters_named() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (model_with_edge(3, 3), model_with_edge(3, 2));
    let r = calibrated_compare(dir.path(), &a, &b);
    assert_eq!(
        r["summary"]["behaviour"]["verdict"], "different",
        "{}",
        r["summary"]
    );
    let because = r["summary"]["behaviour"]["because"].to_string();
    assert!(because.contains("letters"), "{because}");
    let families = &r["families"][0]["different_families"];
    assert_eq!(families, &serde_json::json!(["letters"]));
}

#[test]
fn a_model_right_on_nothing_is_at_the_floor_everywhere_and_not_equivalent() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (model_with_edge(0, 0), model_with_edge(0, 0));
    let r = calibrated_compare(dir.path(), &a, &b);
    for f in r["difficulty"].as_array().unwrap() {
        assert_eq!(f["status"], "floor", "{f}");
        assert_eq!(f["level"], 1, "{f}");
    }
    let behaviour = &r["summary"]["behaviour"];
    assert_eq!(behaviour["verdict"], "not_measured", "{behaviour}");
    assert_eq!(
        behaviour["because"][0],
        "the reference answers no family above its floor"
    );
    assert_ne!(r["summary"]["same_model"], "yes");
    // Nothing measured was sent to either endpoint.
    assert!(chat_questions(&b).is_empty());
}

/// A calibration request that fails stops the run before anything is measured (exit 3); a
/// resume sends only the failed ones again, replays the rest from calibration.jsonl and
/// finishes with the same levels.
#[test]
fn a_failed_calibration_stops_the_run_and_a_resume_continues_it() {
    let dir = tempfile::tempdir().unwrap();
    let failing = Arc::new(AtomicBool::new(true));
    let a = failing_model_with_edge(3, 3, failing.clone());
    let b = model_with_edge(3, 3);
    let (out, run) = calibrated_run(dir.path(), &a, &b);
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    assert!(chat_questions(&b).is_empty(), "nothing measured was sent");
    let first: BTreeSet<String> = chat_questions(&a).into_iter().collect();
    let sent_first = chat_questions(&a).len();

    failing.store(false, Ordering::SeqCst);
    let out = resume(dir.path(), &run, &[]);
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    let r = results(&run);
    for f in r["difficulty"].as_array().unwrap() {
        assert_eq!(
            (f["level"].as_u64(), f["status"].as_str()),
            (Some(3), Some("measured")),
            "{f}"
        );
    }
    // What the first run got answered was not asked again: only logic's calibration (which
    // failed) and the measured items.
    let calibration = calibration_questions();
    let logic = calibration_questions_of("logic");
    let again: Vec<String> = chat_questions(&a)
        .into_iter()
        .skip(sent_first)
        .filter(|q| calibration.contains(q) && first.contains(q))
        .filter(|q| !logic.contains(q))
        .collect();
    assert!(again.is_empty(), "{again:?}");
    assert_eq!(chat_questions(&b).len(), ITEMS);
}

/// `prompts list --difficulty N` lists exactly what a run sends at level N, each item with its
/// level; `--calibration` lists the calibration stream, none of it a measured item.
#[test]
fn prompts_list_shows_each_level_and_the_calibration_items() {
    let dir = tempfile::tempdir().unwrap();
    let list = |extra: &[&str]| {
        let mut args = vec![
            "prompts",
            "list",
            "--suite",
            "generated",
            "--seed",
            "5",
            "--json",
        ];
        args.extend(extra);
        let out = coherence(&args, dir.path(), &[]);
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let listed = list(&["--difficulty", "3", "--items", "28"]);
    let items = generator::generate_at(Version::V3, SEED, 28, &Levels::all_at(3));
    let prompts = listed["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 28);
    for (p, item) in prompts.iter().zip(&items) {
        assert_eq!(p["prompt"], item.question());
        assert_eq!(p["difficulty"], 3);
    }
    assert_eq!(listed["generated"]["levels"]["letters"], 3);
    let calibration = list(&["--calibration", "--difficulty", "letters=2", "--items", "5"]);
    let cal = calibration["prompts"].as_array().unwrap();
    assert_eq!(cal.len(), 14 * 5);
    let letters: Vec<&serde_json::Value> =
        cal.iter().filter(|p| p["family"] == "letters").collect();
    assert!(letters.iter().all(|p| p["difficulty"] == 2));
    assert!(cal
        .iter()
        .all(|p| p["id"].as_str().unwrap().contains(".cal")));
    let bad = coherence(
        &[
            "prompts",
            "list",
            "--suite",
            "generated",
            "--difficulty",
            "9",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&bad), 2);
    assert!(stderr(&bad).contains("--difficulty"), "{}", stderr(&bad));
}

/// The dry run counts the calibration's requests; fixed levels have none; a baseline run keeps
/// the baseline's levels and calibration, and its new endpoint answers measured items only.
#[test]
fn dry_runs_count_calibration_and_a_baseline_keeps_its_levels() {
    let dir = tempfile::tempdir().unwrap();
    let dry = |extra: &[&str]| {
        let mut args = vec![
            "compare",
            "--endpoint",
            "a=http://127.0.0.1:9/v1",
            "--endpoint",
            "b=http://127.0.0.1:9/v1",
            "--suite",
            "generated",
            "--items",
            "28",
            "--dry-run",
            "--json",
        ];
        args.extend(extra);
        let out = coherence(&args, dir.path(), &[]);
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let auto = dry(&["--target-accuracy", "70%"]);
    assert_eq!(auto["calibration"]["max_requests"], 14 * 24);
    assert_eq!(auto["calibration"]["target_accuracy"], 0.7);
    assert!(dry(&["--difficulty", "4"])["calibration"].is_null());

    let (a, b) = (model_with_edge(3, 3), model_with_edge(3, 3));
    let (out, run) = calibrated_run(dir.path(), &a, &b);
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    let c = model_with_edge(3, 3);
    let again = dir.path().join("again");
    let out = coherence(
        &[
            "compare",
            "--baseline",
            run.to_str().unwrap(),
            "--endpoint",
            &format!("c={}", c.url()),
            "--quiet",
            "--out",
            again.to_str().unwrap(),
        ],
        dir.path(),
        &[],
    );
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    let manifest = |run: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap()
    };
    assert_eq!(
        manifest(&again)["catalogue"]["generated"]["levels"],
        manifest(&run)["catalogue"]["generated"]["levels"]
    );
    assert_eq!(results(&again)["difficulty"], results(&run)["difficulty"]);
    let measured: BTreeSet<String> =
        generator::generate_at(Version::V3, SEED, ITEMS, &Levels::all_at(3))
            .iter()
            .map(|p| p.question().to_string())
            .collect();
    let to_c = chat_questions(&c);
    assert!(!to_c.is_empty() && to_c.iter().all(|q| measured.contains(q)));
}
