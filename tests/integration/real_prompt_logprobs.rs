//! Prompt logprobs against real servers: `coherence logprobs` and `compare --logprobs` (teacher
//! forcing) on llama-cpp-python deployments of the demo's model, a twin of the reference (the
//! negative control) and a q4_0 KV cache. No prebuilt server gives prompt logprobs (llama.cpp's
//! server in the xllamacpp wheel ignores completions `echo`), so these need llama-cpp-python built
//! from source and run from `scripts/real-prompt-logprobs.sh`, not in CI; the fakes of
//! tests/integration/logprobs.rs and teacher_forcing.rs cover the same code in every `cargo test`.
//!
//! Run: `scripts/real-prompt-logprobs.sh`

use serde_json::Value;

use crate::common::*;
use crate::real_endpoints::{endpoints, subset};

#[test]
#[ignore = "needs real endpoints with prompt logprobs: scripts/real-prompt-logprobs.sh"]
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
#[ignore = "needs real endpoints with prompt logprobs and the model's chat template: scripts/real-prompt-logprobs.sh"]
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
