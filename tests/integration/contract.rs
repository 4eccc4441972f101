//! `coherence contract`: a fake that keeps every promise passes every probe; fakes that report
//! `length` short of the cap, or send more tokens than `max_tokens`, fail the probe that reads it;
//! the JSON shape; an unreachable endpoint, one that refuses every request, a stream that never
//! ends; evidence in plain values.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use crate::common::{
    assert_no_terminal_controls, coherence, exit_code, stderr, stdout, FakeServer, Incoming, Reply,
};

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
    /// A streamed call ends with `finish_reason: stop` (python-genai#2868).
    StreamCallStops,
    /// A cut call comes back as raw `<tool_call>` text without streaming and as a partial call
    /// streamed (vllm#47903).
    CutCallLeaks,
    /// A cut call says `finish_reason: tool_calls`, streamed and not (llama-cpp-python 0.3.36
    /// with `chatml-function-calling`).
    CutCallSaysToolCalls,
    /// A reply that stops on its own delivers its first two words and counts every token
    /// (opencode#43379).
    CountsUnsent,
}

/// The fake's forced call, cut to `max_tokens` characters of its arguments when they do not fit
/// (the fake counts a character a token here): the arguments and the finish reason.
fn forced_call(body: &Value) -> (String, &'static str) {
    let arguments = "{\"city\": \"Paris\"}";
    let cap = body["max_tokens"].as_u64().unwrap_or(1000) as usize;
    if arguments.len() > cap {
        (arguments[..cap].to_string(), "length")
    } else {
        (arguments.to_string(), "tool_calls")
    }
}

/// The forced call as the fake answers it: one JSON reply, or a stream of the name then the
/// arguments in two pieces, its finish reason last.
fn tool_reply(body: &Value, fault: Fault, usage: &dyn Fn(u64) -> Value) -> Reply {
    let (arguments, finish) = forced_call(body);
    let finish = match (fault, finish) {
        (Fault::CutCallSaysToolCalls, "length") => "tool_calls",
        _ => finish,
    };
    let tokens = arguments.len() as u64;
    if body["stream"] != true {
        if fault == Fault::CutCallLeaks && finish == "length" {
            let raw =
                format!("<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {arguments}");
            return Reply::json(
                200,
                json!({"model": "m", "choices": [{"index": 0, "finish_reason": finish,
                    "message": {"role": "assistant", "content": raw}}], "usage": usage(tokens)}),
            );
        }
        let call = json!({"id": "call_9", "type": "function",
            "function": {"name": "get_weather", "arguments": arguments}});
        return Reply::json(
            200,
            json!({"model": "m", "choices": [{"index": 0, "finish_reason": finish,
                "message": {"role": "assistant", "content": null, "tool_calls": [call]}}],
                "usage": usage(tokens)}),
        );
    }
    let (head, tail) = arguments.split_at(arguments.len() / 2);
    let delta = |function: Value| json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": function}]}}]});
    let finish = match (fault, finish) {
        (Fault::StreamCallStops, "tool_calls") => "stop",
        _ => finish,
    };
    let events = [
        delta(json!({"name": "get_weather", "arguments": ""})),
        delta(json!({"arguments": head})),
        delta(json!({"arguments": tail})),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        json!({"choices": [], "usage": usage(tokens)}),
    ];
    let mut sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    sse.push_str("data: [DONE]\n\n");
    Reply::text(200, &sse)
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
    if fault == Fault::CountsUnsent && finish == "stop" {
        text = text.split(' ').take(2).collect::<Vec<_>>().join(" ");
    }
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
    if body["tool_choice"] == "required" || body["tool_choice"]["type"] == "function" {
        return tool_reply(body, fault, &usage);
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
    assert_eq!(got.len(), 20, "{got:?}");
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
    // Of the 24 at most: the temperature probe's first sample at temperature 1 differed.
    assert_eq!(s.completion_requests().len(), 21);
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

/// The two tool-call bugs users reported in 2026 where streaming meets tool calls: each fails its
/// probe alone, quoting both sides.
#[test]
fn a_stream_that_says_stop_after_a_call_and_a_cut_call_that_leaks_fail_their_probes() {
    let stops = FakeServer::start("m", |r| model(r, Fault::StreamCallStops));
    let leaks = FakeServer::start("m", |r| model(r, Fault::CutCallLeaks));
    let says = FakeServer::start("m", |r| model(r, Fault::CutCallSaysToolCalls));
    let urls = [
        ("stops", stops.url()),
        ("leaks", leaks.url()),
        ("says", says.url()),
    ];
    let json = contract(&urls, &["--json"]);
    assert_eq!(exit_code(&json), 1, "{}{}", stdout(&json), stderr(&json));
    let failed = |i| -> Vec<String> {
        statuses(&json, i)
            .into_iter()
            .filter(|(_, s)| s != "pass")
            .map(|(p, s)| format!("{p} {s}"))
            .collect()
    };
    // The cut call stops at `length` streamed too, so the stream probe reads only the other.
    assert_eq!(failed(0), ["stream_tool_call fail"]);
    assert_eq!(failed(1), ["tool_call_cut_off fail"]);
    assert_eq!(failed(2), ["tool_call_cut_off fail"]);
    let text = stdout(&contract(&urls, &[]));
    for expected in [
        "FAIL stream_tool_call: streamed get_weather({\"city\": \"Paris\"}), finish_reason stop (text ``); not streamed get_weather({\"city\": \"Paris\"}), finish_reason tool_calls",
        "FAIL tool_call_cut_off: streamed get_weather({\"ci), text ``, finish_reason length; not streamed no call, text `<tool_call> {\"name\": \"get_weather\", \"arguments\": {\"ci`, finish_reason length; raw call markup `<tool_call>` in the text",
        "FAIL tool_call_cut_off: cut at max_tokens 4 but finish_reason tool_calls, not length: both get_weather({\"ci), text ``, finish_reason tool_calls",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
}

/// A server that counts tokens it never sent back fails `usage_plausible`, the evidence giving
/// the count against the bytes delivered.
#[test]
fn a_server_that_counts_tokens_it_did_not_send_fails_usage_plausible() {
    let s = FakeServer::start("m", |r| model(r, Fault::CountsUnsent));
    let json = contract(&[("counts", s.url())], &["--json"]);
    let failed: Vec<String> = statuses(&json, 0)
        .into_iter()
        .filter(|(_, s)| s != "pass")
        .map(|(p, s)| format!("{p} {s}"))
        .collect();
    assert_eq!(failed, ["usage_plausible fail"], "{}", stdout(&json));
    let text = stdout(&contract(&[("counts", s.url())], &[]));
    assert!(
        text.contains("FAIL usage_plausible: completion_tokens 40 for 5 bytes (short), 16 for 54 bytes (long) delivered: more tokens counted than were sent back"),
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

/// A fake whose streamed replies never end (a word every 50 ms); the others keep every promise.
fn endless_streams() -> FakeServer {
    FakeServer::start("m", |r| {
        if r.body["stream"] == true {
            let event = format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": "w"}}]})
            );
            return Reply::endless_stream(&event, std::time::Duration::from_millis(50));
        }
        model(r, Fault::None)
    })
}

#[test]
fn a_stream_that_never_ends_fails_its_probes_within_one_timeout() {
    let s = endless_streams();
    let started = std::time::Instant::now();
    let out = contract(&[("s", s.url())], &["--json", "--timeout", "2"]);
    let took = started.elapsed();
    assert_eq!(exit_code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    // Three streamed requests, each one attempt of 2 s, not the 4 of --retries 3.
    assert!(took.as_secs_f64() < 8.0, "{took:?}");
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let probes = v["endpoints"][0]["probes"].as_array().unwrap();
    for name in [
        "stream_same_text",
        "stream_prompt_tokens",
        "stream_usage_chunk",
        "stream_tool_call",
        "tool_call_cut_off",
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
    assert_eq!(streams, 3, "a stream that did not end is not sent again");
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

/// Streams that never end, each allowed a long `--timeout`: the endpoint is reported as not
/// probed once `--deadline` is past (exit 3), instead of staying silent for probes × timeout.
#[test]
fn endless_streams_are_cut_at_the_deadline_whatever_the_timeout() {
    let s = endless_streams();
    let started = std::time::Instant::now();
    let out = contract(
        &[("s", s.url())],
        &["--json", "--timeout", "60", "--deadline", "3s"],
    );
    let took = started.elapsed();
    assert_eq!(exit_code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    assert!(took.as_secs_f64() < 10.0, "{took:?}");
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let error = v["endpoints"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("did not end within the deadline of 3s"),
        "{error}"
    );
}

/// A server's text quoted by `contract` (its model name, its error bodies) cannot drive the
/// terminal: ESC, OSC, BEL, C1 and bidi overrides are shown visible, as the reports show them.
#[test]
fn server_text_with_terminal_controls_is_quoted_visible() {
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{202e}gnp";
    let s = FakeServer::start(&format!("m{evil}"), move |_| {
        Reply::text(500, &format!("boom {evil}"))
    });
    let out = contract(&[("s", s.url())], &["--retries", "0"]);
    assert_eq!(exit_code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert_no_terminal_controls(&text);
    assert!(text.contains("boom ␛]0;pwned␇␛[2J"), "{text}");
    assert!(text.contains("model m␛]0;pwned␇"), "{text}");
}

/// A server that lists thousands of alternatives per token fails `logprobs_shape` saying how
/// many it listed, though coherence keeps only the best 100 of them once read.
#[test]
fn thousands_of_alternatives_per_token_are_counted_as_listed() {
    let s = FakeServer::start("m", |r| {
        if r.body["logprobs"] == true {
            let alts: Vec<Value> = (0..5000)
                .map(|k| json!({"token": format!("w{k}"), "logprob": -(k as f64) - 0.1}))
                .collect();
            let content = json!([{"token": "w", "logprob": -0.1, "top_logprobs": alts}]);
            return Reply::json(
                200,
                json!({"model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
                    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": content},
                        "message": {"role": "assistant", "content": "w"}}]}),
            );
        }
        model(r, Fault::None)
    });
    let out = contract(&[("s", s.url())], &["--json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let probes = v["endpoints"][0]["probes"].as_array().unwrap();
    let shape = probes
        .iter()
        .find(|p| p["probe"] == "logprobs_shape")
        .unwrap();
    assert_eq!(shape["status"], "fail", "{shape}");
    assert!(
        shape["evidence"]
            .as_str()
            .unwrap()
            .contains("lists 5000 alternatives, not 3"),
        "{shape}"
    );
}
