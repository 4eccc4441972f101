//! The generated suite on the command line: `prompts list/check --suite generated`, and a
//! compare of generated items that `coherence score` re-scores identically from the manifest.

use std::collections::HashMap;

use coherence::catalogue::generator::{self, Levels};

use crate::common::*;

/// A fake answering each generated question (seed 5) with its reference, or with its wrong
/// answer for the items of `wrong_family`.
fn generated_endpoint(items: usize, wrong_family: Option<&str>) -> FakeServer {
    let answers: HashMap<String, String> = generator::generate(5, items)
        .into_iter()
        .map(|p| {
            let answer = if Some(p.category.as_str()) == wrong_family {
                p.wrong.clone()
            } else {
                p.reference.clone()
            };
            (p.question().to_string(), answer)
        })
        .collect();
    FakeServer::start("m", move |req| match answers.get(&req.question()) {
        Some(a) => Reply::content(a),
        None => Reply::status(404, "unknown question"),
    })
}

/// A fake answering every generated question of seed 1 rightly, at every level and in the
/// calibration stream (so calibration finds it at the ceiling), and every other question (the
/// core catalogue's) alike and wrongly.
fn generated_and_core_endpoint(items: usize) -> FakeServer {
    let mut answers: HashMap<String, String> = HashMap::new();
    for level in generator::LOWEST..=generator::HIGHEST {
        let measured =
            generator::generate_at(generator::Version::V3, 1, items, &Levels::all_at(level));
        let calibration = generator::families()
            .flat_map(|f| (0..24).filter_map(move |k| generator::calibration_item(1, f, level, k)));
        for p in measured.into_iter().chain(calibration) {
            answers.insert(p.question().to_string(), p.reference.clone());
        }
    }
    FakeServer::start("m", move |req| match answers.get(&req.question()) {
        Some(a) => Reply::content(a),
        None => Reply::content("I do not know."),
    })
}

#[test]
fn prompts_check_proves_every_generated_item() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(
        &["prompts", "check", "--suite", "generated", "--items", "400"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}{}", stderr(&out), stdout(&out));
    assert!(stdout(&out).contains("ok: 400 prompts"), "{}", stdout(&out));
}

#[test]
fn prompts_list_json_gives_each_item_with_its_answers() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(
        &[
            "prompts",
            "list",
            "--suite",
            "core,generated",
            "--items",
            "30",
            "--seed",
            "5",
            "--json",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let list = json_of(&out);
    let prompts = list["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 130);
    assert_eq!(list["generated"]["seed"], 5);
    assert_eq!(list["generated"]["items"], 30);
    let items = generator::generate(5, 30);
    let listed: Vec<_> = prompts
        .iter()
        .filter(|p| p["suite"] == "generated")
        .collect();
    assert_eq!(listed.len(), 30);
    for (p, item) in listed.iter().zip(&items) {
        assert_eq!(p["id"], item.id.as_str());
        assert_eq!(p["family"], item.category.as_str());
        assert_eq!(p["prompt"], item.question());
        assert_eq!(p["reference"], item.reference.as_str());
        assert_eq!(p["wrong"], item.wrong.as_str());
        assert!(!p["expected"].as_str().unwrap().is_empty());
    }
    let sorting = listed.iter().find(|p| p["family"] == "sorting").unwrap();
    assert_eq!(sorting["expected"], sorting["reference"]);
    assert!(prompts
        .iter()
        .any(|p| p["suite"] == "core" && p["id"] == "count_letters"));
}

#[test]
fn unknown_suites_and_absurd_item_counts_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(&["prompts", "list", "--suite", "mystery"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("--suite"), "{}", stderr(&out));
    let out = coherence(
        &["prompts", "list", "--suite", "generated", "--items", "0"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("--items"), "{}", stderr(&out));
}

/// `compare --suite generated --items N --seed 5` of `a` against `b`, into `dir/run`.
fn compare_generated(
    dir: &std::path::Path,
    a: &FakeServer,
    b: &FakeServer,
    items: usize,
) -> std::path::PathBuf {
    let run = dir.join("run");
    let mut args = vec!["compare".to_string()];
    for (name, server) in [("a", a), ("b", b)] {
        args.push("--endpoint".into());
        args.push(format!("{name}={}", server.url()));
    }
    let items = items.to_string();
    let flags = [
        "--suite",
        "generated",
        "--items",
        &items,
        "--seed",
        "5",
        "--difficulty",
        "4",
    ];
    args.extend(flags.map(String::from));
    args.extend(["--quiet", "--out"].map(String::from));
    args.push(run.display().to_string());
    let out = coherence(&args, dir, &[]);
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    run
}

#[test]
fn a_generated_run_is_rescored_identically_from_its_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let a = generated_endpoint(200, None);
    let b = generated_endpoint(200, Some("letters"));
    let run = compare_generated(dir.path(), &a, &b, 200);

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["catalogue"]["suites"],
        serde_json::json!(["generated"])
    );
    assert_eq!(manifest["catalogue"]["generated"]["seed"], 5);
    assert_eq!(manifest["catalogue"]["generated"]["items"], 200);
    assert_eq!(
        manifest["catalogue"]["generated"]["generator_version"],
        generator::GENERATOR_VERSION
    );
    assert_eq!(manifest["prompts"].as_array().unwrap().len(), 200);

    let saved = results(&run);
    assert!(saved["prompts"].as_array().unwrap().len() == 200);
    let letters = prompt(&saved, "gen.letters.0000");
    assert_eq!(letters["category"], "letters");
    assert_eq!(prompt(&saved, "gen.sorting.0000")["category"], "sorting");

    let rescored = coherence(
        &["score", &run.display().to_string(), "--json"],
        dir.path(),
        &[],
    );
    assert!(
        matches!(exit_code(&rescored), 0 | 1),
        "{}",
        stderr(&rescored)
    );
    // Identical but for the time it was written.
    let mut rescored = json_of(&rescored);
    let mut saved = saved;
    for results in [&mut rescored, &mut saved] {
        results.as_object_mut().unwrap().remove("generated_at");
    }
    assert_eq!(rescored, saved);

    // A run whose items came from another generator version cannot be made again.
    let text = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    let other = text.replace(
        &format!("\"generator_version\": {}", generator::GENERATOR_VERSION),
        "\"generator_version\": 999",
    );
    assert_ne!(text, other);
    std::fs::write(run.join("manifest.json"), other).unwrap();
    let refused = coherence(&["score", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&refused), 2);
    assert!(
        stderr(&refused).contains("generator version 999"),
        "{}",
        stderr(&refused)
    );
}

/// Issue 48: the headline's "about N … would decide it" said 1,033 where results.json
/// `sequential` said 559 more. With generated items both now say the anytime-valid projection.
#[test]
fn what_would_decide_it_is_one_figure_in_the_headline_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let a = generated_endpoint(28, None);
    let b = generated_endpoint(28, Some("letters"));
    let run = compare_generated(dir.path(), &a, &b, 28);
    let r = results(&run);
    assert_eq!(
        r["quality"][0]["verdict"], "inconclusive",
        "{}",
        r["quality"]
    );
    assert_eq!(
        r["sequential"][0]["verdict"], "undecided",
        "{}",
        r["sequential"]
    );
    let more = r["sequential"][0]["more_items_to_decide"].as_u64().unwrap();
    assert_eq!(r["quality"][0]["more_generated_items"].as_u64(), Some(more));
    let graded = r["quality"][0]["graded"].as_u64().unwrap();
    assert_eq!(r["quality"][0]["decide_with"].as_u64(), Some(graded + more));
    let because = r["summary"]["same_model_because"].to_string();
    let phrase = format!("about {more} more generated items would decide it");
    assert!(because.contains(&phrase), "{phrase}: {because}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains(&phrase), "{report}");
    assert!(
        report.contains(&format!("About {more} more generated items")),
        "{report}"
    );
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// `compare --until-decided` of fakes `a` and `b` (seed 5), rounds of 100 up to `max_items`.
fn until_decided(a: &FakeServer, b: &FakeServer, max_items: &str) -> (serde_json::Value, i32) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = coherence(
        &[
            "compare",
            "--endpoint",
            &format!("a={}", a.url()),
            "--endpoint",
            &format!("b={}", b.url()),
            "--suite",
            "generated",
            "--seed",
            "5",
            "--difficulty",
            "4",
            "--until-decided",
            "--round-items",
            "100",
            "--max-items",
            max_items,
            "--concurrency",
            "8",
            "--quiet",
            "--out",
            &run.display().to_string(),
        ],
        dir.path(),
        &[],
    );
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["until_decided"]["round_items"], 100);
    // One run, however many rounds: each endpoint is asked for its models once, and the
    // invocation is recorded once.
    for fake in [a, b] {
        let models = fake
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("/models"))
            .count();
        assert_eq!(models, 1, "GET /models per endpoint");
    }
    assert_eq!(manifest["invocations"].as_array().unwrap().len(), 1);
    let results = results(&run);
    let looks = manifest["looks"].as_array().unwrap();
    assert_eq!(results["until_decided"]["looks"], looks.len());
    assert_eq!(
        results["sequential"][0]["looks"].as_array().unwrap().len(),
        looks.len()
    );
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("Rounds (--until-decided)"), "{report}");
    (results, exit_code(&out))
}

#[test]
fn until_decided_stops_early_and_says_same_model_for_two_correct_fakes() {
    let a = generated_endpoint(1000, None);
    let b = generated_endpoint(1000, None);
    let (results, code) = until_decided(&a, &b, "1000");
    assert_eq!(code, 0);
    let sent = results["prompts"].as_array().unwrap().len();
    assert!(sent < 1000, "stopped before the cap: {sent} items");
    assert_eq!(sent % 100, 0, "whole rounds: {sent}");
    assert_eq!(results["sequential"][0]["verdict"], "equivalent");
    assert_eq!(
        results["until_decided"]["stopped_because"],
        format!("every pair decided after {sent} generated items")
    );
    let looks = results["sequential"][0]["looks"].as_array().unwrap();
    assert_eq!(looks.len(), sent / 100, "a look after every round");
    assert_eq!(looks[0]["generated_items"], 100);
    assert_eq!(looks.last().unwrap()["verdict"], "equivalent");
    assert!(looks[..looks.len() - 1]
        .iter()
        .all(|l| l["verdict"] == "undecided"));
    assert_eq!(results["summary"]["same_model"], "yes");
    let because = results["summary"]["behaviour"]["because"][0]
        .as_str()
        .unwrap();
    assert!(
        because.starts_with(&format!(
            "equivalent within ±5 points on {sent} generated items"
        )),
        "{because}"
    );
    assert_eq!(results["summary"]["identity"]["verdict"], "identical");
}

#[test]
fn until_decided_names_the_one_family_a_fake_gets_wrong() {
    let a = generated_endpoint(1400, None);
    let b = generated_endpoint(1400, Some("letters"));
    let (results, code) = until_decided(&a, &b, "1400");
    assert_eq!(code, 1, "the gate fails on a different quality");
    assert_eq!(results["sequential"][0]["verdict"], "different");
    assert!(results["prompts"].as_array().unwrap().len() < 1400);
    assert_eq!(results["summary"]["same_model"], "no");
    assert_eq!(
        results["families"][0]["different_families"],
        serde_json::json!(["letters"])
    );
    let because: Vec<&str> = results["summary"]["behaviour"]["because"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        because[0].starts_with("accuracy differs by -"),
        "{because:?}"
    );
    assert!(
        because
            .iter()
            .any(|r| r.starts_with("letters: 100% vs 0% correct")),
        "{because:?}"
    );
}

#[test]
fn until_decided_says_it_reached_the_cap_when_the_difference_sits_on_the_margin() {
    let a = generated_endpoint(300, None);
    // Wrong on every 20th item: 5 points apart, on the margin, which 300 items cannot decide.
    let answers: HashMap<String, String> = generator::generate(5, 300)
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let answer = if i % 20 == 0 { &p.wrong } else { &p.reference };
            (p.question().to_string(), answer.clone())
        })
        .collect();
    let b = FakeServer::start("m", move |req| match answers.get(&req.question()) {
        Some(a) => Reply::content(a),
        None => Reply::status(404, "unknown question"),
    });
    let (results, _) = until_decided(&a, &b, "300");
    assert_eq!(results["prompts"].as_array().unwrap().len(), 300);
    assert_eq!(results["sequential"][0]["verdict"], "undecided");
    let because = results["until_decided"]["stopped_because"]
        .as_str()
        .unwrap();
    assert!(
        because.starts_with("reached the cap of 300 generated items (--max-items) undecided"),
        "{because}"
    );
    assert_eq!(results["until_decided"]["looks"], 3);
}

#[test]
fn until_decided_is_refused_for_determinism() {
    let a = generated_endpoint(10, None);
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(
        &[
            "determinism",
            "--endpoint",
            &format!("a={}", a.url()),
            "--until-decided",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("--until-decided"), "{}", stderr(&out));
}

#[test]
fn a_plain_compare_decides_with_generated_rounds_and_suite_core_sends_the_catalogue_alone() {
    let a = generated_and_core_endpoint(2000);
    let b = generated_and_core_endpoint(2000);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let plain = |extra: &[&str]| {
        let mut args = vec![
            "compare".to_string(),
            "--endpoint".into(),
            format!("a={}", a.url()),
            "--endpoint".into(),
            format!("b={}", b.url()),
            "--concurrency".into(),
            "8".into(),
            "--quiet".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        coherence(&args, dir.path(), &[])
    };

    let shown = plain(&["--dry-run", "--json"]);
    let planned = json_of(&shown);
    assert_eq!(
        planned["prompts"], 300,
        "100 core prompts and a first round of 200"
    );
    assert_eq!(planned["until_decided"]["max_items"], 2000);
    assert_eq!(
        planned["until_decided"]["more_requests_at_cap"],
        1800 * 2,
        "1,800 more items on 2 endpoints at the cap"
    );

    let out = plain(&["--out", &run.display().to_string()]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let results = results(&run);
    let prompts = results["prompts"].as_array().unwrap();
    let core = prompts
        .iter()
        .filter(|p| !p["id"].as_str().unwrap().starts_with("gen."))
        .count();
    assert_eq!(core, 100, "the core catalogue is sent too");
    assert!(
        prompts.len() - core < 2000,
        "stopped before the cap: {}",
        prompts.len() - core
    );
    assert_eq!(results["summary"]["same_model"], "yes");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["until_decided"]["max_items"], 2000);

    let core_only = json_of(&plain(&["--suite", "core", "--dry-run", "--json"]));
    assert_eq!(core_only["prompts"], 100);
    assert!(core_only["until_decided"].is_null());
}

#[test]
fn until_decided_stops_after_one_round_when_the_other_endpoint_counts_other_prompt_tokens() {
    let a = generated_endpoint(1000, None);
    let answers: HashMap<String, String> = generator::generate(5, 1000)
        .into_iter()
        .map(|p| (p.question().to_string(), p.reference.clone()))
        .collect();
    // Right on every item, but its tokenizer counts every prompt twice as long: another model.
    let b = FakeServer::start("other", move |req| match answers.get(&req.question()) {
        Some(text) => {
            let tokens = 2 * coherence_testkit::prompt_tokens(&req.body);
            Reply::json(
                200,
                serde_json::json!({
                    "model": "other",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": tokens, "completion_tokens": 3,
                              "total_tokens": tokens + 3},
                }),
            )
        }
        None => Reply::status(404, "unknown question"),
    });
    let (results, _) = until_decided(&a, &b, "1000");
    assert_eq!(
        results["prompts"].as_array().unwrap().len(),
        100,
        "one round: more items cannot undo another tokenizer"
    );
    assert_eq!(results["sequential"][0]["verdict"], "undecided");
    assert!(results["until_decided"]["stopped_because"]
        .as_str()
        .unwrap()
        .contains("the endpoints count other prompt tokens"));
    assert_eq!(results["summary"]["same_model"], "no");
}

#[test]
fn the_cap_of_a_plain_compare_is_set_without_until_decided_and_refused_where_nothing_decides() {
    let dir = tempfile::tempdir().unwrap();
    let endpoints = [
        "compare",
        "--endpoint",
        "a=http://127.0.0.1:9/v1",
        "--endpoint",
        "b=http://127.0.0.1:9/v1",
    ];
    let mut args: Vec<&str> = endpoints.to_vec();
    args.extend(["--max-items", "400", "--dry-run", "--json"]);
    let out = coherence(&args, dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["until_decided"]["max_items"], 400);
    let mut args: Vec<&str> = endpoints.to_vec();
    args.extend(["--suite", "core", "--max-items", "400", "--dry-run"]);
    let out = coherence(&args, dir.path(), &[]);
    assert_eq!(exit_code(&out), 2);
    assert!(
        stderr(&out).contains("add --until-decided"),
        "{}",
        stderr(&out)
    );
}
