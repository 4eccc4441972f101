//! End to end against real OpenAI-compatible servers (the demo's two llama.cpp deployments, f16 and
//! q4_0 KV cache, started by `scripts/ci-real-endpoints.sh`). Asserts structure and consistency,
//! never what the model answers.
//!
//! Run: `COHERENCE_REAL_A=http://127.0.0.1:18001/v1 COHERENCE_REAL_B=http://127.0.0.1:18002/v1 cargo test --test integration real_endpoints:: -- --ignored`

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::common::*;
use serde_json::Value;

pub(crate) fn endpoints() -> (String, String) {
    let get = |v: &str| {
        std::env::var(v).unwrap_or_else(|_| {
            panic!("set {v} to a real endpoint's base URL (see scripts/ci-real-endpoints.sh)")
        })
    };
    (get("COHERENCE_REAL_A"), get("COHERENCE_REAL_B"))
}

/// Up to two prompts from each category of the shipped catalogue.
pub(crate) fn subset() -> (Vec<String>, usize) {
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
                // Both wrong: extracted differently, a different answer or the same failure
                // rendered differently (`format`); with no answer read from either, the same
                // text or, the texts differing, `no_answer`. The pair's kind says which.
                let allowed: &[&str] = if x["extracted"].is_null() && y["extracted"].is_null() {
                    &["same", "no_answer"]
                } else {
                    &["diff", "format"]
                };
                assert!(allowed.contains(&verdict), "{p}");
                if verdict == "format" || verdict == "no_answer" {
                    assert_eq!(p["pairs"][0]["kind"], verdict, "{p}");
                }
            }
        }
    }
    for v in ["same", "format", "no_answer", "diff", "review", "fail"] {
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

    // The identity axis, by decode logprobs against the reference's own repeat (the A-vs-A
    // control): a q4_0 KV cache computes other numbers than f16 (the demo decides it in a handful
    // of prompts), and the pair shares one chat template and tokenizer, so never `different`.
    let identity = &res["summary"]["identity"];
    let evidence = &identity["evidence"][0];
    println!("identity: {} {}", identity["verdict"], identity["because"]);
    assert_eq!(evidence["level"], "decode_logprobs", "{identity}");
    assert!(
        evidence["control_prompts"].as_u64().unwrap() > 0,
        "{identity}"
    );
    assert_eq!(identity["verdict"], "perturbed", "{identity}");

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
