//! JS test suites (`scorers/**/<id>.toml`): the path rules for `suite = "..."` in the catalogue
//! and loading a suite file (a list of JS expressions that must each evaluate to `true`) from disk
//! or, for the built-in catalogue, from the binary.

use std::path::{Component, Path};

use serde::Deserialize;

/// A loaded suite: test expressions in order; test `i` is reported as `t{i+1}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    pub tests: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    tests: Vec<String>,
}

/// Checks the catalogue's `suite` and `function` fields without touching the disk.
pub fn validate_spec(suite: &str, function: &str) -> Result<(), String> {
    let path = Path::new(suite);
    let relative = !suite.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !relative || path.extension().is_none_or(|x| x != "toml") {
        return Err(format!(
            "suite `{suite}` must be a relative path to a .toml file inside scorers/ (no `..`)"
        ));
    }
    if !is_identifier(function) {
        return Err(format!(
            "function `{function}` is not a JavaScript identifier"
        ));
    }
    Ok(())
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// Reads and validates a suite: at least one test, and every test calls `function`.
pub fn load(path: &Path, function: &str) -> Result<Suite, String> {
    let shown = path.display();
    let text = match crate::builtin::suite_text(path) {
        Some(built_in) => built_in
            .map(str::to_string)
            .map_err(|e| format!("suite {shown}: {e}"))?,
        None => {
            std::fs::read_to_string(path).map_err(|e| format!("suite {shown}: cannot read: {e}"))?
        }
    };
    parse(&text, function).map_err(|e| format!("suite {shown}: {e}"))
}

fn parse(text: &str, function: &str) -> Result<Suite, String> {
    let raw: RawSuite = toml::from_str(text).map_err(|e| e.message().trim().to_string())?;
    if raw.tests.is_empty() {
        return Err("`tests` is empty".into());
    }
    for (i, test) in raw.tests.iter().enumerate() {
        if !test.contains(function) {
            return Err(format!(
                "test t{} does not call `{function}`: {test}",
                i + 1
            ));
        }
    }
    Ok(Suite { tests: raw.tests })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_paths_stay_inside_scorers() {
        assert!(validate_spec("code_generation/x.toml", "hasCloseElements").is_ok());
        assert!(validate_spec("../secret.toml", "f").is_err());
        assert!(validate_spec("/etc/x.toml", "f").is_err());
        assert!(validate_spec("code_generation/x.js", "f").is_err());
        assert!(validate_spec("x.toml", "has-close").is_err());
        assert!(validate_spec("x.toml", "9f").is_err());
    }

    #[test]
    fn parse_requires_tests_that_call_the_function() {
        let ok = parse("tests = [\"f(1) === 2\", \"f(2) === 3\"]", "f").unwrap();
        assert_eq!(ok.tests.len(), 2);
        assert!(parse("tests = []", "f").unwrap_err().contains("empty"));
        let e = parse("tests = [\"f(1) === 2\", \"g(1)\"]", "f").unwrap_err();
        assert!(e.contains("t2"), "{e}");
        assert!(parse("test = [\"f(1)\"]", "f").is_err());
    }
}
