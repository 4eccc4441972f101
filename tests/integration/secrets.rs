//! API keys reach the endpoint's Authorization header and nowhere else: not the run folder, not
//! stdout or stderr, whatever a hostile server echoes (in a header, escaped twice inside tool-call
//! arguments, split across the deltas of a stream) and however the key is mistyped on the
//! command line.

use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use crate::common::*;
use walkdir_lite::files;

/// A tiny recursive file lister (no extra dependency).
mod walkdir_lite {
    use std::path::{Path, PathBuf};

    pub fn files(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(files(&path));
            } else {
                out.push(path);
            }
        }
        out
    }
}

const KEY: &str = "sk-coherence-test-7f3a9c1e5b";

#[test]
fn the_api_key_appears_nowhere_under_the_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    // A hostile server that echoes the Authorization header back in answers and errors.
    let echo = |req: &Incoming| {
        let auth = req.header("authorization").unwrap_or("none").to_string();
        if req.question() == CAPITAL_Q {
            Reply::status(401, &format!("invalid key {auth}"))
        } else {
            Reply::content(&format!(
                "{} (you sent {auth})",
                correct_answer(&req.question())
            ))
        }
    };
    let a = FakeServer::start("m", echo);
    let b = FakeServer::start("m", echo);
    let run = dir.path().join("run");
    let mut args = compare_args(&write_catalogue(dir.path()), &[("a", &a), ("b", &b)], &run);
    args.extend(["--api-key-env", "b=B_KEY"].map(String::from));
    let out = coherence(
        &args,
        dir.path(),
        &[("OPENAI_API_KEY", KEY), ("B_KEY", KEY)],
    );
    assert_eq!(
        exit_code(&out),
        3,
        "the 401 is a request failure: {}",
        stderr(&out)
    );
    for server in [&a, &b] {
        let auth = server.completion_requests()[0]
            .header("authorization")
            .unwrap()
            .to_string();
        assert_eq!(auth, format!("Bearer {KEY}"), "the key is sent");
    }
    let all = files(&run);
    assert!(all.len() >= 5);
    for file in all {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(KEY), "{} contains the key", file.display());
        assert!(
            !text.contains("sk-coherence"),
            "{} contains part of the key",
            file.display()
        );
    }
    assert!(
        std::fs::read_to_string(run.join("records.jsonl"))
            .unwrap()
            .contains("[REDACTED]"),
        "echoes are redacted"
    );
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"api_key_env\": \"B_KEY\""),
        "the variable name is recorded: {manifest}"
    );
    assert!(manifest.contains("\"api_key_env\": \"OPENAI_API_KEY\""));
}

/// A key pasted into `--param` would be sent in every request body and kept in the manifest and
/// the reports: the run is refused (exit 2) naming the field and the endpoint, never the key, and
/// nothing is sent. Pasted into `--out`, the run goes ahead and the manifest records the
/// invocation with the key redacted.
#[test]
fn a_key_pasted_into_a_flag_is_refused_in_a_param_and_redacted_in_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let answer = |req: &Incoming| Reply::content(correct_answer(&req.question()));
    let (a, b) = (
        FakeServer::start("m", answer),
        FakeServer::start("m", answer),
    );
    let run = dir.path().join("run");
    let mut args = compare_args(&write_catalogue(dir.path()), &[("a", &a), ("b", &b)], &run);
    args.extend(["--param".to_string(), format!("user={KEY}")]);
    let out = coherence(&args, dir.path(), &[("OPENAI_API_KEY", KEY)]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--param user"), "{}", stderr(&out));
    assert!(!stderr(&out).contains(KEY_TAIL), "{}", stderr(&out));
    assert!(a.completion_requests().is_empty() && b.completion_requests().is_empty());

    let named = dir.path().join(format!("run-{KEY}"));
    let args = compare_args(
        &write_catalogue(dir.path()),
        &[("a", &a), ("b", &b)],
        &named,
    );
    let out = coherence(&args, dir.path(), &[("OPENAI_API_KEY", KEY)]);
    assert!(matches!(exit_code(&out), 0 | 1), "{}", stderr(&out));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(named.join("manifest.json")).unwrap())
            .unwrap();
    let argv: Vec<&str> = manifest["invocations"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert!(
        argv.iter().any(|a| a.ends_with("run-[REDACTED]")),
        "{argv:?}"
    );
    assert!(argv.iter().all(|a| !a.contains(KEY_TAIL)), "{argv:?}");
}

/// A key pasted into `--model` or an endpoint's URL path would be written to the manifest and
/// shown in every report: each is refused (exit 2) naming the endpoint and the flag, never the
/// key, and nothing is sent, for compare as for every command that reads keys (bench here). A
/// URL with a query is refused anyway, and its error masks the query.
#[test]
fn a_key_pasted_into_a_model_name_or_a_url_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let answer = |req: &Incoming| Reply::content(correct_answer(&req.question()));
    let (a, b) = (
        FakeServer::start("m", answer),
        FakeServer::start("m", answer),
    );
    let catalogue = write_catalogue(dir.path());
    let run = dir.path().join("run");
    let mut model = compare_args(&catalogue, &[("a", &a), ("b", &b)], &run);
    model.extend(["--model".to_string(), format!("b={KEY}")]);
    let url = vec![
        "bench".to_string(),
        "--endpoint".to_string(),
        format!("a={}/{KEY}", a.url()),
        "--out".to_string(),
        dir.path().join("bench").display().to_string(),
    ];
    let mut query = url.clone();
    query[2] = format!("a={}?key={KEY}", a.url());
    for (args, expected) in [
        (model, "endpoint `b`: its --model holds the API key"),
        (url, "endpoint `a`: its URL holds the API key"),
        (query, "/v1?***`: the URL must be a base"),
    ] {
        let out = coherence(&args, dir.path(), &[("OPENAI_API_KEY", KEY)]);
        assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
        assert!(!stderr(&out).contains(KEY_TAIL), "{}", stderr(&out));
    }
    assert!(a.requests().is_empty() && b.requests().is_empty());
    assert!(!run.exists());
}

/// Every other command that takes `--param` refuses a key in one the same way, before sending
/// anything.
#[test]
fn bench_soak_and_project_refuse_a_key_in_a_param() {
    let dir = tempfile::tempdir().unwrap();
    let a = FakeServer::start("m", |req: &Incoming| {
        Reply::content(correct_answer(&req.question()))
    });
    let projects = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/projects");
    let extra: [&[&str]; 3] = [
        &["bench"],
        &["soak", "--duration", "1s"],
        &["project", "--projects", projects.to_str().unwrap()],
    ];
    for command in extra {
        let mut args: Vec<String> = command.iter().map(|a| a.to_string()).collect();
        args.extend([
            "--endpoint".to_string(),
            format!("a={}", a.url()),
            "--param".to_string(),
            format!("user={KEY}"),
            "--out".to_string(),
            dir.path().join(command[0]).display().to_string(),
        ]);
        let out = coherence(&args, dir.path(), &[("OPENAI_API_KEY", KEY)]);
        assert_eq!(exit_code(&out), 2, "{command:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("--param user: its value holds the API key of endpoint `a`"),
            "{command:?}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains(KEY_TAIL), "{}", stderr(&out));
    }
    assert!(a.requests().is_empty());
}

/// The part of [`KEY`] after its last `-`: every escaped or split form the hostile fakes send
/// keeps it literal, so finding it anywhere means some form of the key got through.
const KEY_TAIL: &str = "7f3a9c1e5b";

/// [`KEY`] with every `-` written as a JSON escape, as a hostile server may.
fn escaped_key() -> String {
    KEY.replace('-', r"\u002d")
}

/// No form of the key in any file under `dir`, nor in the output of `out`.
fn assert_no_key(what: &str, dir: &Path, out: &Output) {
    let mut texts: Vec<(String, String)> = files(dir)
        .into_iter()
        .map(|f| {
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
            (f.display().to_string(), text)
        })
        .collect();
    texts.push((format!("{what}: stdout"), stdout(out)));
    texts.push((format!("{what}: stderr"), stderr(out)));
    for (name, text) in texts {
        for form in [KEY, KEY_TAIL, &escaped_key(), "sk%2D"] {
            assert!(!text.contains(form), "{what}: {name} holds `{form}`");
        }
    }
}

/// A hostile server: the `Authorization` header echoed in the `Server` header and in every
/// answer, a tool call (to the first tool offered) whose arguments hold the key JSON-escaped
/// inside the JSON-escaped arguments string, and a content that quotes it percent-encoded.
fn echoing_server() -> FakeServer {
    FakeServer::start("m", |req| {
        let auth = req.header("authorization").unwrap_or("none").to_string();
        let content = format!(
            "{} (you sent {auth}, or {})",
            correct_answer(&req.question()),
            KEY.replace('-', "%2D")
        );
        let mut message = json!({"role": "assistant", "content": content});
        let tool = req.body.pointer("/tools/0/function/name").cloned();
        if let Some(name) = tool {
            let arguments = format!(r#"{{"city": "{}", "key": "{KEY}"}}"#, escaped_key());
            message["tool_calls"] = json!([{"id": "call_0", "type": "function",
                "function": {"name": name, "arguments": arguments}}]);
        }
        let finish = if message.get("tool_calls").is_some() {
            "tool_calls"
        } else {
            "stop"
        };
        Reply::json(
            200,
            json!({"id": "x", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
        )
        .header("Server", &format!("fake/1.0 ({auth})"))
    })
}

#[test]
fn a_key_echoed_in_a_header_or_escaped_twice_in_tool_arguments_reaches_no_file_or_output() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (echoing_server(), echoing_server());
    let run = dir.path().join("run");
    let mut compare: Vec<String> = ["compare", "--suite", "tools", "--quiet", "--control", "0"]
        .map(String::from)
        .to_vec();
    for (name, server) in [("a", &a), ("b", &b)] {
        compare.extend(["--endpoint".to_string(), format!("{name}={}", server.url())]);
    }
    compare.extend(["--out".to_string(), run.display().to_string()]);
    compare.extend(["--no-logprobs".to_string()]);
    let env = [("OPENAI_API_KEY", KEY)];
    let out = coherence(&compare, dir.path(), &env);
    assert!(run.join("results.json").exists(), "{}", stderr(&out));
    let sent = a.completion_requests();
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(
        sent.iter().any(|r| r.body.get("tools").is_some()),
        "the tools suite offers tools"
    );
    let records = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    assert!(
        records.contains("fake/1.0 (Bearer [REDACTED])"),
        "the Server header is kept, redacted"
    );
    assert!(
        records.contains(r#"\\\"city\\\": \\\"[REDACTED]\\\""#),
        "the twice-escaped key is redacted in place: {}",
        &records[..records.len().min(3000)]
    );
    assert_no_key("compare", &run, &out);

    let run_arg = run.display().to_string();
    for args in [
        vec!["score", run_arg.as_str()],
        vec!["report", run_arg.as_str()],
        vec!["report", run_arg.as_str(), "--issue", "all-different"],
    ] {
        let out = coherence(&args, dir.path(), &[]);
        assert_no_key(&args.join(" "), &run, &out);
    }
    let first = coherence::catalogue::tools::items()[0].id.clone();
    let issue = coherence(&["report", &run_arg, "--issue", &first], dir.path(), &[]);
    assert_eq!(exit_code(&issue), 0, "{}", stderr(&issue));
    assert!(stdout(&issue).contains("[REDACTED]"), "{}", stdout(&issue));
    assert_no_key("report --issue", &run, &issue);
}

/// A chat server for `contract` that echoes the key: whole (and so redacted) in plain replies,
/// split across two deltas of a stream, twice escaped in tool-call arguments, and in the
/// `Server` header.
fn echoing_contract_server() -> FakeServer {
    FakeServer::start("m", |req| {
        let auth = req.header("authorization").unwrap_or("none").to_string();
        let key = auth.trim_start_matches("Bearer ");
        let text = format!("The key is {key}.");
        let usage = json!({"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14});
        let reply = if req.body["stream"] == true {
            let (head, tail) = text.split_at(text.len() / 2);
            let mut sse = String::new();
            for piece in [head, tail] {
                let event = json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
                sse.push_str(&format!("data: {event}\n\n"));
            }
            sse.push_str(&format!(
                "data: {}\n\n",
                json!({"choices": [], "usage": usage})
            ));
            sse.push_str("data: [DONE]\n\n");
            Reply::text(200, &sse)
        } else {
            let mut message = json!({"role": "assistant", "content": text});
            if req.body.get("tool_choice").is_some() {
                let arguments = format!(r#"{{"city": "{}"}}"#, key.replace('-', r"\u002d"));
                message["tool_calls"] = json!([{"id": "c", "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments}}]);
            }
            Reply::json(
                200,
                json!({"model": "m", "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}),
            )
        };
        reply.header("Server", &format!("fake/1.0 ({auth})"))
    })
}

#[test]
fn contract_redacts_a_key_split_across_stream_deltas_or_escaped_twice() {
    let dir = tempfile::tempdir().unwrap();
    let s = echoing_contract_server();
    let url = format!("s={}", s.url());
    for extra in [None, Some("--json")] {
        let mut args = vec!["contract", "--endpoint", &url, "--retries", "0"];
        args.extend(extra);
        let out = coherence(&args, dir.path(), &[("OPENAI_API_KEY", KEY)]);
        assert_no_key("contract", dir.path(), &out);
        let text = stdout(&out);
        assert!(text.contains("[REDACTED]"), "{text}");
        if extra.is_some() {
            let json: Value = serde_json::from_str(&text).unwrap();
            let probes = json["endpoints"][0]["probes"].as_array().unwrap();
            let same_text = probes
                .iter()
                .find(|p| p["probe"] == "stream_same_text")
                .unwrap();
            assert_eq!(same_text["status"], "pass", "{same_text}");
            assert_eq!(same_text["evidence"], "both `The key is [REDACTED].`");
        }
    }
}

#[test]
fn a_key_given_where_its_variable_name_goes_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let s = correct_server();
    let url = format!("b={}", s.url());
    let pair = format!("b={KEY}");
    for args in [
        vec!["smoke", "--endpoint", &url, "--api-key-env", &pair],
        vec!["smoke", "--endpoint", &url, "--api-key-env", KEY],
        vec!["contract", "--endpoint", &url, "--api-key-env", &pair],
    ] {
        let out = coherence(&args, dir.path(), &[]);
        assert_eq!(exit_code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("--api-key-env takes NAME=ENV_VAR")
                && stderr(&out).contains("(not shown)"),
            "{}",
            stderr(&out)
        );
        assert_no_key("--api-key-env", dir.path(), &out);
    }
    // A key pasted as a config file's api_key_env is refused the same way.
    let config = dir.path().join("coherence.toml");
    std::fs::write(
        &config,
        format!(
            "[endpoint.b]\nurl = \"{}\"\napi_key_env = \"{KEY}\"\n",
            s.url()
        ),
    )
    .unwrap();
    let out = coherence(
        &["smoke", "b", "--config", &config.display().to_string()],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("(not shown)"), "{}", stderr(&out));
    assert!(!stderr(&out).contains(KEY_TAIL) && !stdout(&out).contains(KEY_TAIL));
}

/// A chat server that echoes the key in every form a logprobs-era server can: whole in the text
/// (with the numbers `watch`'s baseline needs), split across two logprob tokens (and their
/// alternatives and bytes), JSON-escaped in the text, and deep in a 500's nested error body for
/// one question.
fn token_echoing_server() -> FakeServer {
    FakeServer::start("m", |req| {
        let auth = req.header("authorization").unwrap_or("none").to_string();
        let key = auth.trim_start_matches("Bearer ").to_string();
        let q = req.question();
        if q == CAPITAL_Q {
            let inner = json!({"trace": ["auth", {"header": auth, "escaped": key.replace('-', r"\u002d")}]});
            return Reply::json(
                500,
                json!({"error": {"message": "boom", "details": inner.to_string()}}),
            );
        }
        let h = q
            .bytes()
            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        let (head, tail) = key.split_at(8);
        let words = [
            correct_answer(&q).to_string(),
            " ".into(),
            head.to_string(),
            tail.to_string(),
            format!(" {}", h % 97),
        ];
        let positions: Vec<Value> = words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let lp = -(((h >> (i * 8)) % 50) as f64) / 100.0;
                json!({"token": w, "logprob": lp, "bytes": w.as_bytes(),
                       "top_logprobs": [{"token": w, "logprob": lp, "bytes": w.as_bytes()},
                                        {"token": " no", "logprob": lp - 1.0}]})
            })
            .collect();
        Reply::json(
            200,
            json!({"choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": words.concat()},
                                "logprobs": {"content": positions}}],
                   "usage": {"prompt_tokens": 20, "completion_tokens": 5}}),
        )
        .header("Server", &format!("fake/1.0 ({auth})"))
    })
}

/// The done-when of issue 51: no form of the key in any file, stdout or stderr after
/// `compare`, `watch` and `history --html` against a server that echoes it whole, split across
/// logprob tokens, escaped and deep in an error body (`contract`: the test above); and a
/// password in `watch --endpoint`'s URL refused as `compare` refuses it, never printed.
#[test]
fn a_key_split_across_logprob_tokens_or_deep_in_an_error_reaches_no_file_of_compare_watch_or_history(
) {
    let dir = tempfile::tempdir().unwrap();
    let s = token_echoing_server();
    let env = [("OPENAI_API_KEY", KEY)];
    let cat = write_catalogue(dir.path());
    let run = dir.path().join("run");
    let mut compare = compare_args(&cat, &[("a", &s), ("b", &s)], &run);
    compare.extend(["--retries", "0", "--quiet"].map(String::from));
    let out = coherence(&compare, dir.path(), &env);
    let records = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    assert!(
        records.contains("top_logprobs"),
        "logprobs were kept: {}",
        stderr(&out)
    );
    assert!(records.contains("[REDACTED]"), "{records}");
    assert_no_key("compare", dir.path(), &out);

    let base = watch_baseline(dir.path(), &s, 10, &env);
    let db = dir.path().join("data").join("history.sqlite");
    let watch = |endpoint: &str| {
        coherence(
            &[
                "watch",
                "prod",
                "--baseline",
                base.to_str().unwrap(),
                "--endpoint",
                endpoint,
                "--db",
                db.to_str().unwrap(),
                "--once",
                "--json",
                "--retries",
                "0",
                "--on-alert",
                "cat",
            ],
            dir.path(),
            &env,
        )
    };
    let out = watch(&s.url());
    assert!(db.exists(), "{}", stderr(&out));
    assert_no_key("watch", dir.path(), &out);
    let page = dir.path().join("trend.html");
    let out = coherence(
        &[
            "history",
            "--db",
            db.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(page.exists());
    assert_no_key("history --html", dir.path(), &out);

    // A password in the URL: refused before anything is sent, stored or printed.
    let with_password = s
        .url()
        .replacen("http://", "http://user:sk-watch-password@", 1);
    let out = watch(&with_password);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("credentials"), "{}", stderr(&out));
    let sent = s.requests().len();
    for (name, text) in [("stdout", stdout(&out)), ("stderr", stderr(&out))] {
        assert!(
            !text.contains("sk-watch-password") && !text.contains("user:"),
            "{name}: {text}"
        );
    }
    let out = watch(&format!("{}?key={KEY}", s.url()));
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert_no_key("watch --endpoint URL?key", dir.path(), &out);
    assert_eq!(s.requests().len(), sent, "a refused watch sent nothing");
    let all = files(dir.path());
    assert!(all.iter().all(|f| {
        !String::from_utf8_lossy(&std::fs::read(f).unwrap()).contains("sk-watch-password")
    }));
}
