//! Issue 50's done-when, end to end against fakes whose skill has an edge: calibration on the
//! reference picks each family's level, floors are said, and no calibration item reaches the
//! compared endpoint.

use std::collections::{BTreeSet, HashMap};

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
    let answers = every_question();
    FakeServer::start("m", move |req| match answers.get(&req.question()) {
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
            "--quiet",
            "--out",
            run.to_str().unwrap(),
        ],
        dir,
        &[],
    );
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    results(&run)
}

/// The questions of the calibration stream of seed [`SEED`] (every level, the first 40 items).
fn calibration_questions() -> BTreeSet<String> {
    every_item()
        .iter()
        .filter(|p| p.id.contains(".cal"))
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
