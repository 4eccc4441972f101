//! `coherence watch` as operators run it (issue 52): names from coherence.toml, a fleet checked
//! by `--all` in one process, baselines made by plain `determinism` carrying logprobs, a
//! warning for one that does not, and the metrics file read by Python's prometheus_client.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicU8;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common::*;
use crate::watch::{model_server, PERTURBED, SAME};

fn server(mode: u8) -> FakeServer {
    model_server(Arc::new(AtomicU8::new(mode)))
}

/// A baseline the natural way: `determinism --repeats 2` of `items` generated items, with no
/// logprobs flag (`extra` adds flags).
fn plain_baseline(dir: &Path, name: &str, server: &FakeServer, items: usize, extra: &[&str]) {
    let mut args = vec![
        "determinism".to_string(),
        "--repeats".into(),
        "2".into(),
        "--suite".into(),
        "generated".into(),
        "--items".into(),
        items.to_string(),
        "--endpoint".into(),
        format!("prod={}", server.url()),
        "--out".into(),
        name.into(),
        "--quiet".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = coherence(&args, dir, &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
}

fn manifest(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap()
}

/// The checks printed with `--json`, by watch name.
fn printed(out: &std::process::Output) -> BTreeMap<String, Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|c| (c["name"].as_str().unwrap().to_string(), c))
        .collect()
}

/// `coherence history --db DB --json`: every stored check.
fn history(dir: &Path, db: &Path) -> Vec<Value> {
    let out = coherence(
        &["history", "--db", db.to_str().unwrap(), "--json"],
        dir,
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// A coherence.toml of `(name, url, extra lines)` tables.
fn write_config(path: &Path, endpoints: &[(&str, String, &str)]) {
    let text: String = endpoints
        .iter()
        .map(|(name, url, extra)| format!("[endpoint.{name}]\nurl = \"{url}\"\n{extra}\n"))
        .collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_fleet_of_an_unchanged_prod_and_a_perturbed_canary_flags_the_canary_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (prod, canary) = (server(SAME), server(PERTURBED));
    plain_baseline(dir.path(), "base", &prod, 60, &[]);
    let sampling = &manifest(&dir.path().join("base"))["sampling"];
    assert_eq!(sampling["logprobs"], json!(true), "{sampling}");
    assert!(
        sampling["logprobs_note"]
            .as_str()
            .unwrap()
            .starts_with("requested:"),
        "{sampling}"
    );
    // The config in a folder of its own: `baseline` is relative to it.
    let ops = dir.path().join("ops");
    std::fs::create_dir(&ops).unwrap();
    write_config(
        &ops.join("coherence.toml"),
        &[
            ("prod", prod.url(), "baseline = \"../base\""),
            (
                "canary",
                canary.url(),
                "baseline = \"../base\"\nconcurrency = 3",
            ),
            ("unwatched", "http://127.0.0.1:9/v1".into(), ""),
        ],
    );
    let (prod_before, canary_before) = (
        prod.completion_requests().len(),
        canary.completion_requests().len(),
    );
    let out = coherence(
        &[
            "watch",
            "--all",
            "--config",
            "ops/coherence.toml",
            "--once",
            "--probe",
            "30",
            "--metrics-file",
            "m.prom",
            "--db",
            "history.sqlite",
            "--json",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 1, "the worst check's: {}", stderr(&out));
    assert!(
        !stderr(&out).contains("no decode logprobs"),
        "{}",
        stderr(&out)
    );
    let checks = printed(&out);
    assert_eq!(
        checks.keys().collect::<Vec<_>>(),
        ["canary", "prod"],
        "{checks:?}"
    );
    assert_eq!(checks["prod"]["status"], json!("unchanged"));
    assert_eq!(checks["prod"]["endpoint"], json!(prod.url()));
    assert_eq!(checks["canary"]["status"], json!("flagged"));
    assert_eq!(checks["canary"]["identity"], json!("perturbed"));
    assert_eq!(checks["canary"]["endpoint"], json!(canary.url()));
    assert_eq!(prod.completion_requests().len() - prod_before, 30);
    assert_eq!(canary.completion_requests().len() - canary_before, 30);

    let stored = history(dir.path(), &dir.path().join("history.sqlite"));
    let mut names: Vec<&str> = stored.iter().map(|c| c["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["canary", "prod"], "two checks stored");
    let page = dir.path().join("history.html");
    let out = coherence(
        &[
            "history",
            "--db",
            "history.sqlite",
            "--html",
            "history.html",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        html.contains("2 checks</strong> of 2 watches"),
        "the trend page shows both"
    );

    let Some(samples) = parsed_metrics(&dir.path().join("m.prom")) else {
        return;
    };
    let value = |family: &str, name: &str| {
        samples
            .iter()
            .find(|s| s.family == family && s.labels.get("name").map(String::as_str) == Some(name))
            .map(|s| s.value)
    };
    assert_eq!(value("coherence_watch_flagged", "canary"), Some(1.0));
    assert_eq!(value("coherence_watch_flagged", "prod"), Some(0.0));
    assert!(value("coherence_watch_identity_e_value", "canary").unwrap() >= 100.0);
    for family in [
        "coherence_watch_identity_e_value",
        "coherence_watch_substituted_share",
        "coherence_watch_substituted_share_lower",
        "coherence_watch_substituted_share_upper",
        "coherence_watch_quality_difference_points",
        "coherence_watch_last_check_timestamp_seconds",
    ] {
        for name in ["prod", "canary"] {
            assert!(value(family, name).is_some(), "{family}{{name={name}}}");
        }
    }
    let share = value("coherence_watch_substituted_share", "canary").unwrap();
    assert!(
        value("coherence_watch_substituted_share_lower", "canary").unwrap() <= share
            && share <= value("coherence_watch_substituted_share_upper", "canary").unwrap()
    );
    let at = value("coherence_watch_last_check_timestamp_seconds", "prod").unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!((now - at).abs() < 600.0, "{at} vs {now}");
    assert!(samples
        .iter()
        .all(|s| s.labels.contains_key("name") && !s.help.is_empty()));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("m.prom") && n != "m.prom")
        .collect();
    assert!(leftovers.is_empty(), "no temp file left: {leftovers:?}");
}

#[test]
fn watch_name_checks_the_config_files_endpoint_of_that_name() {
    let dir = tempfile::tempdir().unwrap();
    let (prod, canary) = (server(SAME), server(PERTURBED));
    plain_baseline(dir.path(), "base", &prod, 40, &[]);
    write_config(
        &dir.path().join("coherence.toml"),
        &[
            ("canary", canary.url(), ""),
            ("staged", canary.url(), "baseline = \"base\""),
        ],
    );
    let once = |args: &[&str]| {
        let mut all = vec!["watch"];
        all.extend_from_slice(args);
        all.extend([
            "--once", "--json", "--quiet", "--probe", "20", "--db", "h.sqlite",
        ]);
        let out = coherence(&all, dir.path(), &[]);
        let check: Value = serde_json::from_str(stdout(&out).lines().last().unwrap_or("null"))
            .unwrap_or(Value::Null);
        (exit_code(&out), check, stderr(&out))
    };
    let sent = |s: &FakeServer| s.completion_requests().len();
    let (prod_before, canary_before) = (sent(&prod), sent(&canary));
    let (code, check, err) = once(&["canary", "--baseline", "base"]);
    assert_eq!(code, 1, "{check} {err}");
    assert_eq!(check["endpoint"], json!(canary.url()), "{check}");
    assert_eq!(check["status"], json!("flagged"));
    assert_eq!(
        sent(&canary) - canary_before,
        20,
        "the probe went to canary"
    );
    assert_eq!(
        sent(&prod),
        prod_before,
        "nothing went to the baseline's URL"
    );

    // The flag overrides the file.
    let (code, check, err) = once(&["canary", "--baseline", "base", "--endpoint", &prod.url()]);
    assert_eq!(code, 0, "{check} {err}");
    assert_eq!(check["endpoint"], json!(prod.url()));
    // The file's baseline when the flag is absent.
    let (code, check, err) = once(&["staged"]);
    assert_eq!(code, 1, "{check} {err}");
    assert_eq!(check["endpoint"], json!(canary.url()));
    assert!(
        check["baseline"].as_str().unwrap().ends_with("base"),
        "{check}"
    );
    // A name the file does not define keeps today's meaning: the baseline's own URL.
    let (code, check, err) = once(&["nightly", "--baseline", "base"]);
    assert_eq!(code, 0, "{check} {err}");
    assert_eq!(check["endpoint"], json!(prod.url()));
    // A defined name without a baseline anywhere is a usage error that says where to give one.
    let (code, _, err) = once(&["canary"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--baseline") && err.contains("[endpoint.canary]"),
        "{err}"
    );
}

#[test]
fn a_baseline_without_logprobs_is_warned_about_with_the_command_that_remakes_it() {
    let dir = tempfile::tempdir().unwrap();
    let prod = server(SAME);
    plain_baseline(dir.path(), "textonly", &prod, 30, &["--no-logprobs"]);
    assert_eq!(
        manifest(&dir.path().join("textonly"))["sampling"]["logprobs"],
        json!(false)
    );
    let watch = |base: &str| {
        coherence(
            &[
                "watch",
                "prod",
                "--baseline",
                base,
                "--once",
                "--quiet",
                "--probe",
                "10",
                "--db",
                "h.sqlite",
            ],
            dir.path(),
            &[],
        )
    };
    let out = watch("textonly");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("has no decode logprobs"), "{err}");
    let command = err
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("coherence determinism"))
        .unwrap_or_else(|| panic!("no command in {err}"));
    assert!(
        command.contains("--logprobs") && !command.contains("--no-logprobs"),
        "{command}"
    );
    assert!(command.contains("--out textonly-logprobs"), "{command}");
    // The command does what the warning says.
    let words: Vec<&str> = command.split_whitespace().skip(1).collect();
    let made = coherence(&words, dir.path(), &[]);
    assert_eq!(exit_code(&made), 0, "{}", stderr(&made));
    assert_eq!(
        manifest(&dir.path().join("textonly-logprobs"))["sampling"]["logprobs"],
        json!(true)
    );
    let out = watch("textonly-logprobs");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("no decode logprobs"),
        "{}",
        stderr(&out)
    );

    // An endpoint that returns no logprobs, asked or not: nothing to warn about.
    let plain = FakeServer::start("m", |_| {
        Reply::json(
            200,
            json!({"choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "The answer is 1"}}],
                   "usage": {"prompt_tokens": 20, "completion_tokens": 4}}),
        )
    });
    let out = coherence(
        &[
            "watch",
            "prod",
            "--baseline",
            "textonly",
            "--endpoint",
            &plain.url(),
            "--once",
            "--quiet",
            "--probe",
            "10",
            "--db",
            "h.sqlite",
        ],
        dir.path(),
        &[],
    );
    assert!(
        !stderr(&out).contains("no decode logprobs"),
        "{}",
        stderr(&out)
    );
    assert!(
        !plain.completion_requests().is_empty(),
        "the probe asked it"
    );
}

#[test]
fn selftest_requests_logprobs_where_the_probe_finds_them_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let prod = server(SAME);
    let out = coherence(
        &[
            "selftest",
            "--endpoint",
            &format!("prod={}", prod.url()),
            "--suite",
            "generated",
            "--items",
            "10",
            "--out",
            "st",
            "--quiet",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let sampling = &manifest(&dir.path().join("st").join("negative"))["sampling"];
    assert_eq!(sampling["logprobs"], json!(true), "{sampling}");
}

#[test]
fn a_fleet_without_baselines_or_config_and_a_bad_metrics_path_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = coherence(args, dir.path(), &[]);
        (exit_code(&out), stderr(&out))
    };
    let (code, err) = run(&["watch", "--all", "--once"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--all") && err.contains("coherence.toml"),
        "{err}"
    );
    write_config(
        &dir.path().join("coherence.toml"),
        &[("a", "http://127.0.0.1:9/v1".into(), "")],
    );
    let (code, err) = run(&["watch", "--all", "--once"]);
    assert_eq!(code, 2);
    assert!(err.contains("names no endpoint with a baseline"), "{err}");
    write_config(
        &dir.path().join("coherence.toml"),
        &[(
            "a",
            "http://127.0.0.1:9/v1".into(),
            "baseline = \"missing\"",
        )],
    );
    let (code, err) = run(&["watch", "--all", "--once", "--db", "h.sqlite"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("watch a") && err.contains("missing"), "{err}");
    let (code, err) = run(&["watch", "--all", "--baseline", "x", "--once"]);
    assert_eq!(code, 2);
    assert!(err.contains("--baseline"), "{err}");
    let (code, err) = run(&["watch", "--once"]);
    assert_eq!(code, 2);
    assert!(err.contains("NAME"), "{err}");
    let (code, err) = run(&[
        "watch",
        "a",
        "--once",
        "--metrics-file",
        "no/such/folder/m.prom",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--metrics-file"), "{err}");
}

/// One sample as prometheus_client's parser read it.
#[derive(Debug)]
struct Sample {
    family: String,
    help: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of the metrics file at `path` as two independent parsers read it: Python's
/// `prometheus_client` (its Prometheus text parser and its strict OpenMetrics one, which must
/// agree). None, said on stderr, only where the package is absent and pip cannot fetch it.
fn parsed_metrics(path: &Path) -> Option<Vec<Sample>> {
    let site = prometheus_client()?;
    let script = r#"
import json, sys
sys.path.insert(0, sys.argv[2])
from prometheus_client.parser import text_string_to_metric_families as prometheus
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
text = open(sys.argv[1]).read()
def samples(parse):
    return sorted((f.name, f.type, f.documentation, s.name, json.dumps(s.labels, sort_keys=True), repr(s.value))
                  for f in parse(text) for s in f.samples)
a, b = samples(prometheus), samples(openmetrics)
assert a == b, (a, b)
print(json.dumps([{"family": f, "type": t, "help": h, "sample": n, "labels": json.loads(l), "value": v}
                  for f, t, h, n, l, v in a]))
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .arg(&site)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "prometheus_client refused {}: {}\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(path).unwrap_or_default()
    );
    let parsed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    Some(
        parsed
            .into_iter()
            .map(|s| {
                assert_eq!(s["type"], json!("gauge"), "{s}");
                assert_eq!(s["family"], s["sample"], "{s}");
                Sample {
                    family: s["family"].as_str().unwrap().into(),
                    help: s["help"].as_str().unwrap().into(),
                    labels: serde_json::from_value(s["labels"].clone()).unwrap(),
                    value: s["value"].as_str().unwrap().parse().unwrap(),
                }
            })
            .collect(),
    )
}

/// A folder to put on Python's path where `prometheus_client` can be imported: the interpreter's
/// own when it has it, else one `pip install --target` fills once under the target folder. None
/// (said on stderr) when pip cannot fetch it: no network.
fn prometheus_client() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("prometheus-client");
    let importable = |site: &Path| {
        Command::new("python3")
            .arg("-c")
            .arg("import sys; sys.path.insert(0, sys.argv[1]); import prometheus_client")
            .arg(site)
            .status()
            .is_ok_and(|s| s.success())
    };
    if importable(&dir) {
        return Some(dir);
    }
    let installed = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&dir)
        .arg("prometheus_client")
        .output();
    match installed {
        Ok(o) if o.status.success() && importable(&dir) => Some(dir),
        Ok(o) => {
            eprintln!(
                "SKIPPED the metrics parse: prometheus_client is not installed and pip could not fetch it (no network?): {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            None
        }
        Err(e) => {
            eprintln!("SKIPPED the metrics parse: python3 -m pip did not run: {e}");
            None
        }
    }
}
