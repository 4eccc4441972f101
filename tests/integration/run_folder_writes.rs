//! Writing run folders: a file that cannot be written ends any command with exit 3 naming it,
//! whichever file it is, and the temp files killed writes left behind are swept by the next
//! process that writes the folder. (One process per folder: `resume.rs`.)

use std::path::Path;

use crate::common::*;

/// `compare` of a correct endpoint against itself into `run`, fast retries, no progress.
fn compare_into(dir: &Path, server: &FakeServer, run: &Path) -> std::process::Output {
    let mut args = compare_args(&write_catalogue(dir), &[("a", server), ("b", server)], run);
    args.extend(["--backoff-ms", "10", "--quiet"].map(String::from));
    coherence(&args, dir, &[])
}

#[test]
fn a_run_file_that_cannot_be_written_is_exit_3_whichever_file_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let server = correct_server();
    // A folder stands where the file goes: no write to it can succeed, as on a full disk.
    for file in ["records.jsonl", "results.json", "report.md"] {
        let run = dir.path().join(format!("run-{file}"));
        std::fs::create_dir_all(run.join(file)).unwrap();
        let out = compare_into(dir.path(), &server, &run);
        assert_eq!(exit_code(&out), 3, "{file}: {}", stderr(&out));
        assert!(stderr(&out).contains(file), "{file}: {}", stderr(&out));
    }
    let run = dir.path().join("bench");
    std::fs::create_dir_all(run.join("bench.jsonl")).unwrap();
    let url = format!("a={}", server.url());
    let run_s = run.display().to_string();
    let out = coherence(
        &["bench", "--endpoint", &url, "--out", &run_s, "--quiet"],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("bench.jsonl"), "{}", stderr(&out));
}

#[test]
fn the_temp_files_of_killed_writes_are_swept_by_the_next_process() {
    let dir = tempfile::tempdir().unwrap();
    let server = correct_server();
    let run = dir.path().join("run");
    assert_eq!(exit_code(&compare_into(dir.path(), &server, &run)), 0);
    // What writes killed between creating their temp file and renaming it leave behind.
    let stale = [".results.json.4242.tmp", ".report.html.77.tmp"];
    for name in stale {
        std::fs::write(run.join(name), "half a file").unwrap();
    }
    let out = coherence(&["score", &run.display().to_string()], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    for name in stale {
        assert!(!run.join(name).exists(), "{name} is left");
    }
    assert!(run.join("results.json").is_file());
}

/// A run folder from elsewhere (an archive, a CI artifact) whose lock path is a link or a
/// folder: `score`, `report` and `compare --resume` refuse it (exit 2, naming it) and write
/// nothing, so the file a link points to is never emptied and no folder is used unlocked.
#[cfg(unix)]
#[test]
fn a_run_folder_whose_lock_file_is_a_link_or_a_folder_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let server = correct_server();
    let run = dir.path().join("run");
    assert_eq!(exit_code(&compare_into(dir.path(), &server, &run)), 0);
    let lock = run.join(".coherence.lock");
    let precious = dir.path().join("passwd");
    std::fs::write(&precious, "root:x:0:0\n").unwrap();
    let results = std::fs::read(run.join("results.json")).unwrap();
    let run_s = run.display().to_string();
    for what in ["a link", "a dangling link", "a folder"] {
        let _ = std::fs::remove_file(&lock);
        let _ = std::fs::remove_dir(&lock);
        match what {
            "a link" => std::os::unix::fs::symlink(&precious, &lock).unwrap(),
            "a dangling link" => {
                std::os::unix::fs::symlink(dir.path().join("made"), &lock).unwrap()
            }
            _ => std::fs::create_dir(&lock).unwrap(),
        }
        for args in [
            vec!["score", run_s.as_str()],
            vec!["report", run_s.as_str()],
            vec!["compare", "--resume", run_s.as_str(), "--quiet"],
        ] {
            let out = coherence(&args, dir.path(), &[]);
            assert_eq!(exit_code(&out), 2, "{what} {args:?}: {}", stderr(&out));
            assert!(
                stderr(&out).contains(".coherence.lock"),
                "{what} {args:?}: {}",
                stderr(&out)
            );
        }
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "root:x:0:0\n");
        assert!(
            !dir.path().join("made").exists(),
            "{what}: a link's target was created"
        );
        assert_eq!(
            std::fs::read(run.join("results.json")).unwrap(),
            results,
            "{what}"
        );
    }
}
