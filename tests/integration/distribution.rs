//! `coherence distribution` end to end against sampling fakes: each fake draws its answer from
//! the same categorical distribution over eight answers at the request's temperature, seeded per
//! request; one honours `top_k`, one ignores it (samples the full distribution when the other
//! truncates to the top k).

use std::path::Path;

use coherence_testkit::{FakeServer, Incoming, Reply};
use serde_json::Value;

use crate::common::{coherence, cpu_share, exit_code, results, sigterm_when, stderr, stdout};

/// The answers every fake draws from, most likely first (logits fall by 0.25 per rank). Each
/// ends in a number, so graded prompts read a distinct answer from each.
const WORDS: [&str; 8] = [
    "Apple", "Harbour", "Lantern", "Meadow", "Copper", "Willow", "Thistle", "Marble",
];

/// A fake that samples at the request's temperature, seeded by `seed`, the question and how many
/// times it was asked; `honours_top_k` says whether it applies the request's `top_k`.
fn sampler(seed: u64, honours_top_k: bool) -> FakeServer {
    FakeServer::start("sampled-model", move |req: &Incoming| {
        sample(req, seed, honours_top_k)
    })
}

/// One sampled answer to `req` (see [`sampler`]).
fn sample(req: &Incoming, seed: u64, honours_top_k: bool) -> Reply {
    let temperature = req.body["temperature"].as_f64().unwrap_or(1.0);
    let top_k = req.body["top_k"].as_u64().filter(|_| honours_top_k);
    let keep = top_k.map_or(WORDS.len(), |k| (k as usize).min(WORDS.len()));
    let weights: Vec<f64> = (0..keep)
        .map(|j| (-0.25 * j as f64 / temperature).exp())
        .collect();
    let question_hash = req
        .question()
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let mut rng = fastrand::Rng::with_seed(
        seed ^ question_hash.wrapping_mul(0x9e37_79b9) ^ u64::from(req.call) << 32,
    );
    let mut u = rng.f64() * weights.iter().sum::<f64>();
    let mut pick = keep - 1;
    for (j, w) in weights.iter().enumerate() {
        if u < *w {
            pick = j;
            break;
        }
        u -= w;
    }
    Reply::content(&format!("{}. The answer is {}.", WORDS[pick], pick + 1))
}

fn args(a: &FakeServer, b: &FakeServer, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "distribution",
        "--endpoint",
        &format!("a={}", a.url()),
        "--endpoint",
        &format!("b={}", b.url()),
        "--out",
        &out.display().to_string(),
        "--concurrency",
        "1",
        "--backoff-ms",
        "10",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// The run's distribution.json.
fn manifest(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("distribution.json")).unwrap()).unwrap()
}

/// A time the manifest wrote.
fn time(v: &Value) -> chrono::DateTime<chrono::Utc> {
    v.as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("not a time: {v}"))
}

fn chat_requests(server: &FakeServer) -> Vec<Incoming> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect()
}

#[test]
fn two_fakes_of_the_same_distribution_read_same() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sampler(1, true), sampler(2, true));
    let out = dir.path().join("run");
    let run = coherence(
        &args(&a, &b, &out, &["--temperature", "1.0", "--top-k", "2"]),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&run), 0, "{}\n{}", stdout(&run), stderr(&run));
    let r = results(&out);
    let d = &r["distribution"];
    assert_eq!(d["verdict"], "same", "{d:#}");
    // The test finds no difference; that does not show sameness, so the answer is undecided.
    assert_eq!(
        r["summary"]["same_model"], "undecided",
        "{:#}",
        r["summary"]
    );
    assert!(d["p"].as_f64().unwrap() >= 0.05);
    assert_eq!(d["method"], "mmd_permutation");
    assert_eq!(d["prompts_tested"], 16);
    assert_eq!(r["complete"], true);
    for c in d["control"].as_array().unwrap() {
        assert_eq!(c["different"], false, "{c:#}");
        assert!(c["p"].as_f64().is_some());
    }
    // Accuracy at temperature on the graded prompts, and its paired difference.
    assert_eq!(d["accuracy"].as_array().unwrap().len(), 2);
    assert_eq!(d["accuracy"][0]["graded"], 80);
    assert!(d["accuracy_difference"]["prompts"].as_u64() == Some(8));
    // Ten samples per prompt from each, every one carrying the same sampling parameters.
    for server in [&a, &b] {
        let sent = chat_requests(server);
        assert_eq!(sent.len(), 160);
        assert!(sent.iter().all(|r| r.body["temperature"] == 1.0
            && r.body["top_k"] == 2
            && r.body.get("top_p").is_none()));
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("distribution.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["sampling"]["temperature"], 1.0);
    assert_eq!(manifest["sampling"]["top_k"], 2);
    assert_eq!(manifest["sampling"]["samples"], 10);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Same model: undecided"), "{md}");
    assert!(md.contains("## A-vs-A control"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Two-sample test"));
    assert!(
        stdout(&run).contains("Same model: undecided — no difference detected"),
        "{}",
        stdout(&run)
    );
}

#[test]
fn a_fake_that_ignores_top_k_reads_different_and_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sampler(1, true), sampler(2, false));
    let out = dir.path().join("run");
    let run = coherence(
        &args(&a, &b, &out, &["--temperature", "1.0", "--top-k", "2"]),
        dir.path(),
        &[],
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap_or_default();
    assert_eq!(
        exit_code(&run),
        1,
        "{}\n{}\n{md}",
        stdout(&run),
        stderr(&run)
    );
    let r = results(&out);
    assert_eq!(r["distribution"]["verdict"], "different");
    assert!(r["distribution"]["p"].as_f64().unwrap() < 0.05);
    assert_eq!(r["summary"]["same_model"], "no");
    let because = r["summary"]["same_model_because"][0].as_str().unwrap();
    assert!(
        because.contains("differ at temperature 1, top_k 2"),
        "{because}"
    );
    assert_eq!(r["gate"]["failed"][0], "distribution_different>0");
    // Each endpoint still reads the same as itself.
    for c in r["distribution"]["control"].as_array().unwrap() {
        assert_eq!(c["different"], false, "{c:#}");
    }
}

#[test]
fn a_resumed_run_sends_only_the_samples_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sampler(1, true), sampler(2, true));
    let out = dir.path().join("run");
    let first = coherence(
        &args(&a, &b, &out, &["--temperature", "0.7", "--samples", "3"]),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&first), 0, "{}", stderr(&first));
    assert_eq!(chat_requests(&a).len(), 48);
    let started = manifest(&out);
    assert_eq!(started["status"], "finished");
    assert_eq!(started["invocations"].as_array().unwrap().len(), 1);
    assert_eq!(started["invocations"][0]["at"], started["created_at"]);
    assert_eq!(started["invocations"][0]["args"][1], "distribution");
    assert!(time(&started["updated_at"]) >= time(&started["created_at"]));
    let resumed = coherence(
        &[
            "distribution",
            "--resume",
            &out.display().to_string(),
            "--samples",
            "5",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&resumed), 0, "{}", stderr(&resumed));
    // The manifest keeps when the run started and adds this invocation, timed.
    let m = manifest(&out);
    assert_eq!(m["created_at"], started["created_at"]);
    assert_eq!(m["status"], "finished");
    let invocations = m["invocations"].as_array().unwrap();
    assert_eq!(invocations.len(), 2);
    assert_eq!(invocations[0], started["invocations"][0]);
    assert_eq!(invocations[1]["args"][2], "--resume");
    assert!(time(&invocations[1]["at"]) >= time(&started["updated_at"]));
    assert!(time(&m["updated_at"]) >= time(&invocations[1]["at"]));
    // Two more samples of each of the 16 prompts, at the run's own temperature.
    let sent = chat_requests(&a);
    assert_eq!(sent.len(), 80);
    assert!(sent.iter().all(|r| r.body["temperature"] == 0.7));
    let r = results(&out);
    assert_eq!(r["sampling"]["samples"], 5);
    assert_eq!(
        r["distribution"]["prompts"][0]["samples"],
        serde_json::json!([5, 5])
    );
    let changed = coherence(
        &[
            "distribution",
            "--resume",
            &out.display().to_string(),
            "--temperature",
            "1.0",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&changed), 2);
    assert!(
        stderr(&changed).contains("--temperature"),
        "{}",
        stderr(&changed)
    );
}

#[test]
fn usage_errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sampler(1, true), sampler(2, true));
    let out = dir.path().join("run");
    let no_temperature = coherence(&args(&a, &b, &out, &[]), dir.path(), &[]);
    assert_eq!(exit_code(&no_temperature), 2);
    assert!(stderr(&no_temperature).contains("--temperature"));
    let gate = coherence(
        &args(&a, &b, &out, &["--temperature", "1", "--fail-on", "diff>0"]),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&gate), 2);
    assert!(
        stderr(&gate).contains("not measured by distribution"),
        "{}",
        stderr(&gate)
    );
    let param = coherence(
        &args(&a, &b, &out, &["--temperature", "1", "--param", "top_k=5"]),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&param), 2);
    assert!(stderr(&param).contains("--top-k"), "{}", stderr(&param));
    assert!(
        chat_requests(&a).is_empty(),
        "nothing is sent on a usage error"
    );
}

/// A distribution.json edited out of bounds (by hand, or by a hostile file) is refused on
/// `--resume` before anything is sent, naming the file and the field, as manifest.json is.
#[test]
fn a_resumed_manifest_out_of_bounds_is_refused_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sampler(1, true), sampler(2, true));
    let out = dir.path().join("run");
    let first = coherence(
        &args(&a, &b, &out, &["--temperature", "0.7", "--samples", "2"]),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&first), 0, "{}", stderr(&first));
    let sent = chat_requests(&a).len();
    let path = out.join("distribution.json");
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cases: [(&str, Value, &str); 7] = [
        (
            "/sampling/samples",
            serde_json::json!(4_294_967_295u64),
            "`sampling.samples` is 4294967295",
        ),
        (
            "/sampling/samples",
            serde_json::json!(0),
            "`sampling.samples` is 0",
        ),
        (
            "/sampling/temperature",
            serde_json::json!(-1),
            "`sampling.temperature`",
        ),
        ("/sampling/top_p", serde_json::json!(5), "`sampling.top_p`"),
        (
            "/sampling/params",
            serde_json::json!({"repetition_penalty": 1.3}),
            "`repetition_penalty`",
        ),
        (
            "/permutations",
            serde_json::json!(4_000_000_000u64),
            "`permutations` is 4000000000",
        ),
        ("/alpha", serde_json::json!(2), "`alpha` is 2"),
    ];
    for (field, value, says) in cases {
        let mut bad = good.clone();
        *bad.pointer_mut(field).unwrap() = value;
        std::fs::write(&path, serde_json::to_vec_pretty(&bad).unwrap()).unwrap();
        let resumed = coherence(
            &[
                "distribution",
                "--resume",
                &out.display().to_string(),
                "--quiet",
            ],
            dir.path(),
            &[],
        );
        let err = stderr(&resumed);
        assert_eq!(exit_code(&resumed), 2, "{field}: {err}");
        assert!(
            err.contains("distribution.json: invalid distribution manifest") && err.contains(says),
            "{field}: {err}"
        );
    }
    assert_eq!(chat_requests(&a).len(), sent, "nothing is sent");
}

/// `--param` may not set what the run controls: the temperature (the refusal says what is
/// really sent, not temperature 0), the budget under its newer name, or a penalty.
#[test]
fn params_that_override_the_sampling_are_refused_saying_what_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sampler(1, true), sampler(2, true));
    let out = dir.path().join("run");
    for (param, says) in [
        (
            "temperature=0",
            "distribution sends the --temperature given",
        ),
        ("max_completion_tokens=5", "use --max-tokens"),
        ("frequency_penalty=1", "changes what is sampled"),
        ("presence_penalty=1", "changes what is sampled"),
        ("repetition_penalty=1.2", "changes what is sampled"),
    ] {
        let run = coherence(
            &args(&a, &b, &out, &["--temperature", "1", "--param", param]),
            dir.path(),
            &[],
        );
        let err = stderr(&run);
        assert_eq!(exit_code(&run), 2, "{param}: {err}");
        assert!(
            err.contains(&format!("--param `{param}`")) && err.contains(says),
            "{param}: {err}"
        );
        assert!(!err.contains("temperature 0"), "{param}: {err}");
    }
    assert!(chat_requests(&a).is_empty());
}

/// A fake answering 1 MB samples: the kernel compares each sample's first characters (counted
/// in results.json), so the statistics take moments, with their progress on stderr.
#[test]
fn megabyte_samples_are_cut_before_the_kernel_and_the_statistics_show_progress() {
    let _cpu = cpu_share();
    let dir = tempfile::tempdir().unwrap();
    let verbose = |seed: u64| {
        FakeServer::start("sampled-model", move |req: &Incoming| {
            let filler = "lorem ipsum dolor sit amet ".repeat(40_000);
            let word = WORDS[(req.call as usize + seed as usize) % WORDS.len()];
            Reply::content(&format!("{word} {filler} The answer is 3."))
        })
    };
    let (a, b) = (verbose(0), verbose(1));
    let out = dir.path().join("run");
    let mut flags = args(&a, &b, &out, &["--temperature", "1", "--samples", "2"]);
    flags.retain(|f| f != "--quiet");
    let started = std::time::Instant::now();
    let run = coherence(&flags, dir.path(), &[]);
    let took = started.elapsed();
    let err = stderr(&run);
    assert_eq!(exit_code(&run), 0, "{err}");
    assert!(took.as_secs() < 60, "took {took:?}");
    let d = &results(&out)["distribution"];
    assert_eq!(d["sample_chars"], 2000);
    // Every open prompt's sample (8 prompts, 2 samples, 2 endpoints) was cut.
    assert!(d["clipped_samples"].as_u64().unwrap() >= 32, "{d:#}");
    assert!(d["method_statement"]
        .as_str()
        .unwrap()
        .contains("first 2000 characters"));
    assert!(
        err.contains("statistics: 16 prompts, up to 2 samples a side, 1000 permutations")
            && err.contains("permutation 1000 of 1000"),
        "{err}"
    );
}

/// Samples past the 1 MiB one reply part may hold are journalled cut to it, saying so, and a
/// graded one reads as no answer without grading its megabytes: a distribution run of 4 MB
/// samples costs what its replies' first MiB costs.
#[test]
fn samples_past_the_reply_cap_are_kept_cut_and_graded_as_no_answer() {
    let _cpu = cpu_share();
    let dir = tempfile::tempdir().unwrap();
    let server = || {
        FakeServer::start("sampled-model", |req: &Incoming| {
            let filler = "lorem ipsum dolor sit amet ".repeat(60_000);
            let word = WORDS[req.call as usize % WORDS.len()];
            Reply::content(&format!("{word} {filler} The answer is 3."))
        })
    };
    let (a, b) = (server(), server());
    let out = dir.path().join("run");
    let run = coherence(
        &args(&a, &b, &out, &["--temperature", "1", "--samples", "2"]),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&run), 0, "{}", stderr(&run));
    let journal = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    for line in journal.lines() {
        assert!(
            line.len() < 2 * 1024 * 1024 + 100 * 1024,
            "{} bytes",
            line.len()
        );
        let rec: Value = serde_json::from_str(line).unwrap();
        assert_eq!(rec["error"]["kind"], "reply_too_long", "{}", &line[..300]);
        assert!(rec["content"].as_str().unwrap().len() <= 1024 * 1024);
        assert!(!rec["content"]
            .as_str()
            .unwrap()
            .contains("The answer is 3."));
    }
    let d = &results(&out)["distribution"];
    assert_eq!(d["clipped_samples"], 64, "{d:#}");
    assert_eq!(d["accuracy"][0]["correct"], 0, "{d:#}");
    assert_eq!(d["accuracy"][0]["graded"], 16, "{d:#}");
}

/// Samples × permutations beyond the statistics' work bound are refused before anything is
/// sent, saying the most permutations that fit.
#[test]
fn too_many_samples_times_permutations_are_refused_saying_what_fits() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sampler(1, true), sampler(2, true));
    let out = dir.path().join("run");
    let run = coherence(
        &args(
            &a,
            &b,
            &out,
            &[
                "--temperature",
                "1",
                "--samples",
                "1000",
                "--permutations",
                "100000",
            ],
        ),
        dir.path(),
        &[],
    );
    let err = stderr(&run);
    assert_eq!(exit_code(&run), 2, "{err}");
    assert!(
        err.contains("--permutations 100000 with --samples 1000")
            && err.contains("give --permutations at most 417"),
        "{err}"
    );
    assert!(chat_requests(&a).is_empty());
}

#[test]
fn the_manifest_records_the_command_line_with_the_key_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (sampler(1, true), sampler(2, true));
    let key = "sk-distribution-secret-1234";
    let flags = ["--temperature", "1", "--samples", "2"];
    // In a --param value the key would be sent in every body and kept: refused, naming the field.
    let param = format!("user={key}");
    let mut with_param = flags.to_vec();
    with_param.extend(["--param", param.as_str()]);
    let refused = coherence(
        &args(&a, &b, &dir.path().join("run"), &with_param),
        dir.path(),
        &[("OPENAI_API_KEY", key)],
    );
    assert_eq!(exit_code(&refused), 2, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--param user"),
        "{}",
        stderr(&refused)
    );
    assert!(!stderr(&refused).contains(key));
    // Anywhere else on the command line it is recorded redacted.
    let out = dir.path().join(format!("run-{key}"));
    let run = coherence(
        &args(&a, &b, &out, &flags),
        dir.path(),
        &[("OPENAI_API_KEY", key)],
    );
    assert_eq!(exit_code(&run), 0, "{}", stderr(&run));
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("distribution.json")).unwrap())
            .unwrap();
    let argv: Vec<&str> = m["invocations"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        argv.iter().any(|a| a.ends_with("run-[REDACTED]")),
        "{argv:?}"
    );
    assert!(argv.iter().all(|a| !a.contains(key)), "{argv:?}");
}

/// SIGTERM (as Ctrl-C) stops the sending; the manifest says the run was interrupted, and a
/// resume that sends the rest says it finished.
#[cfg(unix)]
#[test]
fn an_interrupted_run_says_so_in_its_manifest_and_a_resume_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let slow = |seed| {
        FakeServer::start("sampled-model", move |req: &Incoming| {
            sample(req, seed, true).after(std::time::Duration::from_millis(50))
        })
    };
    let (a, b) = (slow(1), slow(2));
    let out = dir.path().join("run");
    let journal = out.join("records.jsonl");
    let lines = || {
        std::fs::read_to_string(&journal)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };
    let (run, _) = sigterm_when(
        &args(&a, &b, &out, &["--temperature", "1", "--samples", "2"]),
        "the run sent nothing",
        || lines() >= 4,
    );
    assert_eq!(exit_code(&run), 3, "{}", stderr(&run));
    let m = manifest(&out);
    assert_eq!(m["status"], "interrupted", "{m:#}");
    assert!(lines() < 64, "stopped before the end: {} records", lines());
    let resumed = coherence(
        &[
            "distribution",
            "--resume",
            &out.display().to_string(),
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&resumed), 0, "{}", stderr(&resumed));
    let m = manifest(&out);
    assert_eq!(m["status"], "finished");
    assert_eq!(m["invocations"].as_array().unwrap().len(), 2);
}

#[test]
fn failed_requests_leave_the_run_incomplete_and_undecided() {
    let dir = tempfile::tempdir().unwrap();
    let a = sampler(1, true);
    let b = FakeServer::start("sampled-model", |req: &Incoming| {
        if req.question().starts_with("Name one fruit") {
            Reply::status(500, "down")
        } else {
            sample(req, 2, true)
        }
    });
    let out = dir.path().join("run");
    let run = coherence(
        &args(
            &a,
            &b,
            &out,
            &["--temperature", "1", "--samples", "3", "--retries", "0"],
        ),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&run), 3, "{}\n{}", stdout(&run), stderr(&run));
    let r = results(&out);
    assert_eq!(r["complete"], false);
    assert_eq!(
        r["summary"]["same_model"], "undecided",
        "{:#}",
        r["summary"]
    );
    let fruit = r["distribution"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "open_fruit")
        .unwrap();
    assert_eq!(fruit["samples"], serde_json::json!([3, 0]));
    assert!(fruit["p"].is_null());
    assert_eq!(r["distribution"]["prompts_tested"], 15);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Incomplete:"), "{md}");
}
