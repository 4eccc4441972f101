//! The catalogue and JS test suites compiled into the binary (`build.rs`), so that a binary
//! copied to another machine needs no source folder: loading the built-in catalogue, reading a
//! built-in suite, and writing both out (`coherence prompts export`).
//!
//! The built-in catalogue's folder is the placeholder path [`BUILT_IN_DIR`]; the JS scorer's
//! `scorers/` beside it is [`BUILT_IN_SCORERS`], whose suites [`suite_text`] serves from the
//! binary. Messages and run manifests name it as such.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::load::{from_sources, Catalogue, CatalogueError};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// Where the built-in catalogue says it lives. Not a real folder: nothing is read from it.
pub const BUILT_IN_DIR: &str = "(built-in)/prompts";
/// The built-in `scorers/`, the sibling of [`BUILT_IN_DIR`] (as `scorers/` is of `prompts/`).
pub const BUILT_IN_SCORERS: &str = "(built-in)/scorers";

/// Every file of the shipped `prompts/` (subfolders included), by path relative to it.
pub fn prompt_files() -> &'static [(&'static str, &'static [u8])] {
    generated::PROMPTS
}

/// Every file of the shipped `scorers/`, by path relative to it.
pub fn scorer_files() -> &'static [(&'static str, &'static [u8])] {
    generated::SCORERS
}

/// Whether `dir` names the built-in catalogue (and no real folder of that name exists).
pub fn is_built_in(dir: &Path) -> bool {
    dir == Path::new(BUILT_IN_DIR) && !dir.is_dir()
}

/// The catalogue compiled into the binary: the `*.toml` files at the top of `prompts/`, as the
/// folder loader reads them, so the hash is the same as that of the source folder.
pub fn load_built_in() -> Result<Catalogue, CatalogueError> {
    let dir = Path::new(BUILT_IN_DIR);
    let mut sources = Vec::new();
    let mut problems = Vec::new();
    for (name, bytes) in prompt_files() {
        if name.contains('/') || !name.ends_with(".toml") {
            continue;
        }
        let path = dir.join(name);
        match std::str::from_utf8(bytes) {
            Ok(text) => sources.push((path, text.to_string())),
            Err(e) => problems.push(format!("{}: not UTF-8: {e}", path.display())),
        }
    }
    from_sources(dir, sources, problems)
}

/// The hash [`load_built_in`] gives the built-in catalogue, without parsing it (for
/// `coherence --version`): sha256 over each top-level `*.toml` file's name and bytes, in name
/// order, as the loader computes it.
pub fn hash() -> String {
    use sha2::{Digest, Sha256};
    let mut files: Vec<&(&str, &[u8])> = prompt_files()
        .iter()
        .filter(|(name, _)| !name.contains('/') && name.ends_with(".toml"))
        .collect();
    files.sort();
    let mut hasher = Sha256::new();
    for (name, bytes) in files {
        hasher.update(name.as_bytes());
        hasher.update(bytes);
    }
    format!("{:x}", hasher.finalize())
}

/// The text of a suite file at `path` when it lies under [`BUILT_IN_SCORERS`] and no real file
/// is there; `None` for any other path (read it from disk).
pub fn suite_text(path: &Path) -> Option<Result<&'static str, String>> {
    let rel = path.strip_prefix(BUILT_IN_SCORERS).ok()?;
    if path.exists() {
        return None;
    }
    let rel: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let rel = rel.join("/");
    Some(match scorer_files().iter().find(|(name, _)| *name == rel) {
        Some((_, bytes)) => std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}")),
        None => Err(format!("no built-in suite `{rel}`")),
    })
}

/// Write the built-in catalogue to `dir/prompts` and the suites to `dir/scorers`, so
/// `--catalogue dir/prompts` finds its suites beside it. A non-empty `dir` is refused unless
/// `force` (then files of the same name are overwritten, others left alone). Returns the files
/// written.
pub fn export(dir: &Path, force: bool) -> anyhow::Result<Vec<PathBuf>> {
    if !force {
        if let Ok(mut entries) = std::fs::read_dir(dir) {
            if entries.next().is_some() {
                bail!(
                    "{}: the folder is not empty; choose an empty or new one, or pass --force to overwrite the files of the same name",
                    dir.display()
                );
            }
        }
    }
    if dir.exists() && !dir.is_dir() {
        bail!("{}: not a folder", dir.display());
    }
    let mut written = Vec::new();
    for (folder, files) in [("prompts", prompt_files()), ("scorers", scorer_files())] {
        for (rel, bytes) in files {
            let path = rel
                .split('/')
                .fold(dir.join(folder), |path, part| path.join(part));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::write(&path, bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_catalogue_is_the_source_folder() {
        let built_in = load_built_in().unwrap();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
        let on_disk = super::super::load_catalogue(&dir).unwrap();
        assert_eq!(built_in.hash, on_disk.hash);
        assert_eq!(hash(), on_disk.hash);
        assert_eq!(built_in.prompts.len(), on_disk.prompts.len());
        assert_eq!(built_in.dir, Path::new(BUILT_IN_DIR));
    }

    #[test]
    fn built_in_suites_are_served_and_other_paths_are_not() {
        let (name, _) = scorer_files()
            .iter()
            .find(|(n, _)| n.ends_with(".toml"))
            .expect("a suite is shipped");
        let path = Path::new(BUILT_IN_SCORERS).join(name);
        assert!(suite_text(&path).unwrap().unwrap().contains("tests"));
        assert!(suite_text(&Path::new(BUILT_IN_SCORERS).join("nope.toml"))
            .unwrap()
            .is_err());
        assert!(suite_text(Path::new("scorers/x.toml")).is_none());
    }
}
