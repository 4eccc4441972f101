//! `compare --logprobs` teacher forcing against fake servers that imitate a tiny chat model: a
//! twin reads zero, a changed model reads its KL, llama-cpp-python's offset (one position off
//! unless the text starts with the BOS token) is compensated per condition, a chat template that
//! does not reproduce the chat prompt is refused, no template leaves chat prompts out, and a
//! resumed run sends no scoring request twice.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::common::*;

const BOS: &str = "<|im_start|>";
const TEMPLATE: &str = "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}{{ '<|im_start|>assistant\\n' }}";

/// How the fake lists prompt logprobs.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Style {
    /// OpenAI/vLLM: listed position i carries token i's distribution.
    Aligned,
    /// llama-cpp-python: the logits of position j (which predict token j + 1) listed beside
    /// token j, and a leading BOS token left out of the listing, which aligns it again.
    LlamaCpp,
}

#[derive(Clone, Copy)]
pub(crate) struct Fake {
    pub(crate) style: Style,
    /// Logprob of the text's token, and of the one alternative, at every position.
    pub(crate) token_lp: f64,
    pub(crate) alt_lp: f64,
    /// Added to the chat answer's `usage.prompt_tokens` (a server whose template differs).
    pub(crate) chat_token_skew: u64,
    /// From this position of the scored text on, the text's token has this logprob instead.
    pub(crate) drift: Option<(usize, f64)>,
}

pub(crate) const BASE: Fake = Fake {
    style: Style::Aligned,
    token_lp: -0.2,
    alt_lp: -2.0,
    chat_token_skew: 0,
    drift: None,
};

/// The fake tokenizer: special tokens and line breaks alone, words with their leading space.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut word = String::new();
    while let Some(c) = rest.chars().next() {
        if let Some(special) = ["<|im_start|>", "<|im_end|>"]
            .iter()
            .find(|s| rest.starts_with(**s))
        {
            out.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            out.push(special.to_string());
            rest = &rest[special.len()..];
            continue;
        }
        if c == '\n' || (c == ' ' && !word.trim().is_empty()) {
            out.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
        }
        if c == '\n' {
            out.push("\n".into());
        } else {
            word.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out.extend((!word.is_empty()).then_some(word));
    out
}

fn chatml(messages: &Value) -> String {
    let mut s = String::new();
    for m in messages.as_array().into_iter().flatten() {
        s.push_str(&format!(
            "<|im_start|>{}\n{}<|im_end|>\n",
            m["role"].as_str().unwrap_or_default(),
            m["content"].as_str().unwrap_or_default()
        ));
    }
    s + "<|im_start|>assistant\n"
}

/// The distribution predicting `token` at absolute position `pos`.
fn dist(f: &Fake, pos: usize, token: &str) -> Value {
    let lp = match f.drift {
        Some((from, lp)) if pos >= from => lp,
        _ => f.token_lp,
    };
    json!({token: lp, format!(" alt{pos}"): f.alt_lp})
}

fn completion_reply(
    text: &str,
    toks: Vec<String>,
    lps: Vec<Value>,
    tops: Vec<Value>,
    prompt_tokens: usize,
) -> Reply {
    Reply::json(
        200,
        json!({"object": "text_completion", "model": "m", "choices": [{"index": 0, "text": text,
            "finish_reason": "stop", "logprobs": {"tokens": toks, "token_logprobs": lps, "top_logprobs": tops}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 2, "total_tokens": prompt_tokens + 2}}),
    )
}

fn echo(f: &Fake, prompt: &str) -> Reply {
    let all = tokens(prompt);
    let n = all.len();
    let (mut toks, mut lps, mut tops) = (Vec::new(), Vec::new(), Vec::new());
    match f.style {
        Style::Aligned => {
            for (i, t) in all.iter().enumerate() {
                toks.push(t.clone());
                let d = (i > 0).then(|| dist(f, i, t));
                lps.push(d.as_ref().map_or(Value::Null, |d| d[t].clone()));
                tops.push(d.unwrap_or(Value::Null));
            }
        }
        Style::LlamaCpp => {
            let skip = usize::from(all.first().is_some_and(|t| t == BOS));
            for j in skip..n {
                let listed = j;
                // The logits beside listed index (j - skip) predict absolute token (j - skip) + 1.
                let predicts = (j - skip) + 1;
                let mut d = if predicts < n {
                    dist(f, predicts, &all[predicts])
                } else {
                    json!({"\n": -0.1})
                };
                // The listed token is scored under the same (possibly misaligned) logits.
                if d.get(&all[listed]).is_none() {
                    d[&all[listed]] = json!(-7.0);
                }
                toks.push(all[listed].clone());
                lps.push(d[&all[listed]].clone());
                tops.push(d);
            }
        }
    }
    completion_reply(&format!("{prompt} end"), toks, lps, tops, n)
}

/// A greedy continuation " one two" with aligned decode logprobs.
fn decode(f: &Fake, prompt: &str) -> Reply {
    let start = tokens(prompt).len();
    let toks: Vec<String> = [" one", " two"].map(String::from).to_vec();
    let tops = toks
        .iter()
        .enumerate()
        .map(|(j, t)| dist(f, start + j, t))
        .collect();
    let lps = toks.iter().map(|_| json!(f.token_lp)).collect();
    completion_reply(" one two", toks, lps, tops, start)
}

fn chat(f: &Fake, body: &Value) -> Reply {
    let messages = &body["messages"];
    let question = messages
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let answer = correct_answer(question);
    let prompt_tokens = tokens(&chatml(messages)).len() as u64 + f.chat_token_skew;
    let answer_tokens = tokens(answer);
    let logprobs: Vec<Value> = answer_tokens
        .iter()
        .map(|t| json!({"token": t, "logprob": f.token_lp, "top_logprobs": [{"token": t, "logprob": f.token_lp}]}))
        .collect();
    Reply::json(
        200,
        json!({"object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": answer}, "logprobs": {"content": logprobs}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": answer_tokens.len(),
                      "total_tokens": prompt_tokens + answer_tokens.len() as u64}}),
    )
}

/// A fake server, and how many scoring (echo) requests it received.
pub(crate) fn server(f: Fake) -> (FakeServer, Arc<Mutex<usize>>) {
    let scored = Arc::new(Mutex::new(0));
    let count = scored.clone();
    let s = FakeServer::start("m", move |req| reply(&f, &req.body, &count));
    (s, scored)
}

/// The fake's answer to one request body; scoring (echo) requests are counted in `scored`.
pub(crate) fn reply(f: &Fake, body: &Value, scored: &Mutex<usize>) -> Reply {
    if body.get("messages").is_some() {
        return chat(f, body);
    }
    let prompt = body["prompt"].as_str().unwrap_or_default();
    if body["echo"] == json!(true) {
        *scored.lock().unwrap() += 1;
        return echo(f, prompt);
    }
    if body.get("prompt_logprobs").is_some() {
        return Reply::status(400, "prompt_logprobs is not supported");
    }
    decode(f, prompt)
}

fn template_file(dir: &Path) -> PathBuf {
    let p = dir.join("chat_template.jinja");
    std::fs::write(&p, TEMPLATE).unwrap();
    p
}

fn run(
    dir: &Path,
    servers: &[(&str, &FakeServer)],
    extra: &[&str],
) -> (std::process::Output, Value) {
    let template = template_file(dir).display().to_string();
    let mut flags = vec!["--logprobs"];
    if !extra.contains(&"--no-template") {
        flags.extend(["--chat-template", template.as_str()]);
    }
    flags.extend(extra.iter().filter(|e| **e != "--no-template"));
    let (out, run) = compare(dir, servers, &flags);
    let v = if run.join("results.json").exists() {
        results(&run)
    } else {
        Value::Null
    };
    (out, v)
}

fn pair<'a>(v: &'a Value, other: &str) -> &'a Value {
    v["token_agreement"]
        .as_array()
        .unwrap_or_else(|| panic!("no token_agreement: {v}"))
        .iter()
        .find(|p| p["other"] == other)
        .unwrap()
}

fn problems<'a>(v: &'a Value, kind: &str) -> Vec<&'a Value> {
    v["teacher_forcing"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == kind)
        .collect()
}

/// KL(P ‖ Q) of the two-token-plus-tail distributions the fakes list.
fn kl(p: Fake, q: Fake) -> f64 {
    let (pa, pb) = (p.token_lp.exp(), p.alt_lp.exp());
    let (qa, qb) = (q.token_lp.exp(), q.alt_lp.exp());
    let (pt, qt) = (1.0 - pa - pb, 1.0 - qa - qb);
    pa * (pa / qa).ln() + pb * (pb / qb).ln() + pt * (pt / qt).ln()
}

#[test]
fn a_twin_reads_zero_and_a_changed_model_reads_its_kl() {
    let dir = tempfile::tempdir().unwrap();
    let changed = Fake {
        token_lp: -0.5,
        ..BASE
    };
    let (a, a_scored) = server(BASE);
    let (twin, _) = server(BASE);
    let (b, _) = server(changed);
    let (out, v) = run(dir.path(), &[("a", &a), ("twin", &twin), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("token agreement (teacher-forced), twin against a: mean KLD 0.0000, same top token 100.0%"),
        "{}",
        stdout(&out)
    );
    let forcing = &v["teacher_forcing"];
    assert_eq!(forcing["prompts_scored"], 5, "{forcing}");
    assert!(problems(&v, "template").is_empty(), "{forcing}");
    let t = pair(&v, "twin");
    assert_eq!(t["passages_compared"], 5);
    assert_eq!(t["mean_kld"], 0.0);
    assert_eq!(t["top1_agreement"], 1.0);
    assert_eq!(t["rms_delta_p"], 0.0);
    let c = pair(&v, "b");
    let expected = kl(BASE, changed);
    for key in ["mean_kld", "p99_kld", "max_kld"] {
        let got = c[key].as_f64().unwrap();
        assert!((got - expected).abs() < 1e-9, "{key} {got} vs {expected}");
    }
    assert_eq!(c["top1_agreement"], 1.0);
    let dp = (-0.5f64).exp() - (-0.2f64).exp();
    assert!(
        (c["mean_delta_p"].as_f64().unwrap() - dp).abs() < 1e-9,
        "{c}"
    );
    assert_eq!(c["tokens"], t["tokens"]);
    assert_eq!(c["categories"].as_array().unwrap().len(), 4);
    // One scoring request per reference completion per endpoint.
    assert_eq!(
        *a_scored.lock().unwrap(),
        5 + 2 * (1 + 3),
        "5 completions, and per condition (chat, plain) one mode probe and 3 self-checks"
    );
    // The template is kept for --resume, and the report says what was measured.
    assert!(dir.path().join("run/chat_template.json").exists());
    let md = std::fs::read_to_string(dir.path().join("run/report.md")).unwrap();
    assert!(md.contains("## Token agreement (teacher-forced)"), "{md}");
    assert!(
        md.contains("**Token agreement** (teacher-forced), `b` against `a`"),
        "{md}"
    );
    let html = std::fs::read_to_string(dir.path().join("run/report.html")).unwrap();
    assert!(html.contains("id=\"token-agreement\""));
    let schema: Value =
        serde_json::from_str(include_str!("../../src/report/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn llama_cpp_offsets_are_established_per_condition_and_compensated() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = server(BASE);
    let (b, _) = server(Fake {
        style: Style::LlamaCpp,
        ..BASE
    });
    let (out, v) = run(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let endpoints = v["teacher_forcing"]["endpoints"].as_array().unwrap();
    let offset = |name: &str, condition: &str| {
        endpoints
            .iter()
            .find(|e| e["name"] == name && e["condition"] == condition)
            .unwrap_or_else(|| panic!("{name} {condition}: {endpoints:?}"))["offset"]
            .clone()
    };
    assert_eq!(offset("a", "chat"), 0);
    assert_eq!(offset("a", "plain"), 0);
    assert_eq!(
        offset("b", "chat"),
        0,
        "the BOS token aligns llama-cpp's listing: {}",
        v["teacher_forcing"]
    );
    assert_eq!(offset("b", "plain"), 1);
    let p = pair(&v, "b");
    assert_eq!(p["passages_compared"], 5, "{}", v["teacher_forcing"]);
    assert_eq!(
        p["mean_kld"], 0.0,
        "the same model, read at the right offsets: {p}"
    );
    assert_eq!(p["top1_agreement"], 1.0);
}

#[test]
fn without_a_template_only_raw_completion_prompts_are_teacher_forced() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = server(BASE);
    let (b, _) = server(BASE);
    let (out, v) = run(dir.path(), &[("a", &a), ("b", &b)], &["--no-template"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(v["teacher_forcing"]["prompts_scored"], 1);
    assert_eq!(pair(&v, "b")["passages"][0]["id"], "capital_completion");
    let missing = problems(&v, "no_template");
    assert_eq!(missing.len(), 4, "{}", v["teacher_forcing"]);
    assert!(missing[0]["reason"]
        .as_str()
        .unwrap()
        .contains("--chat-template"));
}

#[test]
fn a_template_that_does_not_reproduce_the_chat_prompt_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = server(BASE);
    let (b, _) = server(Fake {
        chat_token_skew: 3,
        ..BASE
    });
    let (out, v) = run(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let refused = problems(&v, "template");
    assert_eq!(
        refused.len(),
        4,
        "the four chat prompts on b: {}",
        v["teacher_forcing"]
    );
    assert!(refused.iter().all(|p| p["endpoint"] == "b"));
    assert!(refused[0]["reason"]
        .as_str()
        .unwrap()
        .contains("chat request counted"));
    assert_eq!(pair(&v, "b")["passages_compared"], 1);
}

#[test]
fn a_resumed_run_sends_no_scoring_request_twice_and_needs_no_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a_scored) = server(BASE);
    let (b, b_scored) = server(BASE);
    let (out, first) = run(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let before = (*a_scored.lock().unwrap(), *b_scored.lock().unwrap());
    let out = resume(dir.path(), &dir.path().join("run"), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        (*a_scored.lock().unwrap(), *b_scored.lock().unwrap()),
        before
    );
    let again = results(&dir.path().join("run"));
    assert_eq!(again["token_agreement"], first["token_agreement"]);
}

#[test]
fn a_bad_template_or_one_without_logprobs_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = server(BASE);
    let bad = dir.path().join("bad.jinja");
    std::fs::write(&bad, "{% for %}").unwrap();
    let (out, _) = compare(
        dir.path(),
        &[("a", &a), ("b", &a)],
        &["--logprobs", "--chat-template", bad.to_str().unwrap()],
    );
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("bad.jinja"), "{}", stderr(&out));
    assert!(a.completion_requests().is_empty(), "nothing is sent");
    let good = template_file(dir.path());
    let (out, _) = compare(
        dir.path(),
        &[("a", &a), ("b", &a)],
        &["--chat-template", good.to_str().unwrap()],
    );
    assert_eq!(exit_code(&out), 2);
    assert!(
        stderr(&out).contains("needs --logprobs"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_dry_run_counts_the_teacher_forcing_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = server(BASE);
    let (out, _) = compare(
        dir.path(),
        &[("a", &a), ("b", &a)],
        &["--logprobs", "--dry-run", "--json"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let plan: Value = serde_json::from_str(&stdout(&out)).unwrap();
    // 5 prompts on 2 endpoints, and per endpoint and condition a probe and 3 decode + re-score.
    assert_eq!(plan["teacher_forcing_requests"], (5 + 2 * 7) * 2);
    assert!(a.requests().is_empty(), "a dry run sends nothing");
    let (out, _) = compare(dir.path(), &[("a", &a), ("b", &a)], &["--dry-run"]);
    assert!(
        !stdout(&out).contains("teacher-forcing"),
        "{}",
        stdout(&out)
    );
}
