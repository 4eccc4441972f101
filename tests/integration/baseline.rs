//! Comparing against saved runs (issue 24): `coherence diff` of two saved runs and
//! `compare --baseline` reproduce the live comparison's verdicts; runs of another catalogue are
//! refused naming both hashes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

/// A fake that answers every question correctly except the letters one (4 instead of 3).
fn off_by_one_server() -> FakeServer {
    FakeServer::start("other-model", |req| match req.question().as_str() {
        LETTERS_Q => Reply::content("There are 4 r's."),
        q => Reply::content(correct_answer(q)),
    })
}

/// `determinism` of one endpoint, one repeat, into `dir/NAME`: a saved single-endpoint run.
fn single_run(dir: &Path, catalogue: &Path, name: &str, server: &FakeServer) -> PathBuf {
    let out = dir.join(name);
    let args: Vec<String> = [
        "determinism",
        "--catalogue",
        &catalogue.display().to_string(),
        "--endpoint",
        &format!("{name}={}", server.url()),
        "--repeats",
        "1",
        // The fakes answer by call count: no logprobs probe ahead of the run's own requests.
        "--no-logprobs",
        "--quiet",
        "--out",
        &out.display().to_string(),
    ]
    .map(String::from)
    .to_vec();
    let done = coherence(&args, dir, &[]);
    assert!(exit_code(&done) <= 1, "{}", stderr(&done));
    out
}

/// What the verdicts say, prompt by prompt and for quality, with the endpoint names left out.
fn verdicts(run: &Path) -> (Vec<(String, String)>, Vec<String>, Value) {
    let r = results(run);
    let prompts = r["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_string(),
                p["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let quality = r["quality"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["verdict"].as_str().unwrap().to_string())
        .collect();
    (prompts, quality, r["summary"]["same_model"].clone())
}

fn diff(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["diff".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    coherence(&args, dir, &[])
}

#[test]
fn diff_of_two_saved_single_endpoint_runs_gives_the_live_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), off_by_one_server());
    let (live_out, live) = compare(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert!(exit_code(&live_out) <= 1, "{}", stderr(&live_out));
    let catalogue = dir.path().join("prompts");
    let run_a = single_run(dir.path(), &catalogue, "a", &a);
    let run_b = single_run(dir.path(), &catalogue, "b", &b);
    let sent = (a.requests().len(), b.requests().len());

    let out = dir.path().join("diff");
    let done = diff(
        dir.path(),
        &[
            &run_a.display().to_string(),
            &run_b.display().to_string(),
            "--out",
            &out.display().to_string(),
        ],
    );
    assert_eq!(exit_code(&done), exit_code(&live_out), "{}", stderr(&done));
    assert_eq!(verdicts(&out), verdicts(&live));
    assert!(verdicts(&live).0.iter().any(|(_, v)| v == "diff"));
    assert_eq!(
        sent,
        (a.requests().len(), b.requests().len()),
        "diff sends nothing"
    );
    for file in [
        "manifest.json",
        "records.jsonl",
        "results.json",
        "report.md",
        "report.html",
    ] {
        assert!(out.join(file).exists(), "{file}");
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["endpoints"][1]["replayed_from"][0]["endpoint"],
        "b"
    );
    // `coherence score` of the diff folder gives the same verdicts again.
    let rescored = coherence(&["score", &out.display().to_string()], dir.path(), &[]);
    assert_eq!(
        exit_code(&rescored),
        exit_code(&live_out),
        "{}",
        stderr(&rescored)
    );
    assert_eq!(verdicts(&out), verdicts(&live));

    // Two endpoints of one run: chosen by name, and needed.
    let same = dir.path().join("same");
    let run = live.display().to_string();
    let ambiguous = diff(
        dir.path(),
        &[&run, &run, "--out", &same.display().to_string()],
    );
    assert_eq!(exit_code(&ambiguous), 2);
    assert!(
        stderr(&ambiguous).contains("--a NAME"),
        "{}",
        stderr(&ambiguous)
    );
    let chosen = diff(
        dir.path(),
        &[
            &run,
            &run,
            "--a",
            "a",
            "--b",
            "b",
            "--out",
            &same.display().to_string(),
        ],
    );
    assert_eq!(
        exit_code(&chosen),
        exit_code(&live_out),
        "{}",
        stderr(&chosen)
    );
    assert_eq!(verdicts(&same), verdicts(&live));
}

#[test]
fn diff_refuses_runs_of_different_catalogues_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    let catalogue = write_catalogue(dir.path());
    let run_a = single_run(dir.path(), &catalogue, "a", &a);
    // The same catalogue with one prompt more: another hash.
    std::fs::write(
        catalogue.join("traps.toml"),
        "[[prompt]]\nid = \"extra\"\nuser = \"Say yes.\"\nreference = \"yes\"\nwrong = \"no\"\nscore = { type = \"exact\", expected = \"yes\" }\n",
    )
    .unwrap();
    let run_b = single_run(dir.path(), &catalogue, "b", &a);
    let hash = |run: &Path| {
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap())
                .unwrap();
        m["catalogue"]["hash"].as_str().unwrap().to_string()
    };
    let (ha, hb) = (hash(&run_a), hash(&run_b));
    assert_ne!(ha, hb);
    let (ra, rb) = (run_a.display().to_string(), run_b.display().to_string());
    let out = dir.path().join("diff");
    let refused = diff(dir.path(), &[&ra, &rb, "--out", &out.display().to_string()]);
    assert_eq!(exit_code(&refused), 2);
    let err = stderr(&refused);
    assert!(err.contains(&ha) && err.contains(&hb), "{err}");
    assert!(!out.join("manifest.json").exists());

    let allowed = diff(
        dir.path(),
        &[
            &ra,
            &rb,
            "--allow-catalogue-change",
            "--out",
            &out.display().to_string(),
        ],
    );
    assert_eq!(exit_code(&allowed), 0, "{}", stderr(&allowed));
    let r = results(&out);
    assert_eq!(
        r["prompts"].as_array().unwrap().len(),
        5,
        "the prompts both runs have"
    );
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("--allow-catalogue-change") && warnings.contains(&ha),
        "{warnings}"
    );
}

#[test]
fn compare_against_a_baseline_sends_only_the_new_endpoint_and_gives_the_live_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), off_by_one_server());
    let (live_out, live) = compare(dir.path(), &[("a", &a), ("b", &b)], &[]);
    assert!(exit_code(&live_out) <= 1, "{}", stderr(&live_out));
    let (sent_a, sent_b) = (a.completion_requests().len(), b.completion_requests().len());
    assert!(sent_b > 0);

    let out = dir.path().join("against-baseline");
    let baseline_args = |out: &Path, extra: &[&str]| {
        let mut args: Vec<String> = vec![
            "compare".into(),
            "--baseline".into(),
            live.display().to_string(),
            "--endpoint".into(),
            format!("b2={}", b.url()),
            "--quiet".into(),
            "--out".into(),
            out.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    // The plan counts only the new endpoint's requests.
    let planned = coherence(
        &baseline_args(&out, &["--dry-run", "--json"]),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&planned), 0, "{}", stderr(&planned));
    let planned: Value = serde_json::from_str(&stdout(&planned)).unwrap();
    assert_eq!(planned["endpoints"][0]["requests"], 0, "{planned}");
    assert_eq!(planned["requests"], sent_b, "{planned}");

    let done = coherence(&baseline_args(&out, &[]), dir.path(), &[]);
    assert_eq!(exit_code(&done), exit_code(&live_out), "{}", stderr(&done));
    assert_eq!(
        a.completion_requests().len(),
        sent_a,
        "the baseline's reference is not sent"
    );
    assert_eq!(
        b.completion_requests().len(),
        2 * sent_b,
        "only B's requests are sent"
    );
    assert_eq!(verdicts(&out), verdicts(&live));

    // Last week's deployment is gone: resuming the run still sends nothing to it.
    drop(a);
    let resumed = resume(dir.path(), &out, &[]);
    assert_eq!(
        exit_code(&resumed),
        exit_code(&live_out),
        "{}",
        stderr(&resumed)
    );
    assert_eq!(
        b.completion_requests().len(),
        2 * sent_b,
        "nothing was missing"
    );
    assert_eq!(verdicts(&out), verdicts(&live));

    // A baseline of another catalogue is refused with exit 2, naming both hashes.
    let other = dir.path().join("other");
    let catalogue = write_catalogue(&other);
    std::fs::write(
        catalogue.join("traps.toml"),
        "[[prompt]]\nid = \"extra\"\nuser = \"Say yes.\"\nreference = \"yes\"\nwrong = \"no\"\nscore = { type = \"exact\", expected = \"yes\" }\n",
    )
    .unwrap();
    let refused_out = dir.path().join("refused");
    let refused = coherence(
        &baseline_args(
            &refused_out,
            &["--catalogue", &catalogue.display().to_string()],
        ),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&refused), 2, "{}", stderr(&refused));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(live.join("manifest.json")).unwrap())
            .unwrap();
    let then = manifest["catalogue"]["hash"].as_str().unwrap();
    let err = stderr(&refused);
    let hashes: std::collections::BTreeSet<&str> = err
        .split(|c: char| !c.is_ascii_hexdigit())
        .filter(|w| w.len() == then.len())
        .collect();
    assert!(hashes.contains(then) && hashes.len() == 2, "{err}");
    assert_eq!(
        b.completion_requests().len(),
        2 * sent_b,
        "nothing sent when refused"
    );
}

#[test]
fn several_baselines_pool_their_repeats_so_an_answer_they_disagree_on_is_noise() {
    let dir = tempfile::tempdir().unwrap();
    // Last week's deployment answered the letters question 3 once and 4 once.
    let old = FakeServer::start("m", |req| match req.question().as_str() {
        LETTERS_Q if req.call > 0 => Reply::content("There are 4 r's."),
        q => Reply::content(correct_answer(q)),
    });
    let catalogue = write_catalogue(dir.path());
    let first = single_run(dir.path(), &catalogue, "ref", &old);
    let second_dir = dir.path().join("week2");
    std::fs::create_dir_all(&second_dir).unwrap();
    let second = single_run(&second_dir, &catalogue, "ref", &old);
    let new = off_by_one_server();
    let out = dir.path().join("pooled");
    let done = coherence(
        &[
            "compare",
            "--baseline",
            &first.display().to_string(),
            "--baseline",
            &second.display().to_string(),
            "--endpoint",
            &format!("new={}", new.url()),
            "--quiet",
            "--out",
            &out.display().to_string(),
        ],
        dir.path(),
        &[],
    );
    assert!(exit_code(&done) <= 1, "{}", stderr(&done));
    let r = results(&out);
    let letters = prompt(&r, "count_letters");
    assert_eq!(letters["answers"]["ref"]["repeats_planned"], 2, "{letters}");
    assert_eq!(letters["answers"]["new"]["repeats_planned"], 1, "{letters}");
    assert_eq!(
        letters["pairs"][0]["difference"], "sampler_noise",
        "{letters}"
    );
    assert_eq!(
        new.completion_requests().len(),
        5,
        "one repeat of each prompt"
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["endpoints"][0]["replayed_from"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// Whether `curl` can be run here.
fn has_curl() -> bool {
    std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn an_issue_report_carries_curl_commands_that_return_the_recorded_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (correct_server(), off_by_one_server());
    let run = dir.path().join("run");
    let mut args = compare_args(&write_catalogue(dir.path()), &[("a", &a), ("b", &b)], &run);
    args.push("--quiet".into());
    let live = coherence(
        &args,
        dir.path(),
        &[("OPENAI_API_KEY", "sk-never-in-a-file")],
    );
    assert!(exit_code(&live) <= 1, "{}", stderr(&live));
    let run_s = run.display().to_string();

    let out = coherence(
        &["report", &run_s, "--issue", "count_letters"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let md = stdout(&out);
    assert!(!md.contains("sk-never-in-a-file"));
    assert!(
        md.contains("$OPENAI_API_KEY") && md.contains("There are 4 r's."),
        "{md}"
    );
    let curls: Vec<&str> = md.lines().filter(|l| l.starts_with("curl ")).collect();
    assert_eq!(curls.len(), 2, "{md}");

    let all = coherence(
        &["report", &run_s, "--issue", "all-different"],
        dir.path(),
        &[],
    );
    assert!(stdout(&all).contains("count_letters"), "{}", stderr(&all));
    let unknown = coherence(&["report", &run_s, "--issue", "nope"], dir.path(), &[]);
    assert_eq!(exit_code(&unknown), 2);

    if !has_curl() {
        eprintln!("curl is not installed: the commands are not run");
        return;
    }
    let recorded = records(&run);
    for (curl, name) in curls.iter().zip(["a", "b"]) {
        let reply = std::process::Command::new("sh")
            .args(["-c", curl])
            .env("OPENAI_API_KEY", "sk-test")
            .output()
            .unwrap();
        let body: Value = serde_json::from_slice(&reply.stdout).unwrap();
        let want = records_for(&recorded, "count_letters", name)[0]["content"].clone();
        assert_eq!(
            body["choices"][0]["message"]["content"], want,
            "{name}: {curl}"
        );
    }
}

/// `report --issue` quotes each endpoint's tool calls with its answer (arguments sent as an
/// object said to be), clips a long answer with a marker, and stays under an issue's size
/// limit (65,536 characters on GitHub) however many prompts read `different`.
#[test]
fn an_issue_report_quotes_tool_calls_and_stays_under_an_issue_size() {
    let dir = tempfile::tempdir().unwrap();
    let a = correct_server();
    // Every answer: 20,000 characters of text and two calls, one with object arguments.
    let b = FakeServer::start("other-model", |req| {
        if req.is_raw_completion() {
            return Reply::content(correct_answer(&req.question()));
        }
        Reply::json(
            200,
            serde_json::json!({"choices": [{"message": {
                "content": "lorem ipsum ".repeat(1_700),
                "tool_calls": [
                    {"id": "c0", "type": "function",
                     "function": {"name": "lookup", "arguments": "{\"q\":\"r in strawberry\"}"}},
                    {"id": "c1", "type": "function",
                     "function": {"name": "count", "arguments": {"letter": "r"}}}]},
                "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 5, "completion_tokens": 5000, "total_tokens": 5005}}),
        )
    });
    let run = dir.path().join("run");
    let mut args = compare_args(&write_catalogue(dir.path()), &[("a", &a), ("b", &b)], &run);
    args.push("--quiet".into());
    let live = coherence(&args, dir.path(), &[]);
    assert!(exit_code(&live) <= 1, "{}", stderr(&live));
    let run_s = run.display().to_string();

    let one = coherence(
        &["report", &run_s, "--issue", "count_letters"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&one), 0, "{}", stderr(&one));
    let md = stdout(&one);
    assert!(
        md.contains("made 2 tool call(s)")
            && md.contains(r#"lookup({"q":"r in strawberry"})"#)
            && md.contains(
                r#"count({"letter":"r"})  (arguments sent as a JSON object, not a string)"#
            ),
        "{md}"
    );
    assert!(md.contains("[… clipped: "), "{md}");
    let all = coherence(
        &["report", &run_s, "--issue", "all-different"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&all), 0, "{}", stderr(&all));
    let md = stdout(&all);
    assert!(md.matches("made 2 tool call(s)").count() >= 2, "{md}");
    assert!(
        md.chars().count() < 65_536,
        "{} characters",
        md.chars().count()
    );
}

/// `diff` scores with RUN_A's catalogue as it is now: one changed since the runs is refused, as
/// `compare --baseline` refuses it, unless --allow-catalogue-change (then a warning says so).
#[test]
fn diff_refuses_a_catalogue_changed_since_the_runs_as_a_baseline_does() {
    let dir = tempfile::tempdir().unwrap();
    let server = correct_server();
    let catalogue = write_catalogue(dir.path());
    let run_a = single_run(dir.path(), &catalogue, "a", &server);
    let run_b = single_run(dir.path(), &catalogue, "b", &server);
    // The expected answer of a prompt both runs have changes afterwards.
    let eggs = catalogue.join("deterministic_math.toml");
    let text = std::fs::read_to_string(&eggs).unwrap().replace("18", "19");
    std::fs::write(&eggs, text).unwrap();
    let (ra, rb) = (run_a.display().to_string(), run_b.display().to_string());
    let out = dir.path().join("diff");
    let out_s = out.display().to_string();
    let refused = diff(dir.path(), &[&ra, &rb, "--out", &out_s]);
    assert_eq!(exit_code(&refused), 2, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("the catalogues differ")
            && stderr(&refused).contains("--allow-catalogue-change"),
        "{}",
        stderr(&refused)
    );
    let url = format!("new={}", server.url());
    let baseline = coherence(
        &[
            "compare",
            "--baseline",
            &ra,
            "--endpoint",
            &url,
            "--out",
            "b",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(
        exit_code(&baseline),
        2,
        "the baseline refuses it the same way"
    );

    let allowed = diff(
        dir.path(),
        &[&ra, &rb, "--allow-catalogue-change", "--out", &out_s],
    );
    assert!(exit_code(&allowed) <= 1, "{}", stderr(&allowed));
    assert!(
        results(&out)["warnings"]
            .to_string()
            .contains("--allow-catalogue-change"),
        "{}",
        results(&out)["warnings"]
    );
}

/// Keep only the records of `run` whose prompt is not in `drop` (a run that lost some answers).
fn drop_records(run: &Path, drop: &[&str]) {
    let path = run.join("records.jsonl");
    let kept: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            !drop.contains(&r["prompt"].as_str().unwrap())
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, kept.concat()).unwrap();
}

/// A baseline or diff whose saved run has no answer for some prompts (nothing can be sent to a
/// replayed endpoint) leaves them out with a warning naming how many, so the run completes; the
/// dry run says so; a saved run with no answer at all is refused.
#[test]
fn prompts_a_saved_run_has_no_answer_for_are_left_out_so_the_run_completes() {
    let dir = tempfile::tempdir().unwrap();
    let server = correct_server();
    let catalogue = write_catalogue(dir.path());
    let base = single_run(dir.path(), &catalogue, "a", &server);
    let other = single_run(dir.path(), &catalogue, "b", &server);
    drop_records(&base, &["eggs", "capital"]);
    let (base_s, other_s) = (base.display().to_string(), other.display().to_string());
    let url = format!("new={}", server.url());
    let against = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "compare",
            "--baseline",
            &base_s,
            "--endpoint",
            &url,
            "--quiet",
            "--out",
            out,
        ];
        args.extend(extra);
        coherence(&args, dir.path(), &[])
    };
    let said = "has no answer for 2 of the 5 prompts (`eggs`, `capital`)";

    let planned = against("planned", &["--dry-run"]);
    assert_eq!(exit_code(&planned), 0, "{}", stderr(&planned));
    let text = stdout(&planned);
    assert!(text.contains(said) && text.contains("3 prompts"), "{text}");

    let run = dir.path().join("against");
    let done = against(&run.display().to_string(), &[]);
    assert_eq!(exit_code(&done), 0, "{}", stderr(&done));
    let r = results(&run);
    assert_eq!(r["complete"], true);
    assert_eq!(r["prompts"].as_array().unwrap().len(), 3);
    assert!(
        r["warnings"].to_string().contains(said),
        "{}",
        r["warnings"]
    );
    // A resume finds nothing missing.
    let again = resume(dir.path(), &run, &[]);
    assert_eq!(exit_code(&again), 0, "{}", stderr(&again));

    let diffed = dir.path().join("diffed");
    let out = diff(
        dir.path(),
        &[&base_s, &other_s, "--out", &diffed.display().to_string()],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(results(&diffed)["complete"], true);
    assert_eq!(results(&diffed)["prompts"].as_array().unwrap().len(), 3);

    std::fs::write(base.join("records.jsonl"), "").unwrap();
    let refused = against("none", &[]);
    assert_eq!(exit_code(&refused), 2, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("has no answer for any of the 5 prompts"),
        "{}",
        stderr(&refused)
    );
}
