//! Files compiled into the binary by `build.rs`: the shipped `prompts/`, `scorers/` and
//! `generator/` (the generated suites' word list), so a
//! binary copied to another machine needs no source folder. The built-in catalogue's folder is
//! the placeholder path [`BUILT_IN_DIR`]; the JS scorer's `scorers/` beside it is
//! [`BUILT_IN_SCORERS`], whose suites [`suite_text`] serves from the binary. Below both the
//! catalogue and the scorers, which each read their own files from here.

use std::path::Path;

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

/// The text of a file of the shipped `generator/` (the generated suites' data, such as
/// `words.txt`), by path relative to it; `None` when no such file was built in or it is not UTF-8.
pub fn generator_text(name: &str) -> Option<&'static str> {
    generated::GENERATOR
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, bytes)| std::str::from_utf8(bytes).ok())
}

/// Whether `dir` names the built-in catalogue (and no real folder of that name exists).
pub fn is_built_in(dir: &Path) -> bool {
    dir == Path::new(BUILT_IN_DIR) && !dir.is_dir()
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

#[cfg(test)]
mod tests {
    use super::*;

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
