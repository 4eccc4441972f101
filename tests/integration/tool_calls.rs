//! The tools suite end to end: what `prompts list/check --suite tools` give, the request bodies a
//! compare sends (tools, tool_choice, the tool-result turns), and results.json `tool_calls`
//! against a fake that makes every expected call and one that breaks known items, one fault each.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use coherence::catalogue::tools;
use coherence::score::tool_call::Reply as ToolReply;
use serde_json::{json, Value};

use crate::common::*;

/// The buckets of results.json `tool_calls.endpoints` that count one fault each.
const BUCKETS: [&str; 5] = [
    "invalid_json",
    "unknown_name",
    "schema_mismatch",
    "missed_calls",
    "unexpected_calls",
];

/// The OpenAI chat response that carries `reply` (its text, calls and finish reason).
fn body_of(reply: &ToolReply) -> Value {
    let calls: Vec<Value> = reply
        .tool_calls
        .iter()
        .map(|c| {
            json!({"id": c.id, "type": "function",
                   "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": reply.content});
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}

/// A call reply to `name` with raw `arguments`.
fn call(name: &str, arguments: &str) -> ToolReply {
    ToolReply::read(
        &json!({"content": null, "finish_reason": "tool_calls",
                "tool_calls": [{"id": "call_0", "name": name, "arguments": arguments}]})
        .to_string(),
    )
}

/// A fake that answers every item of the suite the way its reference does: the expected calls
/// (built from the item the request's last user turn names), or the expected final text; on the
/// items of `faults` it sends that reply instead.
fn tools_endpoint(faults: HashMap<String, ToolReply>) -> FakeServer {
    let answers: HashMap<String, ToolReply> = tools::items()
        .into_iter()
        .map(|p| {
            let reply = faults
                .get(&p.id)
                .cloned()
                .unwrap_or_else(|| ToolReply::read(&p.reference));
            (p.question().to_string(), reply)
        })
        .collect();
    FakeServer::start("m", move |req| match answers.get(&req.question()) {
        Some(reply) => Reply::json(200, body_of(reply)),
        None => Reply::status(404, "unknown question"),
    })
}

/// `compare --suite tools` of `endpoints` with the gate `fail_on`: the run folder and the exit code.
fn tools_compare(dir: &Path, endpoints: &[(&str, &FakeServer)], fail_on: &str) -> (PathBuf, i32) {
    let out = dir.join("run");
    let mut args: Vec<String> = [
        "compare",
        "--suite",
        "tools",
        "--backoff-ms",
        "10",
        "--quiet",
    ]
    .map(String::from)
    .to_vec();
    for (name, server) in endpoints {
        args.extend(["--endpoint".to_string(), format!("{name}={}", server.url())]);
    }
    args.extend(["--out".to_string(), out.display().to_string()]);
    args.extend(["--fail-on".to_string(), fail_on.to_string()]);
    let run = coherence(&args, dir, &[]);
    assert!(
        out.join("results.json").exists(),
        "{}{}",
        stderr(&run),
        stdout(&run)
    );
    (out, exit_code(&run))
}

/// The tool-call gate of the issue: trigger F1 at the verifiers' bar, no invalid call.
const TOOL_GATE: &str = "tool_f1<0.98,schema_invalid>0";

#[test]
fn prompts_list_and_check_cover_the_tools_suite() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(
        &["prompts", "list", "--suite", "tools", "--json"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let prompts = list["prompts"].as_array().unwrap();
    assert!(prompts.len() >= 40, "{} items", prompts.len());
    let weather = prompts
        .iter()
        .find(|p| p["id"] == "tools.weather_paris")
        .unwrap();
    assert_eq!(weather["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(
        weather["expected_call"],
        json!({"name": "get_weather", "arguments": {"city": "Paris"}})
    );
    let no_call = prompts
        .iter()
        .find(|p| p["id"] == "tools.capital_france")
        .unwrap();
    assert_eq!(no_call["expected_call"], Value::Null);
    assert!(no_call["tools"].is_array());
    let check = coherence(&["prompts", "check", "--suite", "tools"], dir.path(), &[]);
    assert_eq!(exit_code(&check), 0, "{}{}", stderr(&check), stdout(&check));
}

#[test]
fn a_compare_sends_the_tools_and_the_tool_result_turns() {
    let dir = tempfile::tempdir().unwrap();
    let a = tools_endpoint(HashMap::new());
    let b = tools_endpoint(HashMap::new());
    tools_compare(dir.path(), &[("a", &a), ("b", &b)], TOOL_GATE);
    let sent = a.completion_requests();
    let by_question = |q: &str| {
        sent.iter()
            .find(|r| r.question() == q)
            .unwrap_or_else(|| panic!("no request for {q}"))
            .body
            .clone()
    };
    let named = by_question("Weather for Lisbon for the next 2 days, please.");
    assert_eq!(
        named["tool_choice"],
        json!({"type": "function", "function": {"name": "get_forecast"}})
    );
    assert_eq!(named["tools"].as_array().unwrap().len(), 2);
    let parallel = by_question("Look up orders A-1 and A-2.");
    assert_eq!(parallel["parallel_tool_calls"], json!(true));
    let turns = by_question("Which carrier is delivering my order A-10442?");
    let roles: Vec<&str> = turns["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(
        turns["messages"][1]["tool_calls"][0]["function"]["name"],
        "lookup_order"
    );
    assert_eq!(turns["messages"][2]["tool_call_id"], "call_0");
}

#[test]
fn each_fault_is_counted_in_its_bucket_and_the_pair_reads_another_deployment() {
    let dir = tempfile::tempdir().unwrap();
    let good = tools_endpoint(HashMap::new());
    let text = ToolReply::read("I cannot look that up.");
    let faults = HashMap::from([
        (
            "tools.weather_paris".to_string(),
            call("get_weather", "{city: Paris"),
        ),
        (
            "tools.stock_aapl".to_string(),
            call("get_stock_quote", r#"{"symbol":"AAPL"}"#),
        ),
        (
            "tools.timer_25".to_string(),
            call("set_timer", r#"{"minutes":"twenty-five"}"#),
        ),
        ("tools.order_status".to_string(), text),
        (
            "tools.capital_france".to_string(),
            call("get_weather", r#"{"city":"Paris"}"#),
        ),
    ]);
    let bad = tools_endpoint(faults);
    let (run, exit) = tools_compare(dir.path(), &[("a", &good), ("b", &bad)], TOOL_GATE);
    let r = results(&run);
    assert_eq!(exit, 1, "the gate fails: {}", r["gate"]);
    assert_eq!(
        r["gate"]["failed"].as_array().unwrap().len(),
        2,
        "{}",
        r["gate"]
    );
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    let section = &report[report.find("Tool calls").expect("a Tool calls section")..];
    assert!(
        section.contains("tools.weather_paris") && section.contains("{city: Paris"),
        "the failing call is quoted: {section}"
    );
    let schema: Value =
        serde_json::from_str(include_str!("../../src/report/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&r).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let mut broken = r.clone();
    broken["tool_calls"]["pairs"][0]["tool_f1"] = json!(2.0);
    assert!(!validator.is_valid(&broken));
    let endpoints = r["tool_calls"]["endpoints"].as_array().unwrap();
    let (a, b) = (&endpoints[0], &endpoints[1]);
    let items = tools::items()
        .iter()
        .filter(|p| p.score.kind() == "tool_call")
        .count();
    assert_eq!(a["items"], items);
    // One fault of each kind on `b`, none on `a`.
    for bucket in BUCKETS {
        assert_eq!(a[bucket], 0, "{bucket}: {a}");
        assert_eq!(b[bucket], 1, "{bucket}: {b}");
    }
    assert_eq!(a["argument_mismatch"], 0, "{a}");
    assert_eq!(a["match_rate"], 1.0);
    assert_eq!(a["schema_accuracy"], 1.0);
    // The invalid, unknown and mismatched calls are not the expected call either.
    assert_eq!(b["argument_mismatch"], 3, "{b}");
    assert_eq!(b["failing"].as_array().unwrap().len(), 5);
    let pair = &r["tool_calls"]["pairs"][0];
    let called = tools::items()
        .iter()
        .filter(|p| p.score.kind() == "tool_call")
        .filter(|p| !ToolReply::read(&p.reference).tool_calls.is_empty())
        .count();
    assert_eq!(pair["reference_only_called"], 1);
    assert_eq!(pair["other_only_called"], 1);
    assert_eq!(pair["both_called"], called - 1);
    let tp = (called - 1) as f64;
    let f1 = pair["tool_f1"].as_f64().unwrap();
    assert!((f1 - 2.0 * tp / (2.0 * tp + 2.0)).abs() < 1e-9, "{pair}");
    assert_eq!(pair["reference_only_correct"], 5);
    assert_eq!(pair["other_only_correct"], 0);
    assert!((pair["mcnemar_p"].as_f64().unwrap() - 2.0 / 32.0).abs() < 1e-9);
    assert_eq!(r["summary"]["same_model"], "no", "{}", r["summary"]);
    let because = r["summary"]["same_model_because"].to_string();
    assert!(because.contains("tool-call trigger F1"), "{because}");
}

#[test]
fn two_identical_fakes_read_no_tool_call_difference() {
    let dir = tempfile::tempdir().unwrap();
    let a = tools_endpoint(HashMap::new());
    let b = tools_endpoint(HashMap::new());
    let (run, exit) = tools_compare(dir.path(), &[("a", &a), ("b", &b)], TOOL_GATE);
    let r = results(&run);
    assert_eq!(exit, 0, "the gate passes: {}", r["gate"]);
    let pair = &r["tool_calls"]["pairs"][0];
    assert_eq!(pair["tool_f1"], 1.0);
    assert_eq!(pair["reference_only_correct"], 0);
    assert_eq!(pair["other_only_correct"], 0);
    assert_eq!(r["tool_calls"]["endpoints"][1]["failing"], json!([]));
    assert_ne!(r["summary"]["same_model"], "no", "{}", r["summary"]);
    assert!(!r["summary"]["same_model_because"]
        .to_string()
        .contains("tool-call"));
}
