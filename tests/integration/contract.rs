//! `coherence contract`: a fake that keeps every promise passes every probe; fakes that report
//! `length` short of the cap, or send more tokens than `max_tokens`, fail the probe that reads it;
//! the JSON shape; an unreachable endpoint, one that refuses every request, a stream that never
//! ends; evidence in plain values.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use crate::common::{coherence, exit_code, stderr, stdout, FakeServer, Incoming, Reply};

/// How a fake breaks the contract.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// `finish_reason: length` one token before the cap.
    LengthShort,
    /// Three tokens past `max_tokens`.
    OverMax,
    /// Greedy whatever the sampling asked (`transformers serve` with continuous batching).
    IgnoresTemperature,
}

/// The greedy reply of the fake model to any question: 40 words.
fn greedy_words() -> Vec<String> {
    (1..=40).map(|i| format!("w{i}")).collect()
}

static SAMPLED: AtomicU64 = AtomicU64::new(0);

/// The words the fake samples: greedy when the request collapses sampling (temperature 0,
/// top_k 1, a tiny top_p), fixed by the seed when one is given, else fresh each time.
fn sampled_words(body: &Value, fault: Fault) -> Vec<String> {
    let temperature = body["temperature"].as_f64().unwrap_or(1.0);
    let greedy = fault == Fault::IgnoresTemperature
        || temperature == 0.0
        || body["top_k"].as_u64() == Some(1)
        || body["top_p"].as_f64().is_some_and(|p| p < 0.01);
    if greedy {
        return greedy_words();
    }
    let salt = match body["seed"].as_u64() {
        Some(seed) => seed,
        None => 1_000_000 + SAMPLED.fetch_add(1, Ordering::Relaxed),
    };
    (1..=40).map(|i| format!("s{salt}x{i}")).collect()
}

/// The reply text, its token count and finish reason under `max_tokens` and `stop`.
fn generate(body: &Value, fault: Fault) -> (String, u64, &'static str) {
    let words = sampled_words(body, fault);
    let cap = body["max_tokens"].as_u64().unwrap_or(1000) as usize;
    let mut kept: Vec<String> = words.iter().take(cap).cloned().collect();
    let mut finish = if kept.len() == cap { "length" } else { "stop" };
    if fault == Fault::OverMax && finish == "length" {
        kept.extend(["x1", "x2", "x3"].map(String::from));
    }
    let mut text = kept.join(" ");
    if let Some(stops) = body["stop"].as_array() {
        for s in stops.iter().filter_map(Value::as_str) {
            if let Some(at) = text.find(s) {
                text.truncate(at);
                finish = "stop";
            }
        }
    }
    let mut tokens = text.split_whitespace().count() as u64;
    if fault == Fault::LengthShort && finish == "length" {
        tokens -= 1;
    }
    (text, tokens, finish)
}

fn has_invalid_tool_arguments(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .any(|c| {
            let args = c["function"]["arguments"].as_str().unwrap_or("");
            serde_json::from_str::<Value>(args).is_err()
        })
}

/// A fake server of the chat API that keeps every promise the probes read, but `fault`.
fn model(req: &Incoming, fault: Fault) -> Reply {
    let body = &req.body;
    if has_invalid_tool_arguments(body) {
        return Reply::json(
            400,
            json!({"error": {"message": "tool call arguments are not JSON"}}),
        );
    }
    let prompt = coherence_testkit::prompt_tokens(body);
    let usage = |c: u64| json!({"prompt_tokens": prompt, "completion_tokens": c, "total_tokens": prompt + c});
    if body["tool_choice"] == "required" {
        let call = json!({"id": "call_9", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}});
        return Reply::json(
            200,
            json!({"model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "tool_calls": [call]}}],
                "usage": usage(9)}),
        );
    }
    let (text, tokens, finish) = generate(body, fault);
    if body["stream"] == true {
        let mut sse = String::new();
        for (i, word) in text.split(' ').enumerate() {
            let piece = if i == 0 {
                word.to_string()
            } else {
                format!(" {word}")
            };
            let event = json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
            sse.push_str(&format!("data: {event}\n\n"));
        }
        let last = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
        sse.push_str(&format!("data: {last}\n\n"));
        if body["stream_options"]["include_usage"] == true {
            sse.push_str(&format!(
                "data: {}\n\n",
                json!({"choices": [], "usage": usage(tokens)})
            ));
        }
        sse.push_str("data: [DONE]\n\n");
        return Reply::text(200, &sse);
    }
    let logprobs = (body["logprobs"] == true).then(|| {
        let top = body["top_logprobs"].as_u64().unwrap_or(0) as usize;
        let content: Vec<Value> = text
            .split_whitespace()
            .map(|w| {
                let alts: Vec<Value> = (0..top)
                    .map(|k| json!({"token": format!("{w}{k}"), "logprob": -(k as f64) - 0.1}))
                    .collect();
                json!({"token": w, "logprob": -0.1, "top_logprobs": alts})
            })
            .collect();
        json!({"content": content})
    });
    let n = body["n"].as_u64().unwrap_or(1);
    let choices: Vec<Value> = (0..n)
        .map(|i| {
            json!({"index": i, "finish_reason": finish, "logprobs": logprobs,
                "message": {"role": "assistant", "content": text}})
        })
        .collect();
    Reply::json(
        200,
        json!({"model": "m", "choices": choices, "usage": usage(tokens)}),
    )
}

fn contract(urls: &[(&str, String)], extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["contract".into(), "--backoff-ms".into(), "10".into()];
    for (name, url) in urls {
        args.push("--endpoint".into());
        args.push(format!("{name}={url}"));
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    coherence(&args, dir.path(), &[])
}

/// The status of every probe of one endpoint in the `--json` output, by probe name.
fn statuses(out: &std::process::Output, endpoint: usize) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(&stdout(out)).expect("contract --json prints JSON");
    v["endpoints"][endpoint]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["probe"].as_str().unwrap().to_string(),
                p["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_server_that_keeps_every_promise_passes_every_probe() {
    let s = FakeServer::start("m", |r| model(r, Fault::None));
    let out = contract(&[("clean", s.url())], &["--json"]);
    assert_eq!(exit_code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let got = statuses(&out, 0);
    assert_eq!(got.len(), 17, "{got:?}");
    for (probe, status) in &got {
        assert_eq!(status, "pass", "{probe}: {}", stdout(&out));
    }
    // The stop probe sent the unstopped reply's own word as `stop`.
    let stops: Vec<Value> = s
        .completion_requests()
        .iter()
        .filter_map(|r| r.body.get("stop").cloned())
        .collect();
    assert_eq!(stops, vec![json!(["w16"])]);
}

#[test]
fn a_server_that_ignores_temperature_fails_that_probe_alone() {
    let s = FakeServer::start("m", |r| model(r, Fault::IgnoresTemperature));
    let out = contract(&[("greedy", s.url())], &["--json"]);
    assert_eq!(exit_code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let failed: Vec<String> = statuses(&out, 0)
        .into_iter()
        .filter(|(_, status)| status != "pass")
        .map(|(probe, status)| format!("{probe} {status}"))
        .collect();
    assert_eq!(failed, vec!["temperature_honoured fail"]);
    let text = stdout(&contract(&[("greedy", s.url())], &[]));
    assert!(
        text.contains("4 replies at temperature 1 were all the temperature-0 text"),
        "{text}"
    );
}

#[test]
fn length_short_of_the_cap_and_tokens_past_it_fail_their_probes() {
    let short = FakeServer::start("m", |r| model(r, Fault::LengthShort));
    let over = FakeServer::start("m", |r| model(r, Fault::OverMax));
    let out = contract(&[("short", short.url()), ("over", over.url())], &[]);
    assert_eq!(exit_code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "FAIL finish_reason_length: finish_reason length at 15 tokens, max_tokens 16"
        ),
        "{text}"
    );
    assert!(
        text.contains("FAIL max_tokens_honoured: 19 completion tokens at max_tokens 16"),
        "{text}"
    );
    let json = contract(&[("short", short.url()), ("over", over.url())], &["--json"]);
    let failed = |i| -> Vec<String> {
        statuses(&json, i)
            .into_iter()
            .filter(|(_, s)| s == "fail")
            .map(|(p, _)| p)
            .collect()
    };
    // The short count is in usage, so the logprob entries outnumber the completion tokens too.
    assert_eq!(failed(0), ["finish_reason_length", "logprobs_shape"]);
    assert!(
        failed(1).contains(&"max_tokens_honoured".to_string()),
        "{:?}",
        failed(1)
    );
}

#[test]
fn a_refused_parameter_is_unsupported_and_a_server_error_fails() {
    let s = FakeServer::start("m", |r| {
        if r.body.get("n").is_some() {
            return Reply::json(400, json!({"error": {"message": "n is not supported"}}));
        }
        if r.body.get("tools").is_some() {
            return Reply::status(500, "boom");
        }
        model(r, Fault::None)
    });
    let out = contract(&[("s", s.url())], &["--json", "--retries", "0"]);
    assert_eq!(exit_code(&out), 1, "{}", stdout(&out));
    let got: std::collections::BTreeMap<String, String> = statuses(&out, 0).into_iter().collect();
    assert_eq!(got["n_choices"], "unsupported");
    assert_eq!(got["tool_choice_required"], "fail");
    assert_eq!(got["invalid_tool_arguments"], "fail");
    assert_eq!(got["usage_arithmetic"], "pass");
}

#[test]
fn an_unreachable_endpoint_is_incomplete() {
    let out = contract(
        &[("gone", "http://127.0.0.1:9/v1".to_string())],
        &["--retries", "0", "--timeout", "5"],
    );
    assert_eq!(exit_code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("not probed: GET /models failed"),
        "{}",
        stdout(&out)
    );
}

/// `contract --json` of one endpoint answering every chat request with `status`.
fn refusing(status: u16) -> (std::process::Output, String) {
    let s = FakeServer::start("m", move |_| Reply::status(status, "go away"));
    let out = contract(&[("s", s.url())], &["--retries", "0"]);
    let text = stdout(&out);
    (out, text)
}

#[test]
fn an_endpoint_that_refuses_authentication_on_every_probe_could_not_be_probed() {
    let (out, text) = refusing(401);
    assert_eq!(exit_code(&out), 3, "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "not probed: the endpoint refused authentication (HTTP 401) on every one of the"
        ) && text.contains("check the API key"),
        "{text}"
    );
    assert!(!text.contains("probes passed"), "{text}");
}

#[test]
fn an_endpoint_that_answers_no_probe_could_not_be_probed() {
    let (out, text) = refusing(418);
    assert_eq!(exit_code(&out), 3, "{text}{}", stderr(&out));
    assert!(
        text.contains("not probed: the endpoint answered none of the")
            && text.contains("(HTTP 418 on all"),
        "{text}"
    );
}

#[test]
fn a_stream_that_never_ends_fails_its_probes_within_one_timeout() {
    let s = FakeServer::start("m", |r| {
        if r.body["stream"] == true {
            let event = format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": "w"}}]})
            );
            return Reply::endless_stream(&event, std::time::Duration::from_millis(50));
        }
        model(r, Fault::None)
    });
    let started = std::time::Instant::now();
    let out = contract(&[("s", s.url())], &["--json", "--timeout", "2"]);
    let took = started.elapsed();
    assert_eq!(exit_code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    // One attempt of 2 s, not the 4 of --retries 3.
    assert!(took.as_secs_f64() < 6.0, "{took:?}");
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let probes = v["endpoints"][0]["probes"].as_array().unwrap();
    for name in [
        "stream_same_text",
        "stream_prompt_tokens",
        "stream_usage_chunk",
    ] {
        let p = probes.iter().find(|p| p["probe"] == name).unwrap();
        assert_eq!(p["status"], "fail", "{p}");
        assert!(
            p["evidence"]
                .as_str()
                .unwrap()
                .contains("HTTP 200, but the reply did not end within --timeout"),
            "{p}"
        );
    }
    let streams = s
        .completion_requests()
        .iter()
        .filter(|r| r.body["stream"] == true)
        .count();
    assert_eq!(streams, 1, "a stream that did not end is not sent again");
}

#[test]
fn evidence_prints_plain_values_not_rust_debug_text() {
    let s = FakeServer::start("m", |r| {
        if r.body["tool_choice"] == "required" {
            let call = json!({"id": "call_9", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}});
            return Reply::json(
                200,
                json!({"model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": null, "tool_calls": [call]}}],
                    "usage": {"prompt_tokens": 1}}),
            );
        }
        model(r, Fault::None)
    });
    let out = contract(&[("s", s.url())], &["--json"]);
    let text = stdout(&out);
    assert!(
        text.contains(r#""evidence": "finish_reason stop with get_weather({\"city\":\"Paris\"})""#),
        "{text}"
    );
    assert!(
        text.contains(r#""evidence": "stop [\"w16\"] ended the reply at `w1"#),
        "{text}"
    );
    assert!(!text.contains("Some(") && !text.contains("None"), "{text}");
}
