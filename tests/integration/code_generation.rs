//! `coherence compare` over the shipped code_generation prompts against fake endpoints: the
//! JS scorer runs in the real binary (re-executed as its own worker) and drives the verdicts.

use std::collections::HashMap;
use std::path::Path;

use crate::common::*;
use serde_json::json;

#[test]
fn a_buggy_function_is_a_diff_and_identical_code_is_same() {
    let catalogue_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let catalogue = coherence::catalogue::load_catalogue(&catalogue_dir).unwrap();
    let answers = |pick_wrong: &'static str| {
        let by_question: HashMap<String, (String, String)> = catalogue
            .prompts
            .iter()
            .filter(|p| p.category == "code_generation")
            .map(|p| {
                let wrong = if p.id == pick_wrong {
                    &p.wrong
                } else {
                    &p.reference
                };
                (p.question().to_string(), (p.id.clone(), wrong.clone()))
            })
            .collect();
        FakeServer::start("test-model", move |req| {
            let (_, answer) = &by_question[&req.question()];
            Reply::content(answer)
        })
    };
    let good = answers("");
    let buggy = answers("humaneval_fib");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = coherence(
        &[
            "compare",
            "--catalogue",
            &catalogue_dir.display().to_string(),
            "--only",
            "humaneval_close,humaneval_fib",
            "--endpoint",
            &format!("a={}", good.url()),
            "--endpoint",
            &format!("b={}", buggy.url()),
            "--out",
            &run.display().to_string(),
            "--quiet",
            "--fail-on",
            "diff>0",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let r = results(&run);
    let close = prompt(&r, "humaneval_close");
    assert_eq!(close["verdict"], json!("same"));
    assert_eq!(close["answers"]["b"]["extracted"], json!("6/6 PPPPPP"));
    let fib = prompt(&r, "humaneval_fib");
    assert_eq!(fib["verdict"], json!("diff"));
    assert_eq!(fib["answers"]["a"]["correct"], json!(true));
    assert_eq!(fib["answers"]["b"]["correct"], json!(false));
    assert_eq!(fib["answers"]["b"]["extracted"], json!("1/6 PFFFFF"));
}
