//! The built-in catalogue (files compiled into the binary, `crate::builtin`): loading it with
//! the folder loader's rules and hash, and writing it and its JS suites out
//! (`coherence prompts export`).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::load::{from_sources, Catalogue, CatalogueError};
pub use crate::builtin::{is_built_in, BUILT_IN_DIR};
use crate::builtin::{prompt_files, scorer_files};

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
}
