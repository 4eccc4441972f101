//! A binary that stands alone: the built-in catalogue and suites, `prompts export`,
//! `compare --dry-run`, named deployments in `coherence.toml`, completions and `--json`.

use crate::common::*;

#[test]
fn prompts_check_passes_from_a_folder_without_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(&["prompts", "check"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("ok: 100 prompts in (built-in)/prompts"),
        "{text}"
    );
}

#[test]
fn export_round_trips_with_the_same_hash() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(&["prompts", "export", "cat"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let exported = coherence::catalogue::load_catalogue(&dir.path().join("cat/prompts")).unwrap();
    let shipped = coherence::catalogue::load_catalogue(&shipped_dir()).unwrap();
    assert_eq!(exported.hash, shipped.hash);
    assert_eq!(exported.prompts.len(), shipped.prompts.len());
    assert!(dir
        .path()
        .join("cat/prompts/logprobs/corpus.toml")
        .is_file());
    assert!(dir.path().join("cat/scorers/code_generation").is_dir());
    // The exported suites are found beside the exported catalogue.
    let check = coherence(
        &["prompts", "check", "--catalogue", "cat/prompts"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&check), 0, "{}", stderr(&check));
    // A non-empty folder is refused unless --force.
    let again = coherence(&["prompts", "export", "cat"], dir.path(), &[]);
    assert_eq!(exit_code(&again), 2);
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    let forced = coherence(&["prompts", "export", "cat", "--force"], dir.path(), &[]);
    assert_eq!(exit_code(&forced), 0, "{}", stderr(&forced));
}

#[test]
fn version_names_the_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(&["--version"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0);
    let shipped = coherence::catalogue::load_catalogue(&shipped_dir()).unwrap();
    assert!(
        stdout(&out).contains(&format!("(catalogue {})", &shipped.hash[..12])),
        "{}",
        stdout(&out)
    );
}

/// A `coherence.toml` naming `a` and `b`.
fn write_config(dir: &std::path::Path, a: &str, b: &str) {
    std::fs::write(
        dir.join("coherence.toml"),
        format!(
            "[endpoint.a]\nurl = \"{a}\"\nmodel = \"model-a\"\nconcurrency = 3\n\n\
             [endpoint.b]\nurl = \"{b}\"\napi_key_env = \"B_KEY\"\nconcurrency = 2\n"
        ),
    )
    .unwrap();
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

#[test]
fn dry_run_sends_nothing_and_counts_the_requests() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let b = correct_server();
    let catalogue = write_catalogue(dir.path());
    let mut args = compare_args(&catalogue, &[("a", &a), ("b", &b)], &dir.path().join("run"));
    args.extend(["--dry-run", "--repeats", "2"].map(String::from));
    let out = coherence(&args, dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let prompts = coherence::catalogue::load_catalogue(&catalogue)
        .unwrap()
        .prompts
        .len();
    assert!(
        text.lines()
            .any(|l| l == format!("{} requests", prompts * 2 * 2)),
        "{text}"
    );
    assert!(
        text.contains("token ceiling") && text.contains("estimated time"),
        "{text}"
    );
    assert!(a.requests().is_empty() && b.requests().is_empty());
    assert!(!dir.path().join("run").exists());
}

#[test]
fn dry_run_on_resume_lists_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let b = FakeServer::start("m", |req| match req.question().as_str() {
        EGGS_Q => Reply::status(400, "no"),
        q => Reply::content(correct_answer(q)),
    });
    let (_, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &["--retries", "0"]);
    let sent = a.requests().len() + b.requests().len();
    let out = resume(dir.path(), &run, &["--dry-run", "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let plan = json_of(&out);
    assert_eq!(plan["requests"], 1, "{plan}");
    assert_eq!(plan["resume"]["missing"][0]["prompt"], "eggs", "{plan}");
    assert_eq!(plan["resume"]["missing"][0]["endpoint"], "b", "{plan}");
    assert_eq!(a.requests().len() + b.requests().len(), sent);
}

#[test]
fn config_names_resolve_and_flags_override_them() {
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path(), "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v2");
    let plan = |extra: &[&str]| {
        let mut args = vec!["compare", "a", "b", "--dry-run", "--json"];
        args.extend(extra);
        let out = coherence(&args, dir.path(), &[("B_KEY", "sk-test")]);
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        json_of(&out)
    };
    let p = plan(&[]);
    assert_eq!(p["endpoints"][0]["name"], "a");
    assert_eq!(p["endpoints"][0]["base_url"], "http://127.0.0.1:9/v1");
    assert_eq!(p["endpoints"][0]["model"], "model-a");
    assert_eq!(p["endpoints"][1]["base_url"], "http://127.0.0.1:9/v2");
    assert_eq!(p["concurrency"], 2, "the smallest of the file's");
    assert_eq!(p["catalogue"]["dir"], "(built-in)/prompts");
    let p = plan(&[
        "--endpoint",
        "b=http://127.0.0.1:9/v3",
        "--model",
        "a=other",
        "--concurrency",
        "5",
    ]);
    assert_eq!(p["endpoints"][1]["base_url"], "http://127.0.0.1:9/v3");
    assert_eq!(p["endpoints"][0]["model"], "other");
    assert_eq!(p["concurrency"], 5);
    // The key variable comes from the file and must be set.
    let out = coherence(&["compare", "a", "b", "--dry-run"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("B_KEY"), "{}", stderr(&out));
    // An unknown name lists the known ones.
    let out = coherence(&["compare", "a", "c", "--dry-run"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("it names: a, b"), "{}", stderr(&out));
}

#[test]
fn a_run_by_names_sends_to_the_file_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let b = correct_server();
    write_config(dir.path(), &a.url(), &b.url());
    let catalogue = write_catalogue(dir.path());
    let out = coherence(
        &[
            "compare",
            "a",
            "b",
            "--catalogue",
            &catalogue.display().to_string(),
            "--out",
            "run",
            "--quiet",
            "--json",
        ],
        dir.path(),
        &[("B_KEY", "sk-test")],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let results = json_of(&out);
    assert_eq!(results, crate::common::results(&dir.path().join("run")));
    let sent = a.completion_requests();
    assert!(!sent.is_empty());
    assert!(sent.iter().all(|r| r.body["model"] == "model-a"));
    assert!(b.completion_requests().iter().all(|r| r
        .header("authorization")
        .is_some_and(|h| h.ends_with("sk-test"))));
}

#[test]
fn a_bad_config_names_file_and_line_and_a_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.toml"),
        "[endpoint.a]\nurl = \"http://127.0.0.1:9/v1\"\nurl2 = 1\n",
    )
    .unwrap();
    let out = coherence(&["smoke", "a", "--config", "mine.toml"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("mine.toml:3:"), "{}", stderr(&out));
    std::fs::write(
        dir.path().join("coherence.toml"),
        "[endpoint.a]\nurl = \"http://127.0.0.1:9/v1\"\n\n[endpoint.b]\nurl = \"http://127.0.0.1:9/v1\"\napi_key = \"sk-secret\"\n",
    )
    .unwrap();
    let out = coherence(&["compare", "a", "b", "--dry-run"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("coherence.toml:6:") && err.contains("environment"),
        "{err}"
    );
    assert!(!err.contains("sk-secret"), "{err}");
}

#[test]
fn completions_print_a_script() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = coherence(&["completions", shell], dir.path(), &[]);
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        let script = stdout(&out);
        assert!(
            script.contains("coherence") && script.contains("dry-run"),
            "{shell}"
        );
    }
}

#[test]
fn json_is_the_machine_readable_output_of_list_and_score() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(&["prompts", "list", "--json"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let list = json_of(&out);
    assert_eq!(list["prompts"].as_array().unwrap().len(), 100);
    let a = correct_server();
    let b = correct_server();
    let (_, run) = compare(dir.path(), &[("a", &a), ("b", &b)], &[]);
    let out = coherence(
        &["score", &run.display().to_string(), "--json"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out), results(&run));
    let out = coherence(
        &["report", &run.display().to_string(), "--json"],
        dir.path(),
        &[],
    );
    assert_eq!(json_of(&out)["summary"], results(&run)["summary"]);
}

#[test]
fn a_server_that_cannot_be_reached_is_not_answered_with_name_the_model() {
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(
        &[
            "compare",
            "--endpoint",
            &format!("a=http://127.0.0.1:{port}/v1"),
            "--endpoint",
            &format!("b=http://127.0.0.1:{port}/v1"),
            "--suite",
            "core",
            "--retries",
            "0",
            "--out",
            &dir.path().join("run").display().to_string(),
        ],
        dir.path(),
        &[],
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "endpoint a is not reachable at http://127.0.0.1:{port}/v1"
        )),
        "{err}"
    );
    assert!(
        err.trim_end()
            .ends_with("start the server, or fix the URL (scheme, host, port, /v1)"),
        "{err}"
    );
    assert!(!err.contains("--model a=MODEL"), "{err}");
}

#[test]
fn each_help_lists_its_own_flags_and_the_other_commands_flags_are_refused_even_in_a_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let help = |command: &str| stdout(&coherence(&[command, "--help"], dir.path(), &[]));
    let compare = help("compare");
    for flag in [
        "--under-load <",
        "--cache-states ",
        "--samples <",
        "--filler-tokens <",
    ] {
        assert!(!compare.contains(flag), "compare --help lists {flag}");
    }
    assert!(compare.contains("--until-decided "));
    let determinism = help("determinism");
    for flag in ["--until-decided ", "--max-items <", "--round-items <"] {
        assert!(
            !determinism.contains(flag),
            "determinism --help lists {flag}"
        );
    }
    assert!(determinism.contains("--under-load <"));
    let out = coherence(
        &[
            "compare",
            "--endpoint",
            "a=http://127.0.0.1:9/v1",
            "--endpoint",
            "b=http://127.0.0.1:9/v1",
            "--samples",
            "3",
            "--dry-run",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    assert!(
        stderr(&out).contains("only for `coherence determinism`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compare_help_names_every_gate_metric_a_compare_measures() {
    use coherence::gate::Metric;
    let dir = tempfile::tempdir().unwrap();
    let help = stdout(&coherence(&["compare", "--help"], dir.path(), &[]));
    let distribution_only = [Metric::DistributionP, Metric::DistributionDifferent];
    for metric in Metric::ALL
        .iter()
        .filter(|m| !distribution_only.contains(m))
    {
        assert!(
            help.contains(metric.name()),
            "compare --help does not name --fail-on metric {}",
            metric.name()
        );
    }
}
