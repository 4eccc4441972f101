//! End to end against real OpenAI-compatible servers (two llama.cpp deployments started by
//! `scripts/ci-real-endpoints.sh`). Asserts structure and consistency, never what the model answers.
//!
//! Run: `COHERENCE_REAL_A=http://127.0.0.1:18001/v1 COHERENCE_REAL_B=http://127.0.0.1:18002/v1 cargo test --test integration real_endpoints:: -- --ignored`

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::common::*;
use serde_json::Value;

fn endpoints() -> (String, String) {
    let get = |v: &str| {
        std::env::var(v).unwrap_or_else(|_| {
            panic!("set {v} to a real endpoint's base URL (see scripts/ci-real-endpoints.sh)")
        })
    };
    (get("COHERENCE_REAL_A"), get("COHERENCE_REAL_B"))
}

/// Up to two prompts from each category of the shipped catalogue.
fn subset() -> (Vec<String>, usize) {
    let catalogue = coherence::catalogue::load_catalogue(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts"),
    )
    .unwrap();
    let mut per_cat: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in &catalogue.prompts {
        let ids = per_cat.entry(p.category.clone()).or_default();
        if ids.len() < 2 {
            ids.push(p.id.clone());
        }
    }
    let cats = per_cat.len();
    (per_cat.into_values().flatten().collect(), cats)
}

#[test]
#[ignore = "needs two real endpoints: scripts/ci-real-endpoints.sh"]
fn real_comparison_is_complete_and_consistent() {
    let (a, b) = endpoints();
    let (ids, categories) = subset();
    assert!(
        ids.len() >= 15 && categories >= 8,
        "the subset must span 15 prompts in 8 categories: {ids:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let key = "sk-real-e2e-never-stored-91c3";
    let only = ids.join(",");
    let out = coherence(
        &[
            "compare",
            "--endpoint",
            &format!("f16={a}"),
            "--endpoint",
            &format!("q4={b}"),
            "--only",
            &only,
            "--repeats",
            "2",
            "--concurrency",
            "1",
            "--max-tokens",
            "256",
            "--timeout",
            "300",
            "--out",
            &run.display().to_string(),
            "--catalogue",
            concat!(env!("CARGO_MANIFEST_DIR"), "/prompts"),
        ],
        dir.path(),
        &[("OPENAI_API_KEY", key)],
    );
    let code = exit_code(&out);
    println!("{}", stdout(&out));
    eprintln!("{}", stderr(&out));

    for file in [
        "manifest.json",
        "records.jsonl",
        "results.json",
        "report.md",
        "comparison_table.md",
    ] {
        assert!(run.join(file).is_file(), "{file} missing");
    }
    // One record per key.
    let recs = records(&run);
    let keys: HashSet<(String, String, u64, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["prompt"].as_str().unwrap().into(),
                r["endpoint"].as_str().unwrap().into(),
                r["max_tokens"].as_u64().unwrap(),
                r["repeat"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(keys.len(), recs.len(), "a key was recorded twice");
    assert_eq!(
        recs.len(),
        ids.len() * 2 * 2,
        "prompts x endpoints x repeats"
    );
    for r in &recs {
        assert_eq!(r["http_status"], Value::from(200), "{r}");
    }

    // Verdicts consistent with the scores.
    let res = results(&run);
    assert_eq!(res["prompts"].as_array().unwrap().len(), ids.len());
    let mut counted = BTreeMap::new();
    for p in res["prompts"].as_array().unwrap() {
        let verdict = p["verdict"].as_str().unwrap();
        *counted.entry(verdict.to_string()).or_insert(0u64) += 1;
        let (x, y) = (&p["answers"]["f16"], &p["answers"]["q4"]);
        if !x["error"].is_null() || !y["error"].is_null() {
            assert_eq!(verdict, "fail", "{p}");
        } else if x["correct"].is_boolean() && y["correct"].is_boolean() {
            if x["correct"] != y["correct"] {
                assert_eq!(verdict, "diff", "{p}");
            } else if x["correct"] == true
                || (x["extracted"] == y["extracted"] && !x["extracted"].is_null())
            {
                assert_eq!(verdict, "same", "{p}");
            } else {
                // Both wrong, extracted differently or neither read an answer: a different
                // answer, the same failure rendered differently (`format`, which the pair's kind
                // must then say), or, with no answer read from either, the same text.
                let allowed: &[&str] = if x["extracted"].is_null() && y["extracted"].is_null() {
                    &["same", "diff", "format"]
                } else {
                    &["diff", "format"]
                };
                assert!(allowed.contains(&verdict), "{p}");
                if verdict == "format" {
                    assert_eq!(p["pairs"][0]["kind"], "format", "{p}");
                }
            }
        }
    }
    for v in ["same", "format", "diff", "review", "fail"] {
        assert_eq!(
            res["summary"][v].as_u64().unwrap(),
            counted.get(v).copied().unwrap_or(0),
            "summary.{v}"
        );
    }

    // Exit code semantics of the default gate: a quality verdict of `different`, or a prompt
    // without a usable answer, fails it; text differences alone do not.
    let different = res["quality"]
        .as_array()
        .unwrap()
        .iter()
        .any(|q| q["verdict"] == "different");
    let failed = res["summary"]["fail"].as_u64().unwrap() > 0;
    let expected_code = if res["complete"] != true {
        3
    } else if different || failed {
        1
    } else {
        0
    };
    assert_eq!(code, expected_code);
    let q = &res["quality"][0];
    assert!(
        ["equivalent", "different", "inconclusive"].contains(&q["verdict"].as_str().unwrap()),
        "{q}"
    );
    assert_eq!(
        res["parity"][0]["prompt_tokens_mismatches"],
        Value::from(0),
        "one model, one template: prompt token counts agree"
    );
    assert_eq!(
        res["complete"],
        Value::from(true),
        "real servers answered everything"
    );

    // The fingerprints of both deployments were captured.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    for e in manifest["endpoints"].as_array().unwrap() {
        assert!(!e["models"]["ids"].as_array().unwrap().is_empty(), "{e}");
    }

    // No secret anywhere in the folder.
    for entry in std::fs::read_dir(&run).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(key));
    }
}

#[test]
#[ignore = "needs real endpoints with prompt logprobs: scripts/ci-real-endpoints.sh"]
fn real_logprobs_read_zero_against_a_twin_and_more_against_q4_kv() {
    let (a, b) = endpoints();
    let twin = std::env::var("COHERENCE_REAL_A_TWIN")
        .expect("set COHERENCE_REAL_A_TWIN to a second server of A's configuration");
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(
        &[
            "logprobs",
            "--endpoint",
            &format!("f16={a}"),
            "--endpoint",
            &format!("q4={b}"),
            "--endpoint",
            &format!("twin={twin}"),
            "--limit",
            "8",
            "--concurrency",
            "1",
            "--json",
        ],
        dir.path(),
        &[],
    );
    eprintln!("{}", stderr(&out));
    assert_eq!(exit_code(&out), 0);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let pair = |other: &str| {
        report["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["other"] == other)
            .unwrap()
            .clone()
    };
    let (q4, twin) = (pair("q4"), pair("twin"));
    assert!(twin["tokens"].as_u64().unwrap() > 100, "{twin}");
    assert!(
        twin["mean_kld"].as_f64().unwrap() < 1e-6,
        "negative control: {twin}"
    );
    assert!(twin["top1_agreement"].as_f64().unwrap() > 0.999, "{twin}");
    assert!(q4["mean_kld"].as_f64().unwrap() > 0.0, "{q4}");
    for s in report["self_consistency"].as_array().unwrap() {
        // llama-cpp-python's echo is one position off; the tool finds and compensates it.
        assert_eq!(s["offset"], Value::from(1), "{s}");
        assert!(s["max_abs_diff"].as_f64().unwrap() < 0.1, "{s}");
    }
}

#[test]
#[ignore = "needs real endpoints with prompt logprobs and the model's chat template: scripts/ci-real-endpoints.sh"]
fn real_teacher_forcing_reads_zero_for_a_twin_and_more_for_q4_kv() {
    let (a, b) = endpoints();
    let twin = std::env::var("COHERENCE_REAL_A_TWIN")
        .expect("set COHERENCE_REAL_A_TWIN to a second server of A's configuration");
    let template = std::env::var("COHERENCE_REAL_CHAT_TEMPLATE")
        .expect("set COHERENCE_REAL_CHAT_TEMPLATE to the model's GGUF file (its chat template is read from it)");
    let (ids, _) = subset();
    let only = ids.iter().take(12).cloned().collect::<Vec<_>>().join(",");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = coherence(
        &[
            "compare",
            "--endpoint",
            &format!("f16={a}"),
            "--endpoint",
            &format!("twin={twin}"),
            "--endpoint",
            &format!("q4={b}"),
            "--only",
            &only,
            "--max-tokens",
            "48",
            "--logprobs",
            "--chat-template",
            &template,
            "--fail-on",
            "fail>0",
            "--out",
            run.to_str().unwrap(),
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    eprintln!("{}", stderr(&out));
    assert_eq!(exit_code(&out), 0);
    let r = results(&run);
    let forcing = &r["teacher_forcing"];
    let refused: Vec<&Value> = forcing["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] != "tokenization")
        .collect();
    assert!(
        refused.is_empty(),
        "the template reproduces the chat prompt: {refused:?}"
    );
    for e in forcing["endpoints"].as_array().unwrap() {
        // llama-cpp-python drops a leading BOS from echo: chat renderings (which start with it)
        // are aligned, plain text is one position off.
        let want = if e["condition"] == "chat" { 0 } else { 1 };
        assert_eq!(e["offset"], Value::from(want), "{e}");
    }
    let pair = |other: &str| {
        r["token_agreement"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["other"] == other)
            .unwrap()
            .clone()
    };
    let (twin, q4) = (pair("twin"), pair("q4"));
    eprintln!(
        "teacher-forced on {} prompts: twin {} tokens, mean KLD {}, same top {}; q4 {} tokens, mean KLD {}, p99 {}, same top {}, RMS Δp {}",
        forcing["prompts_scored"], twin["tokens"], twin["mean_kld"], twin["top1_agreement"],
        q4["tokens"], q4["mean_kld"], q4["p99_kld"], q4["top1_agreement"], q4["rms_delta_p"]
    );
    assert!(twin["passages_compared"].as_u64().unwrap() >= 10, "{twin}");
    assert!(
        twin["mean_kld"].as_f64().unwrap() < 1e-6,
        "negative control: {twin}"
    );
    assert!(twin["top1_agreement"].as_f64().unwrap() > 0.999, "{twin}");
    assert!(q4["mean_kld"].as_f64().unwrap() > 0.0, "{q4}");
}
