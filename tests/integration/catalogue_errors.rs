//! A broken catalogue exits 2 with an error naming the file and line.

use crate::common::*;

fn check(files: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    for (name, body) in files {
        std::fs::write(prompts.join(name), body).unwrap();
    }
    let out = coherence(
        &[
            "prompts",
            "check",
            "--any-counts",
            "--catalogue",
            &prompts.display().to_string(),
        ],
        dir.path(),
        &[],
    );
    (exit_code(&out), stderr(&out) + &stdout(&out))
}

const GOOD: &str = r#"
[[prompt]]
id = "one"
user = "1+1?"
reference = "2"
wrong = "3"
score = { type = "numeric", expected = "2" }
"#;

#[test]
fn a_valid_catalogue_passes() {
    let (code, out) = check(&[("deterministic_math.toml", GOOD)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ok: 1 prompts"));
}

#[test]
fn syntax_errors_name_file_and_line() {
    let broken = format!("{GOOD}\n[[prompt]]\nid = \"two\nuser = \"x\"\n");
    let (code, out) = check(&[("deterministic_math.toml", &broken)]);
    assert_eq!(code, 2);
    assert!(out.contains("deterministic_math.toml:10:"), "{out}");
}

#[test]
fn validation_errors_name_file_line_and_prompt() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "unknown scorer",
            "score = { type = \"numeric\", expected = \"2\" }",
            "score = { type = \"astrology\" }",
        ),
        ("missing reference", "reference = \"2\"\n", ""),
        (
            "bad expected",
            "expected = \"2\"",
            "expected = \"two or three\"",
        ),
        (
            "unknown field",
            "wrong = \"3\"",
            "wrong = \"3\"\ncolour = \"red\"",
        ),
    ];
    for (what, from, to) in cases {
        let body = format!("\n{}", GOOD.replace(from, to));
        let (code, out) = check(&[("deterministic_math.toml", &body)]);
        assert_eq!(code, 2, "{what}: {out}");
        assert!(out.contains("deterministic_math.toml:"), "{what}: {out}");
    }
    let (_, out) = check(&[(
        "deterministic_math.toml",
        &format!("\n{}", GOOD.replace("reference = \"2\"\n", "")),
    )]);
    assert!(
        out.contains("deterministic_math.toml:3: prompt `one`: `reference` is required"),
        "{out}"
    );
}

#[test]
fn duplicate_ids_across_files_are_reported_with_both_places() {
    let (code, out) = check(&[("deterministic_math.toml", GOOD), ("factual.toml", GOOD)]);
    assert_eq!(code, 2);
    assert!(
        out.contains("factual.toml:2: duplicate prompt id `one` (first defined at"),
        "{out}"
    );
    assert!(out.contains("deterministic_math.toml:2"), "{out}");
}

#[test]
fn unknown_categories_are_rejected() {
    let (code, out) = check(&[("poetry.toml", GOOD)]);
    assert_eq!(code, 2);
    assert!(
        out.contains("poetry.toml:1: unknown category `poetry`"),
        "{out}"
    );
}

#[test]
fn a_reference_that_scores_wrong_fails_the_self_test() {
    let (code, out) = check(&[(
        "deterministic_math.toml",
        &GOOD.replace("reference = \"2\"", "reference = \"1+1 is 3\""),
    )]);
    assert_eq!(code, 2);
    assert!(
        out.contains("prompt `one`: the reference answer does not score correct"),
        "{out}"
    );
    let (code, out) = check(&[(
        "deterministic_math.toml",
        &GOOD.replace("wrong = \"3\"", "wrong = \"it is 2\""),
    )]);
    assert_eq!(code, 2);
    assert!(out.contains("the wrong answer scores correct"), "{out}");
}

#[test]
fn compare_refuses_a_broken_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(prompts.join("factual.toml"), "[[prompt]]\nid = 5\n").unwrap();
    let out = coherence(
        &[
            "compare",
            "--catalogue",
            "prompts",
            "--endpoint",
            "a=http://127.0.0.1:9/v1",
            "--endpoint",
            "b=http://127.0.0.1:9/v1",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("factual.toml:2"), "{}", stderr(&out));
}

#[test]
fn a_missing_catalogue_folder_is_named_and_the_built_in_one_suggested() {
    let dir = tempfile::tempdir().unwrap();
    let out = coherence(
        &["prompts", "list", "--catalogue", "nowhere"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("--catalogue nowhere") && err.contains("prompts export"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_command_quietly_with_exit_0() {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills two new descriptors; the read end is closed at once, so every write
    // to the other end fails with EPIPE, as when `| head -1` has exited.
    let writer = unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        libc::close(fds[0]);
        std::process::Stdio::from_raw_fd(fds[1])
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(["prompts", "list", "--catalogue"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts"))
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn compare_refuses_a_js_prompt_whose_suite_file_is_missing_before_sending() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("code_generation.toml"),
        r#"
[[prompt]]
id = "gone"
user = "Write f."
reference = "function f() { return 1; }"
wrong = "no"
score = { type = "js", suite = "code_generation/gone.toml", function = "f" }
"#,
    )
    .unwrap();
    let server = FakeServer::start("m", |_| Reply::content("function f() { return 1; }"));
    let out = coherence(
        &compare_args(
            &prompts,
            &[("a", &server), ("b", &server)],
            &dir.path().join("run"),
        ),
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("scorers/code_generation/gone.toml"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty(), "nothing is sent");
}
