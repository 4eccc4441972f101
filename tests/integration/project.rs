//! `coherence project`: the shipped Breakout task against fixture artifacts (one complete game,
//! one per class of bug the field report found), run only inside the sandboxed worker; and the
//! command end to end against fake endpoints.

use std::path::{Path, PathBuf};

use coherence::project::{evaluate, load_task, Evaluation, RequirementStatus, Task};

fn task() -> Task {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/projects");
    load_task(&dir, "breakout").expect("the shipped task loads")
}

fn worker() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_coherence"))
}

fn complete() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/project/breakout_complete.html"),
    )
    .unwrap()
}

fn fenced(page: &str) -> String {
    format!("Here is the game.\n\n```html\n{page}\n```\n")
}

fn run(page: &str) -> Evaluation {
    let _cpu = crate::common::cpu_share();
    evaluate(&task(), &fenced(page), &worker()).expect("the sandbox starts")
}

fn verdict(e: &Evaluation, id: &str) -> (RequirementStatus, String) {
    let c = e.checks.iter().find(|c| c.id == id).expect(id);
    (c.verdict, c.detail.clone())
}

#[test]
fn the_complete_game_meets_every_requirement() {
    let e = run(&complete());
    let unmet: Vec<String> = e
        .checks
        .iter()
        .filter(|c| c.verdict != RequirementStatus::Met)
        .map(|c| format!("{} {:?}: {}", c.id, c.verdict, c.detail))
        .collect();
    eprintln!("{:#?}", e.scenarios);
    assert!(unmet.is_empty(), "{unmet:#?}");
    assert!(e.playable, "{:?}", e.unplayable_because);
    assert_eq!(e.runtime_error, None);
}

/// The complete game with one bug put in: `from` must occur in it.
fn with_bug(from: &str, to: &str) -> String {
    let page = complete();
    assert!(page.contains(from), "the fixture no longer holds {from:?}");
    page.replacen(from, to, 1)
}

#[test]
fn an_uncalled_init_audio_is_dead_code_and_silence() {
    let page = with_bug(
        "    initAudio();\n    if (state === 'ready')",
        "    if (state === 'ready')",
    )
    .replacen("    initAudio();\n    var action", "    var action", 1);
    let e = run(&page);
    assert_eq!(e.dead_functions, vec!["initAudio".to_string()]);
    assert_eq!(
        verdict(&e, "R41").0,
        RequirementStatus::Partial,
        "{:?}",
        verdict(&e, "R41")
    );
    assert_eq!(verdict(&e, "R36").0, RequirementStatus::Missing);
    assert_eq!(verdict(&e, "R37").0, RequirementStatus::Missing);
    assert!(
        e.playable,
        "silent but playable: {:?}",
        e.unplayable_because
    );
}

#[test]
fn draw_particles_without_its_context_crashes_render() {
    let e = run(&with_bug("drawParticles(ctx);", "drawParticles();"));
    let error = e.runtime_error.clone().expect("a runtime error");
    assert!(error.starts_with("TypeError"), "{error}");
    assert!(error.contains("animation frame"), "{error}");
    assert!(!e.playable);
    assert_eq!(verdict(&e, "R42").0, RequirementStatus::Missing);
}

#[test]
fn a_miss_that_soft_locks_is_found() {
    let e = run(&with_bug(
        "    } else {\n      setState('ready');\n    }\n    resetBall();",
        "    }\n    resetBall();",
    ));
    let (v, detail) = verdict(&e, "R25");
    assert_eq!(v, RequirementStatus::Missing, "{detail}");
    assert!(detail.contains("soft-lock"), "{detail}");
    assert!(!e.playable);
    assert!(e.unplayable_because.unwrap().starts_with("miss_relaunch"));
}

#[test]
fn an_unreachable_win_is_found() {
    let e = run(&with_bug(
        "if (bricks.every(function (b) { return !b.alive; })) clearLevel();",
        "if (bricks.length === 0) clearLevel();",
    ));
    let (v, detail) = verdict(&e, "R27");
    assert_eq!(v, RequirementStatus::Missing, "{detail}");
    assert!(detail.contains("the win is unreachable"), "{detail}");
}

#[test]
fn an_unguarded_set_item_throws_in_private_mode() {
    let e = run(&with_bug(
        "    try {\n      window.localStorage.setItem(HIGH_SCORE_KEY, String(value));\n    } catch (e) {\n      // Private mode or a full quota: the high score lives for this session only.\n    }",
        "    window.localStorage.setItem(HIGH_SCORE_KEY, String(value));",
    ));
    let (v, detail) = verdict(&e, "R39");
    assert_ne!(v, RequirementStatus::Met, "{detail}");
    assert!(detail.contains("1 uncaught errors"), "{detail}");
    assert_eq!(verdict(&e, "R42").0, RequirementStatus::Partial);
    let error = e
        .runtime_error
        .clone()
        .expect("the private-mode throw is reported");
    assert!(
        error.contains("QuotaExceededError") && error.contains("private_mode"),
        "{error}"
    );
    assert!(e.playable, "playable outside private mode");
}

#[test]
fn two_bricks_in_one_frame_tunnel_when_each_reflects() {
    let e = run(&with_bug(
        "      if (fromSide) ball.vx = -ball.vx; else ball.vy = -ball.vy;",
        "      for (var k = 0; k < hit.length; k++) ball.vy = -ball.vy; void fromSide;",
    ));
    let (v, detail) = verdict(&e, "R23");
    assert_eq!(v, RequirementStatus::Missing, "{detail}");
    assert!(detail.contains("tunnelled"), "{detail}");
}

#[test]
fn hostile_artifacts_stay_in_the_sandbox() {
    let hang = run("<!DOCTYPE html><canvas id=\"game\"></canvas><script>while (true) {}</script>");
    assert!(!hang.playable);
    let none = evaluate(&task(), "I will not write that.", &worker()).unwrap();
    assert!(!none.playable);
    assert_eq!(none.requirements.met, 0);
    assert_eq!(
        none.unplayable_because.as_deref(),
        Some("no script found in the answer")
    );
}

mod command {
    use super::*;
    use crate::common::{coherence, exit_code, FakeServer, Reply};
    use serde_json::Value;

    fn projects() -> String {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("prompts/projects")
            .display()
            .to_string()
    }

    fn project(dir: &Path, args: &[String]) -> std::process::Output {
        let mut all: Vec<String> = [
            "project",
            "--projects",
            &projects(),
            "--quiet",
            "--retries",
            "0",
            "--backoff-ms",
            "10",
        ]
        .map(String::from)
        .to_vec();
        all.extend(args.iter().cloned());
        let _cpu = crate::common::cpu_share();
        coherence(&all, dir, &[])
    }

    fn read(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// A time the settings wrote.
    fn time(v: &Value) -> chrono::DateTime<chrono::Utc> {
        v.as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("not a time: {v}"))
    }

    #[test]
    fn two_endpoints_side_by_side_with_the_results_contract() {
        let good_page = fenced(&complete());
        let good = FakeServer::start("m", move |_| Reply::content(&good_page));
        let broken_page =
            fenced(&complete().replacen("drawParticles(ctx);", "drawParticles();", 1));
        let broken = FakeServer::start("m", move |_| Reply::content(&broken_page));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let o = project(
            dir.path(),
            &[
                "--endpoint".into(),
                format!("full={}", broken.url()),
                "--endpoint".into(),
                format!("spark={}", good.url()),
                "--out".into(),
                out.display().to_string(),
            ],
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            exit_code(&o),
            1,
            "an unplayable answer fails the gate: {stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(stdout.contains("spark breakout: 44 met"), "{stdout}");
        let results = read(&out.join("results.json"));
        let task = &results["tasks"][0];
        assert_eq!(task["id"], "breakout");
        assert!(task["spec_words"].as_u64().unwrap() >= 1500);
        let spark = &task["answers"]["spark"];
        let full = &task["answers"]["full"];
        for a in [spark, full] {
            for k in ["met", "partial", "missing", "total"] {
                assert!(a["requirements"][k].is_u64(), "{k}: {a}");
            }
            assert!(a["elapsed_s"].is_f64());
            assert!(a["completion_tokens"].is_u64());
            assert!(a["playable"].is_boolean());
        }
        assert_eq!(spark["playable"], true);
        assert_eq!(spark["runtime_error"], Value::Null);
        assert_eq!(spark["requirements"]["met"], 44);
        assert_eq!(full["playable"], false);
        assert!(
            full["runtime_error"]
                .as_str()
                .unwrap()
                .starts_with("TypeError"),
            "{full}"
        );
        let report = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(
            report.contains("| playable | no: uncaught error: TypeError"),
            "{report}"
        );
        assert!(
            report.contains("| R23 | Two bricks in one frame reflect once |"),
            "{report}"
        );
        let body = &good.completion_requests()[0].body;
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["stream"], false);
        assert!(body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("#7df9ff"));
    }

    #[test]
    fn a_failed_answer_is_resent_on_resume_and_nothing_else() {
        let good_page = fenced(&complete());
        let good = FakeServer::start("m", move |_| Reply::content(&good_page));
        let flaky = FakeServer::start("m", |_| Reply::status(500, "overloaded"));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let o = project(
            dir.path(),
            &[
                "--endpoint".into(),
                format!("a={}", good.url()),
                "--endpoint".into(),
                format!("b={}", flaky.url()),
                "--out".into(),
                out.display().to_string(),
            ],
        );
        assert_eq!(exit_code(&o), 3, "{}", String::from_utf8_lossy(&o.stderr));
        let results = read(&out.join("results.json"));
        assert_eq!(results["complete"], false);
        assert_eq!(results["tasks"][0]["answers"]["a"]["playable"], true);
        // Every request was sent (one failed): the run finished, as compare's would.
        let started = read(&out.join("project.json"));
        assert_eq!(started["status"], "finished", "{started:#}");
        assert!(started["created_at"].is_string());
        assert!(time(&started["updated_at"]) >= time(&started["created_at"]));
        assert_eq!(started["invocations"].as_array().unwrap().len(), 1);
        assert_eq!(started["invocations"][0]["at"], started["created_at"]);
        assert_eq!(started["invocations"][0]["args"][1], "project");
        let fixed_page = fenced(&complete());
        let fixed = FakeServer::start("m", move |_| Reply::content(&fixed_page));
        let o = project(
            dir.path(),
            &[
                "--resume".into(),
                out.display().to_string(),
                "--endpoint".into(),
                format!("a={}", good.url()),
                "--endpoint".into(),
                format!("b={}", fixed.url()),
            ],
        );
        assert_eq!(exit_code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            good.completion_requests().len(),
            1,
            "a's answer was journalled, not re-sent"
        );
        assert_eq!(fixed.completion_requests().len(), 1);
        let lines = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), 3);
        assert_eq!(read(&out.join("results.json"))["complete"], true);
        let resumed = read(&out.join("project.json"));
        assert_eq!(resumed["created_at"], started["created_at"]);
        assert_eq!(resumed["status"], "finished");
        let invocations = resumed["invocations"].as_array().unwrap();
        assert_eq!(invocations.len(), 2);
        assert_eq!(invocations[0], started["invocations"][0]);
        assert!(invocations[1]["args"]
            .as_array()
            .unwrap()
            .contains(&"--resume".into()));
        assert!(time(&invocations[1]["at"]) >= time(&started["updated_at"]));
    }

    #[test]
    fn a_broken_task_file_is_a_usage_error_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("projects/bad");
        std::fs::create_dir_all(&task).unwrap();
        std::fs::write(task.join("spec.md"), "spec").unwrap();
        std::fs::write(task.join("playthrough.js"), "").unwrap();
        std::fs::write(task.join("task.toml"), "id = \"bad\"\ntitle = \"t\"\n[[scenario]]\nname = \"main\"\n[[requirement]]\nid = \"R1\"\ntitle = \"x\"\nhow = \"y\"\nstatic = { all = ['('] }\n").unwrap();
        let server = FakeServer::start("m", |_| Reply::content("x"));
        let o = coherence(
            &[
                "project".to_string(),
                "--projects".into(),
                dir.path().join("projects").display().to_string(),
                "--endpoint".into(),
                format!("a={}", server.url()),
            ],
            dir.path(),
            &[],
        );
        assert_eq!(exit_code(&o), 2);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("task.toml:5: requirement `R1`: invalid pattern"),
            "{err}"
        );
        assert!(server.completion_requests().is_empty());
    }
}
