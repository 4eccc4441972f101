//! `--suite long` against fakes: the items listed with their planned length and depth, a fake
//! that loses the needle past a prompt length is found to part there (`same_model: no`), two
//! correct fakes read no difference, an item that would not fit is never sent, and a dry run
//! counts the ladder's prompt tokens.

use coherence_testkit::prompt_tokens;

use crate::common::*;

/// The needle's value, read from the request as a model would: the question names the key, the
/// haystack holds "The access code for KEY is VALUE.".
fn needle_answer(text: &str) -> Option<String> {
    let key = text
        .rsplit_once("what is the access code for ")?
        .1
        .split_once('?')?
        .0;
    let value = text
        .split_once(&format!("The access code for {key} is "))?
        .1
        .split_once('.')?
        .0;
    Some(value.to_string())
}

/// A fake that finds every needle while the request's prompt is shorter than `limit` tokens (as
/// the fake counts them, its `usage.prompt_tokens`), and answers a distractor's code past it.
fn needle_server(limit: u64) -> FakeServer {
    FakeServer::start("m", move |req| {
        let text = req.question();
        match needle_answer(&text) {
            Some(value) if prompt_tokens(&req.body) < limit => Reply::content(&value),
            Some(_) => Reply::content("I could not find that code."),
            None => Reply::status(404, "not a long item"),
        }
    })
}

fn long_run(
    dir: &std::path::Path,
    a: &FakeServer,
    b: &FakeServer,
    extra: &[&str],
) -> (std::process::Output, std::path::PathBuf) {
    let out = dir.join("run");
    let mut args: Vec<String> = vec!["compare".into(), "--suite".into(), "long".into()];
    for (name, server) in [("a", a), ("b", b)] {
        args.push("--endpoint".into());
        args.push(format!("{name}={}", server.url()));
    }
    args.extend(["--out".to_string(), out.display().to_string()]);
    args.extend(["--backoff-ms", "10", "--quiet"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    (coherence(&args, dir, &[]), out)
}

/// Two fakes that find every needle, compared with `extra` (space-separated flags): the folder,
/// both fakes, the output and the run folder.
fn correct_pair_run(
    extra: &str,
) -> (
    tempfile::TempDir,
    [FakeServer; 2],
    std::process::Output,
    std::path::PathBuf,
) {
    let dir = tempfile::tempdir().unwrap();
    let servers = [needle_server(u64::MAX), needle_server(u64::MAX)];
    let extra: Vec<&str> = extra.split(' ').collect();
    let (out, run) = long_run(dir.path(), &servers[0], &servers[1], &extra);
    (dir, servers, out, run)
}

#[test]
fn prompts_list_gives_each_long_item_with_its_length_and_depth() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(
        &[
            "prompts",
            "list",
            "--suite",
            "long",
            "--lengths",
            "256,512,1k",
            "--depths",
            "0,50",
            "--per-cell",
            "1",
            "--max-context",
            "800",
            "--json",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let prompts = list["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 4, "1k does not fit an 800-token context");
    let skipped = list["long"]["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].as_str().unwrap().contains("1024"), "{skipped:?}");
    for p in prompts {
        assert_eq!(p["suite"], "long");
        assert!([256, 512].contains(&p["context_tokens"].as_u64().unwrap()));
        assert!([0, 50].contains(&p["depth"].as_u64().unwrap()));
        let prompt = p["prompt"].as_str().unwrap();
        assert_eq!(needle_answer(prompt).as_deref(), p["reference"].as_str());
        assert_eq!(p["expected"], p["reference"]);
        assert_ne!(p["wrong"], p["reference"]);
    }
}

#[test]
fn a_deployment_that_loses_the_needle_past_a_length_is_found_to_part_there() {
    let dir = tempfile::tempdir().unwrap();
    let good = needle_server(u64::MAX);
    let bad = needle_server(700);
    let (out, run) = long_run(
        dir.path(),
        &good,
        &bad,
        &["--lengths", "256,512,1024", "--fail-on", "long_different>0"],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let r = results(&run);
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../src/report/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&r)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(r["summary"]["same_model"], "no");
    let because = r["summary"]["same_model_because"].to_string();
    assert!(because.contains("differ from 1024 tokens"), "{because}");
    assert_eq!(r["gate"]["failed"][0], "long_different>0");
    let long = &r["long_context"];
    let pair = &long["pairs"][0];
    assert_eq!(pair["different_from_tokens"], 1024);
    let first = pair["first_difference_tokens"].as_u64().unwrap();
    assert!((700..1100).contains(&first), "first difference at {first}");
    // The measured lengths are the server's own counts.
    let measured: Vec<u64> = records(&run)
        .iter()
        .filter_map(|rec| rec["usage"]["prompt_tokens"].as_u64())
        .collect();
    assert!(measured.contains(&first), "{first} not among {measured:?}");
    let buckets = pair["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 3);
    assert_eq!(buckets[2]["reference_only"], 10);
    assert_eq!(buckets[0]["reference_only"], 0);
    let bad_cells: Vec<_> = long["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["endpoint"] == "b")
        .collect();
    assert_eq!(bad_cells.len(), 15);
    for c in bad_cells {
        let expected = if c["context_tokens"] == 1024 { 0 } else { 2 };
        assert_eq!(c["correct"], expected, "{c}");
        assert_eq!(c["items"], 2);
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("Long context"), "{report}");

    // Re-scored from the files alone, the long items are made again identically.
    let out = coherence(&["score", run.to_str().unwrap()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    assert_eq!(results(&run)["long_context"], r["long_context"]);
}

#[test]
fn two_correct_deployments_read_no_difference_up_to_the_longest_prompt() {
    let (_dir, _servers, out, run) =
        correct_pair_run("--lengths 256,512 --fail-on long_different>0");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    let pair = &r["long_context"]["pairs"][0];
    assert!(pair["first_difference_tokens"].is_null());
    assert!(pair["different_from_tokens"].is_null());
    let statement = pair["statement"].as_str().unwrap();
    assert!(
        statement.starts_with("no difference up to 5"),
        "{statement}"
    );
    assert_ne!(r["summary"]["same_model"], "no");
}

#[test]
fn an_item_that_would_not_fit_the_context_is_skipped_with_a_note_and_never_sent() {
    let (_dir, servers, out, run) =
        correct_pair_run("--lengths 256,1k --depths 50 --max-context 600");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    for server in &servers {
        let longest = server
            .completion_requests()
            .iter()
            .map(|r| prompt_tokens(&r.body))
            .max()
            .unwrap();
        assert!(longest < 400, "a request of {longest} tokens was sent");
    }
    let r = results(&run);
    assert_eq!(r["prompts"].as_array().unwrap().len(), 2);
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("long items of 1024 tokens skipped"),
        "{warnings}"
    );
}

#[test]
fn a_dry_run_counts_the_prompt_tokens_of_the_ladder_and_their_prefill_time() {
    let (_dir, [a, b], out, _) = correct_pair_run(
        "--lengths 256,1k --dry-run --json --assume-prefill-tps 100 --concurrency 4",
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Per endpoint: 5 depths × 2 items at 256 and at 1024 planned tokens.
    let per_endpoint = plan["endpoints"][1]["prompt_tokens"].as_u64().unwrap();
    assert!(
        per_endpoint.abs_diff(10 * 1280) < 10 * 1280 / 20,
        "{per_endpoint}"
    );
    // The reference answers each of the 20 items once more: the A-vs-A control.
    assert_eq!(plan["control"]["prompts"], 20);
    let reference = plan["endpoints"][0]["prompt_tokens"].as_u64().unwrap();
    assert_eq!(reference, 2 * per_endpoint);
    assert_eq!(plan["prompt_tokens"].as_u64().unwrap(), 3 * per_endpoint);
    let seconds = plan["estimated_prefill_seconds"].as_f64().unwrap();
    assert_eq!(seconds, (reference as f64 / 100.0 / 4.0).ceil());
    assert!(a.completion_requests().is_empty() && b.requests().is_empty());
}

/// A flag above the bound the ladder plans for is a usage error naming it, before anything is
/// built: even a dry run or a listing once made every item's text up front and aborted.
#[test]
fn a_context_above_the_bound_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let huge = "18446744073709551615";
    let listed = coherence(
        &["prompts", "list", "--suite", "long", "--max-context", huge],
        dir.path(),
        &[],
    );
    let dry = coherence(
        &[
            "compare",
            "--suite",
            "long",
            "--endpoint",
            "a=http://127.0.0.1:9/v1",
            "--endpoint",
            "b=http://127.0.0.1:9/v1",
            "--max-context",
            huge,
            "--dry-run",
        ],
        dir.path(),
        &[],
    );
    for out in [listed, dry] {
        let err = stderr(&out);
        assert_eq!(exit_code(&out), 2, "{err}");
        assert!(
            err.contains("--max-context") && err.contains("1048576"),
            "{err}"
        );
    }
}

/// A server reporting an absurd window does not abort the run: the ladder stops at the bound,
/// with a warning naming the endpoint, and no request is longer than the bound.
#[test]
fn a_server_reporting_a_huge_context_gets_the_ladder_clamped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let server = || {
        FakeServer::start_with_context("m", i64::MAX as u64, |req| {
            match needle_answer(&req.question()) {
                Some(value) => Reply::content(&value),
                None => Reply::status(404, "not a long item"),
            }
        })
    };
    let (a, b) = (server(), server());
    let (out, run) = long_run(dir.path(), &a, &b, &["--depths", "50", "--per-cell", "1"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let warnings = results(&run)["warnings"].to_string();
    assert!(
        warnings.contains(
            "endpoint `a` reports a context window (max_model_len) of 9223372036854775807 tokens"
        ) && warnings.contains("at most 1048576"),
        "{warnings}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    let long = &manifest["catalogue"]["long"];
    assert_eq!(long["context"], 1_048_576, "{long}");
    assert_eq!(long["lengths"].as_array().unwrap().last().unwrap(), 917_504);
    let longest = a
        .completion_requests()
        .iter()
        .map(|r| prompt_tokens(&r.body))
        .max()
        .unwrap();
    assert!(
        longest <= 1_048_576,
        "a request of {longest} tokens was sent"
    );
}

/// A ladder of which nothing fits says so, with the window, whose it is and which `--lengths`
/// would fit, instead of "the catalogue holds no prompt".
#[test]
fn a_ladder_that_does_not_fit_says_which_lengths_would() {
    let (_dir, servers, out, _) = correct_pair_run("--lengths 1k,2k --max-context 600");
    let err = stderr(&out);
    assert_eq!(exit_code(&out), 2, "{err}");
    assert!(
        err.contains("every ladder length (1024, 2048) exceeds the context window of 600 tokens")
            && err.contains("--lengths of at most 552 tokens"),
        "{err}"
    );
    assert!(servers[0].completion_requests().is_empty());
    let (_dir, _servers, out, _) = correct_pair_run("--lengths 8k");
    let err = stderr(&out);
    assert_eq!(exit_code(&out), 2, "{err}");
    assert!(
        err.contains("4096 tokens that endpoint `a` reports (max_model_len)")
            && err.contains("at most 4048 tokens"),
        "{err}"
    );
}

/// The long suite's flags without the long suite are a usage error naming the flag, not
/// silently ignored.
#[test]
fn long_suite_flags_without_the_long_suite_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for flag in [["--lengths", "1k"], ["--depths", "50"], ["--per-cell", "3"]] {
        let out = coherence(
            &["prompts", "list", "--suite", "core", flag[0], flag[1]],
            dir.path(),
            &[],
        );
        let err = stderr(&out);
        assert_eq!(exit_code(&out), 2, "{err}");
        assert!(
            err.contains(&format!("{} shapes the long suite", flag[0]))
                && err.contains("add --suite long"),
            "{err}"
        );
    }
    let server = needle_server(u64::MAX);
    let out = coherence(
        &[
            "compare",
            "--endpoint",
            &format!("a={}", server.url()),
            "--endpoint",
            &format!("b={}", server.url()),
            "--suite",
            "core",
            "--lengths",
            "1k",
            "--dry-run",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--lengths shapes the long suite"));
}
