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
