//! `coherence project`: the shipped Breakout task against fixture artifacts (one complete game,
//! one per class of bug the field report found), run only inside the sandboxed worker; and the
//! command end to end against fake endpoints.

use std::path::{Path, PathBuf};

use coherence::project::{evaluate, load_task, Evaluation, Task, Verdict};

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
    evaluate(&task(), &fenced(page), &worker()).expect("the sandbox starts")
}

fn verdict(e: &Evaluation, id: &str) -> (Verdict, String) {
    let c = e.checks.iter().find(|c| c.id == id).expect(id);
    (c.verdict, c.detail.clone())
}

#[test]
fn the_complete_game_meets_every_requirement() {
    let e = run(&complete());
    let unmet: Vec<String> = e
        .checks
        .iter()
        .filter(|c| c.verdict != Verdict::Met)
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
        Verdict::Partial,
        "{:?}",
        verdict(&e, "R41")
    );
    assert_eq!(verdict(&e, "R36").0, Verdict::Missing);
    assert_eq!(verdict(&e, "R37").0, Verdict::Missing);
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
    assert_eq!(verdict(&e, "R42").0, Verdict::Missing);
}

#[test]
fn a_miss_that_soft_locks_is_found() {
    let e = run(&with_bug(
        "    } else {\n      setState('ready');\n    }\n    resetBall();",
        "    }\n    resetBall();",
    ));
    let (v, detail) = verdict(&e, "R25");
    assert_eq!(v, Verdict::Missing, "{detail}");
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
    assert_eq!(v, Verdict::Missing, "{detail}");
    assert!(detail.contains("the win is unreachable"), "{detail}");
}

#[test]
fn an_unguarded_set_item_throws_in_private_mode() {
    let e = run(&with_bug(
        "    try {\n      window.localStorage.setItem(HIGH_SCORE_KEY, String(value));\n    } catch (e) {\n      // Private mode or a full quota: the high score lives for this session only.\n    }",
        "    window.localStorage.setItem(HIGH_SCORE_KEY, String(value));",
    ));
    let (v, detail) = verdict(&e, "R39");
    assert_ne!(v, Verdict::Met, "{detail}");
    assert!(detail.contains("1 uncaught errors"), "{detail}");
    assert_eq!(verdict(&e, "R42").0, Verdict::Partial);
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
    assert_eq!(v, Verdict::Missing, "{detail}");
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
