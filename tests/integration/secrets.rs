//! API keys reach the endpoint's Authorization header and nowhere else: not the run folder, not stdout or stderr.

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
