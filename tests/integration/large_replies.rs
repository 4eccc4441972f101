//! Replies of megabytes (text, and tool-call arguments): records.jsonl holds each text once and
//! whole; results.json and every report quote a clipped start, flagged and marked with the full
//! length; re-scoring from the journal reads the same verdicts.

use serde_json::{json, Value};

use crate::common::*;

/// Bytes of filler after each answer: large enough to pass the quote bound many times over,
/// small enough for a fast test.
const FILLER_BYTES: usize = 1_000_000;

/// A word that appears once per reply, so a copy of the reply can be counted.
const MARK: &str = "zebracrossing";

/// The correct answer, then a blank line and `FILLER_BYTES` of prose without digits.
fn long_answer(question: &str) -> String {
    let words = "the quiet harbour waits ";
    let filler = words.repeat(FILLER_BYTES / words.len());
    format!("{}\n\n{MARK} {filler}", correct_answer(question))
}

fn file_len(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn schema_errors(r: &Value) -> Vec<String> {
    let schema: Value =
        serde_json::from_str(include_str!("../../src/report/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(r)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn megabyte_answers_are_journalled_once_and_quoted_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let server = || FakeServer::start("m", |req| Reply::content(&long_answer(&req.question())));
    let (a, b) = (server(), server());
    let (out, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--repeats", "2"]);
    let code = exit_code(&out);
    assert!(code == 0 || code == 1, "{}", stderr(&out));

    // The journal: every reply whole, once per line (in the raw body only).
    let journal = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    assert_eq!(lines.len(), 5 * 2 * 2);
    for line in &lines {
        assert_eq!(line.matches(MARK).count(), 1, "one copy per line");
        let rec: Value = serde_json::from_str(line).unwrap();
        assert_eq!(rec["texts_in_raw_body"], true);
        assert!(rec["content"].is_null() && rec["answer"].is_null());
    }
    assert!(
        (journal.len() as f64) < 1.2 * (lines.len() * FILLER_BYTES) as f64,
        "{} bytes of journal",
        journal.len()
    );

    // What results.json and the reports quote stays small, flagged and marked.
    for (file, most) in [
        ("results.json", 2_000_000),
        ("report.md", 1_000_000),
        ("report.html", 2_000_000),
        ("junit.xml", 1_000_000),
        ("comparison_table.md", 100_000),
    ] {
        let len = file_len(&run.join(file));
        assert!(len > 0 && len < most, "{file}: {len} bytes");
    }
    let r = results(&run);
    assert!(schema_errors(&r).is_empty(), "{:#?}", schema_errors(&r));
    let answer = &prompt(&r, "capital")["answers"]["a"];
    assert_eq!(answer["clipped"], true, "{answer:#}");
    let text = answer["answer"].as_str().unwrap();
    assert!(text.starts_with("The capital of France is Paris."));
    assert!(
        text.ends_with("bytes in full, kept in records.jsonl]") && text.len() <= 16 * 1024,
        "{}",
        &text[text.len().saturating_sub(100)..]
    );
    assert!(r["warnings"]
        .to_string()
        .contains("quoted reply texts are longer than 16384 bytes"));

    // Re-scored from the journal: the same verdicts and answers.
    let verdicts = |r: &Value| -> Vec<Value> {
        r["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| json!([p["id"], p["verdict"], p["answers"]["b"]["correct"]]))
            .collect()
    };
    let before = verdicts(&r);
    let rescored = coherence(&["score", run.to_str().unwrap()], dir.path(), &[]);
    assert_eq!(exit_code(&rescored), code, "{}", stderr(&rescored));
    let again = results(&run);
    assert_eq!(verdicts(&again), before);
    assert_eq!(again["prompts"], r["prompts"]);
}

#[test]
fn megabyte_tool_call_arguments_are_journalled_once_and_quoted_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let server = || {
        FakeServer::start("m", |_| {
            let city = format!("Paris {MARK} {}", "x".repeat(FILLER_BYTES));
            let arguments = json!({ "city": city }).to_string();
            Reply::json(
                200,
                json!({
                    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                        "role": "assistant", "content": null,
                        "tool_calls": [{"id": "call_0", "type": "function",
                            "function": {"name": "get_weather", "arguments": arguments}}]}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }),
            )
        })
    };
    let (a, b) = (server(), server());
    let out = dir.path().join("run");
    let mut args: Vec<String> = [
        "compare",
        "--suite",
        "tools",
        "--only",
        "tools.weather_paris",
    ]
    .map(String::from)
    .to_vec();
    for (name, s) in [("a", &a), ("b", &b)] {
        args.extend(["--endpoint".to_string(), format!("{name}={}", s.url())]);
    }
    args.extend(["--out", out.to_str().unwrap(), "--quiet", "--repeats", "2"].map(String::from));
    let run = coherence(&args, dir.path(), &[]);
    assert!(out.join("results.json").exists(), "{}", stderr(&run));
    let journal = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    for line in journal.lines() {
        assert_eq!(line.matches(MARK).count(), 1, "one copy per line");
    }
    for file in ["results.json", "report.md", "report.html", "junit.xml"] {
        let len = file_len(&out.join(file));
        assert!(len > 0 && len < 1_000_000, "{file}: {len} bytes");
    }
    let r = results(&out);
    assert!(schema_errors(&r).is_empty(), "{:#?}", schema_errors(&r));
    assert_eq!(
        prompt(&r, "tools.weather_paris")["answers"]["a"]["clipped"],
        true
    );
    let failing = &r["tool_calls"]["endpoints"][0]["failing"][0];
    assert_eq!(failing["clipped"], true, "{failing:#}");
    assert!(failing["reply"].as_str().unwrap().len() <= 16 * 1024);
}

/// A reply part past the 1 MiB one record keeps (here 3 MiB of tool-call arguments) is journalled
/// cut, says so in its record and is scored as no usable answer: a hostile reply costs a bounded
/// record, never its megabytes in the journal or in memory while scoring.
#[test]
fn tool_call_arguments_past_the_cap_are_kept_cut_and_said() {
    const CAP: usize = 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::start("m", |_| {
        let arguments = json!({ "city": format!("Paris {}", "x".repeat(3 * CAP)) }).to_string();
        Reply::json(
            200,
            json!({
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null,
                    "tool_calls": [{"id": "call_0", "type": "function",
                        "function": {"name": "get_weather", "arguments": arguments}}]}}],
            }),
        )
    });
    let out = dir.path().join("run");
    let mut args: Vec<String> = [
        "compare",
        "--suite",
        "tools",
        "--only",
        "tools.weather_paris",
    ]
    .map(String::from)
    .to_vec();
    for name in ["a", "b"] {
        args.extend(["--endpoint".to_string(), format!("{name}={}", server.url())]);
    }
    args.extend(["--out", out.to_str().unwrap(), "--quiet", "--control", "0"].map(String::from));
    let run = coherence(&args, dir.path(), &[]);
    assert_eq!(exit_code(&run), 1, "a fail verdict: {}", stderr(&run));
    let journal = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    assert!(journal.len() < 2 * 100 * 1024, "{} bytes", journal.len());
    for line in journal.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        assert_eq!(rec["error"]["kind"], "reply_too_long", "{rec:#}");
        let message = rec["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("tool call 1's arguments (3145745 bytes) over the 1048576 bytes"),
            "{message}"
        );
        assert!(rec["raw_body"].as_str().unwrap().len() <= 64 * 1024);
    }
    let r = results(&out);
    assert_eq!(r["complete"], true, "not a failed request: not resent");
    let p = prompt(&r, "tools.weather_paris");
    assert_eq!(p["verdict"], "fail", "{p:#}");
    assert!(p["answers"]["b"]["error"]
        .as_str()
        .unwrap()
        .starts_with("reply too long: tool call 1's arguments"));
}
