//! Run folders: the default folder name (never an existing folder) and the atomic file write
//! (temp file + rename) for files a kill must never leave half-written.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// `runs/[<command>-]<UTC stamp>-<a>-vs-<b>...`, with `-2`, `-3`... appended when that folder
/// already exists. `compare` passes no command; `bench` and `soak` pass their name.
pub fn new_run_dir(command: Option<&str>, names: &[&str]) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let prefix = command.map(|c| format!("{c}-")).unwrap_or_default();
    first_free(PathBuf::from("runs").join(format!("{prefix}{stamp}-{}", names.join("-vs-"))))
}

/// `base`, or `base-2`, `base-3`... whichever is the first that does not exist.
fn first_free(base: PathBuf) -> PathBuf {
    let mut dir = base.clone();
    let mut n = 2;
    while dir.exists() {
        dir = PathBuf::from(format!("{}-{n}", base.display()));
        n += 1;
    }
    dir
}

/// Write `bytes` to `.<name>.tmp` next to `path`, then rename it over `path`, so a kill never
/// leaves half a file. Errors name the file that could not be written.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .with_context(|| format!("cannot write {}: not a file path", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.tmp", name.to_string_lossy()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_holds_command_stamp_and_endpoints() {
        // Digits masked: the stamp is the current UTC time.
        let masked = |p: PathBuf| -> String {
            let name = p.strip_prefix("runs").unwrap().display().to_string();
            name.chars()
                .map(|c| if c.is_ascii_digit() { '0' } else { c })
                .collect()
        };
        let single = masked(new_run_dir(Some("bench"), &["a"]));
        assert_eq!(single, "bench-00000000T000000Z-a");
        assert_eq!(
            masked(new_run_dir(None, &["a", "b"])),
            "00000000T000000Z-a-vs-b"
        );
    }

    #[test]
    fn a_taken_name_gets_the_next_number() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("run");
        assert_eq!(first_free(base.clone()), base);
        std::fs::create_dir(&base).unwrap();
        std::fs::create_dir(dir.path().join("run-2")).unwrap();
        assert_eq!(first_free(base), dir.path().join("run-3"));
    }

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        write_atomic(&path, b"one\n").unwrap();
        write_atomic(&path, b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("manifest.json")]);
        let err = write_atomic(&dir.path().join("missing/x.json"), b"").unwrap_err();
        assert!(
            format!("{err:#}").contains(".x.json.tmp"),
            "the error names the file: {err:#}"
        );
    }
}
