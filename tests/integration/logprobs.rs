//! `coherence logprobs` against fake servers that imitate a tiny language model: aligned and
//! one-position-off prompt logprobs, servers with one mode or none, tokens that do not spell the
//! text, malformed logprobs, disjoint top-k sets, and the JSON contract.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::*;

/// How a fake server answers prompt-logprob requests.
#[derive(Clone, Copy, PartialEq)]
enum Style {
    /// OpenAI/vLLM echo: position i carries token i's distribution.
    Aligned,
    /// llama-cpp-python echo: position i carries token i + 1's distribution.
    Offset,
    /// Echo refused; vLLM `prompt_logprobs` only.
    PromptLogprobsOnly,
    /// Neither: echo is ignored (only the generated token comes back), prompt_logprobs refused.
    NoPromptLogprobs,
}

/// What the fake model predicts at each position.
#[derive(Clone, Copy)]
struct Model {
    /// Logprob of the actual token and of the one alternative.
    token_lp: f64,
    alt_lp: f64,
    /// List unrelated tokens instead (a top-k set disjoint from the others').
    disjoint: bool,
    /// Render tokens with a non-ASCII character as "?" (they no longer spell the text).
    mangle_non_ascii: bool,
    /// Send token_logprobs as strings for passages (not for the probe or the self-check).
    malformed: bool,
}

const BASE: Model = Model {
    token_lp: -0.2,
    alt_lp: -2.0,
    disjoint: false,
    mangle_non_ascii: false,
    malformed: false,
};

const GENERATED: [&str; 2] = [" one", " two"];

fn words(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_whitespace() && current.chars().any(|x| !x.is_whitespace()) {
            tokens.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// The distribution predicting `token` at position `pos`.
fn dist(m: &Model, pos: usize, token: &str) -> Value {
    if m.disjoint {
        return json!({format!(" zz{pos}"): -0.1, format!(" yy{pos}"): -2.5});
    }
    json!({token: m.token_lp, format!(" alt{pos}"): m.alt_lp})
}

fn shown(m: &Model, token: &str) -> String {
    if m.mangle_non_ascii && !token.is_ascii() {
        "?".into()
    } else {
        token.to_string()
    }
}

fn completion(tokens: Vec<String>, lps: Vec<Value>, tops: Vec<Value>) -> Reply {
    Reply::json(
        200,
        json!({"object": "text_completion", "model": "m", "choices": [{"index": 0,
            "text": tokens.concat(), "finish_reason": "length",
            "logprobs": {"tokens": tokens, "token_logprobs": lps, "top_logprobs": tops}}]}),
    )
}

fn server(style: Style, m: Model) -> FakeServer {
    FakeServer::start("m", move |req| {
        let body = &req.body;
        let prompt = body["prompt"].as_str().unwrap_or_default().to_string();
        let echo = body["echo"] == json!(true);
        let is_passage = !prompt.starts_with("The capital of France is Paris,")
            && !prompt.starts_with("The capital of France is")
            && !prompt.starts_with("Once upon")
            && !prompt.starts_with("The three");
        if body.get("prompt_logprobs").is_some() {
            if style != Style::PromptLogprobsOnly {
                return Reply::status(400, "prompt_logprobs is not supported");
            }
            let toks = words(&prompt);
            let entries: Vec<Value> = toks
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    if i == 0 {
                        return Value::Null;
                    }
                    json!({
                        i.to_string(): {"logprob": m.token_lp, "rank": 1, "decoded_token": t},
                        (10_000 + i).to_string(): {"logprob": m.alt_lp, "rank": 2, "decoded_token": format!(" alt{i}")},
                    })
                })
                .collect();
            let ids: Vec<usize> = (0..toks.len()).collect();
            return Reply::json(
                200,
                json!({"choices": [{"index": 0, "text": " end", "prompt_token_ids": ids, "prompt_logprobs": entries}]}),
            );
        }
        if echo && style == Style::PromptLogprobsOnly {
            return Reply::status(400, "echo is not supported with logprobs");
        }
        // The self-check prompts see the plain model: a disjoint top-k is a passage-level effect.
        let m = if is_passage {
            m
        } else {
            Model {
                disjoint: false,
                ..m
            }
        };
        if echo && style != Style::NoPromptLogprobs {
            let mut toks = words(&prompt);
            toks.push(" end".into());
            let n = toks.len();
            let mut lps = Vec::new();
            let mut tops = Vec::new();
            for i in 0..n {
                match style {
                    Style::Offset => {
                        // top[i] is the distribution of token i + 1, with token i added at its
                        // (low) value there; token_logprobs[i] is that value.
                        let mut d = if i + 1 < n {
                            dist(&m, i + 1, &toks[i + 1])
                        } else {
                            json!({"\n": -0.1})
                        };
                        d[shown(&m, &toks[i])] = json!(-7.0);
                        lps.push(json!(-7.0));
                        tops.push(d);
                    }
                    _ if i == 0 => {
                        lps.push(Value::Null);
                        tops.push(Value::Null);
                    }
                    _ => {
                        let d = dist(&m, i, &toks[i]);
                        lps.push(d.get(&toks[i]).cloned().unwrap_or(json!(-9.0)));
                        tops.push(d);
                    }
                }
            }
            if m.malformed && is_passage {
                lps = lps.iter().map(|_| json!("bad")).collect();
            }
            let shown_toks = toks.iter().map(|t| shown(&m, t)).collect();
            return completion(shown_toks, lps, tops);
        }
        // Decode: a greedy continuation " one two", each token top-1 of its distribution.
        let start = words(&prompt).len();
        let toks: Vec<String> = GENERATED.iter().map(|s| s.to_string()).collect();
        let tops: Vec<Value> = toks
            .iter()
            .enumerate()
            .map(|(j, t)| dist(&m, start + j, t))
            .collect();
        let lps = toks.iter().map(|_| json!(m.token_lp)).collect();
        completion(toks, lps, tops)
    })
}

fn corpus(dir: &Path) -> PathBuf {
    let path = dir.join("corpus.jsonl");
    std::fs::write(
        &path,
        [
            json!({"id": "cat", "category": "prose", "text": "The cat sat on the mat."}),
            json!({"id": "cafe", "category": "multilingual", "text": "Le café est très bon."}),
            json!({"id": "count", "category": "numbers", "text": "One two three four five six."}),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n"),
    )
    .unwrap();
    path
}

fn run(
    dir: &Path,
    servers: &[(&str, &FakeServer)],
    extra: &[&str],
) -> (std::process::Output, Value) {
    let mut args: Vec<String> = vec![
        "logprobs".into(),
        "--corpus".into(),
        corpus(dir).display().to_string(),
        "--json".into(),
        "--backoff-ms".into(),
        "10".into(),
        "--retries".into(),
        "0".into(),
    ];
    for (name, s) in servers {
        args.push("--endpoint".into());
        args.push(format!("{name}={}", s.url()));
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = coherence(&args, dir, &[]);
    let json = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            stdout(&out),
            stderr(&out)
        )
    });
    (out, json)
}

fn endpoint<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap()
}

fn consistency<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["self_consistency"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["endpoint"] == name)
        .unwrap()
}

#[test]
fn the_json_contract_holds_for_two_identical_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (server(Style::Aligned, BASE), server(Style::Aligned, BASE));
    let (out, v) = run(dir.path(), &[("a", &a), ("b", &b)], &["--out", "lp"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let pair = &v["pairs"][0];
    for key in [
        "reference",
        "other",
        "tokens",
        "mean_kld",
        "p99_kld",
        "top1_agreement",
        "mean_delta_p",
        "rms_delta_p",
    ] {
        assert!(pair.get(key).is_some(), "pairs[0].{key} missing: {pair}");
    }
    assert_eq!(pair["reference"], "a");
    assert_eq!(pair["other"], "b");
    // 6 + 5 + 6 words, the first of each unscored.
    assert_eq!(pair["tokens"], 14);
    assert_eq!(pair["mean_kld"], 0.0);
    assert_eq!(pair["p99_kld"], 0.0);
    assert_eq!(pair["top1_agreement"], 1.0);
    assert_eq!(pair["mean_delta_p"], 0.0);
    assert_eq!(pair["rms_delta_p"], 0.0);
    assert_eq!(pair["categories"].as_array().unwrap().len(), 3);
    assert_eq!(pair["passages"].as_array().unwrap().len(), 3);
    for name in ["a", "b"] {
        let sc = consistency(&v, name);
        for key in ["endpoint", "tokens", "max_abs_diff", "offset"] {
            assert!(
                sc.get(key).is_some(),
                "self_consistency.{key} missing: {sc}"
            );
        }
        assert_eq!(sc["offset"], 0);
        assert_eq!(sc["max_abs_diff"], 0.0);
        assert_eq!(sc["tokens"], 6, "2 tokens from each of 3 prompts");
        assert_eq!(endpoint(&v, name)["mode"], "echo");
    }
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("lp/logprobs.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(written, v);
    let md = std::fs::read_to_string(dir.path().join("lp/logprobs.md")).unwrap();
    assert!(md.contains("## a vs b"), "{md}");
    assert!(md.contains("## Priors"), "{md}");
    assert!(md.contains("100.00%"), "{md}");
}

#[test]
fn a_one_position_off_server_is_detected_and_compensated() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (server(Style::Aligned, BASE), server(Style::Offset, BASE));
    let (out, v) = run(dir.path(), &[("vllm", &a), ("llamacpp", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let sc = consistency(&v, "llamacpp");
    assert_eq!(sc["offset"], 1);
    assert_eq!(sc["alignment"], "offset");
    assert_eq!(sc["max_abs_diff"], 0.0);
    let ep = endpoint(&v, "llamacpp");
    assert_eq!(ep["offset"], 1);
    assert!(ep["notes"].to_string().contains("compensated"), "{ep}");
    // After compensation the two read the same distributions.
    let pair = &v["pairs"][0];
    assert_eq!(pair["tokens"], 14);
    assert_eq!(pair["mean_kld"], 0.0);
    assert_eq!(pair["top1_agreement"], 1.0);
    assert_eq!(pair["rms_delta_p"], 0.0);
}

#[test]
fn a_different_distribution_reads_as_kl_and_delta_p() {
    let dir = tempfile::tempdir().unwrap();
    let a = server(Style::Aligned, BASE);
    let b = server(
        Style::Aligned,
        Model {
            token_lp: -0.4,
            alt_lp: -1.5,
            ..BASE
        },
    );
    let (out, v) = run(dir.path(), &[("f16", &a), ("q4", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let pair = &v["pairs"][0];
    let (p, q) = ((-0.2f64).exp(), (-0.4f64).exp());
    let (pa, qa) = ((-2.0f64).exp(), (-1.5f64).exp());
    let kl = p * (p / q).ln()
        + pa * (pa / qa).ln()
        + (1.0 - p - pa) * ((1.0 - p - pa) / (1.0 - q - qa)).ln();
    assert!(
        (pair["mean_kld"].as_f64().unwrap() - kl).abs() < 1e-9,
        "{pair}"
    );
    assert_eq!(pair["top1_agreement"], 1.0);
    assert!((pair["mean_delta_p"].as_f64().unwrap() - (q - p)).abs() < 1e-9);
    assert!((pair["rms_delta_p"].as_f64().unwrap() - (p - q)).abs() < 1e-9);
}

#[test]
fn disjoint_top_k_sets_read_as_large_divergence_and_no_agreement() {
    let dir = tempfile::tempdir().unwrap();
    let a = server(Style::Aligned, BASE);
    let b = server(
        Style::Aligned,
        Model {
            disjoint: true,
            ..BASE
        },
    );
    let (out, v) = run(dir.path(), &[("a", &a), ("b", &b)], &["--limit", "1"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let pair = &v["pairs"][0];
    assert_eq!(pair["tokens"], 5);
    assert_eq!(pair["top1_agreement"], 0.0);
    assert!(pair["mean_kld"].as_f64().unwrap() > 1.0, "{pair}");
    // b's token_logprobs still score the text's tokens (at -9) though its top-k omits them.
    assert_eq!(pair["delta_p_tokens"], 5);
    let dp = (-9.0f64).exp() - (-0.2f64).exp();
    assert!(
        (pair["mean_delta_p"].as_f64().unwrap() - dp).abs() < 1e-9,
        "{pair}"
    );
}

#[test]
fn a_server_with_only_prompt_logprobs_is_used_in_that_mode() {
    let dir = tempfile::tempdir().unwrap();
    let a = server(Style::Aligned, BASE);
    let b = server(Style::PromptLogprobsOnly, BASE);
    let (out, v) = run(dir.path(), &[("a", &a), ("vllm", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let ep = endpoint(&v, "vllm");
    assert_eq!(ep["mode"], "prompt_logprobs");
    assert!(
        ep["notes"].to_string().contains("echo is not supported"),
        "{ep}"
    );
    assert_eq!(consistency(&v, "vllm")["offset"], 0);
    let pair = &v["pairs"][0];
    assert_eq!(pair["tokens"], 14);
    assert_eq!(pair["mean_kld"], 0.0);
}

#[test]
fn a_server_without_prompt_logprobs_is_named_and_the_run_is_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let a = server(Style::Aligned, BASE);
    let b = server(Style::NoPromptLogprobs, BASE);
    let (out, v) = run(dir.path(), &[("a", &a), ("plain", &b)], &[]);
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let ep = endpoint(&v, "plain");
    assert_eq!(ep["mode"], Value::Null);
    assert_eq!(ep["usable"], false);
    assert!(ep["notes"].to_string().contains("supports neither"), "{ep}");
    assert!(stderr(&out).contains("plain"), "{}", stderr(&out));
    assert_eq!(v["pairs"][0]["tokens"], 0);
    assert_eq!(v["pairs"][0]["mean_kld"], Value::Null);
    // The reference alone still checks its own consistency.
    assert_eq!(consistency(&v, "a")["offset"], 0);
}

#[test]
fn tokens_that_do_not_spell_the_text_are_reported_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    let a = server(Style::Aligned, BASE);
    let b = server(
        Style::Aligned,
        Model {
            mangle_non_ascii: true,
            ..BASE
        },
    );
    let (out, v) = run(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["passage"], "cafe");
    assert_eq!(problems[0]["kind"], "text_mismatch");
    assert!(
        problems[0]["reason"].as_str().unwrap().contains("\"?\""),
        "{problems:?}"
    );
    let pair = &v["pairs"][0];
    assert_eq!(pair["passages_compared"], 2);
    assert_eq!(pair["tokens"], 10);
}

#[test]
fn malformed_logprobs_are_a_reported_failure() {
    let dir = tempfile::tempdir().unwrap();
    let a = server(Style::Aligned, BASE);
    let b = server(
        Style::Aligned,
        Model {
            malformed: true,
            ..BASE
        },
    );
    let (out, v) = run(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 3);
    assert!(problems
        .iter()
        .all(|p| p["kind"] == "request" && p["endpoint"] == "b"));
    assert!(
        problems[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not a number"),
        "{problems:?}"
    );
    assert_eq!(v["pairs"][0]["tokens"], 0);
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(&["logprobs"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("--endpoint"), "{}", stderr(&out));
    let out = coherence(
        &[
            "logprobs",
            "--endpoint",
            "a=http://127.0.0.1:9/v1",
            "--top-k",
            "0",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    let out = coherence(
        &[
            "logprobs",
            "--endpoint",
            "a=http://127.0.0.1:9/v1",
            "--corpus",
            "missing.toml",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("missing.toml"), "{}", stderr(&out));
}

#[test]
fn the_catalogue_loader_ignores_the_logprobs_corpus_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(root.join("prompts/logprobs/corpus.toml").exists());
    let out = coherence(&["prompts", "check"], root, &[]);
    assert_eq!(exit_code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}
