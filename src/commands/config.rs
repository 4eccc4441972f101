//! Named deployments in a config file (`coherence.toml` in the working directory, or
//! `--config FILE`), so a repeated comparison is `coherence compare spark full`:
//!
//! ```toml
//! [endpoint.spark]
//! url = "http://10.0.0.1:8000/v1"
//! model = "Qwen/Qwen3-8B"        # optional: else the first id from GET /models
//! api_key_env = "SPARK_KEY"      # optional: the variable holding the key, never the key
//! concurrency = 4                # optional: requests in flight (compare, determinism, watch)
//! baseline = "baselines/spark"   # optional: the pinned run `coherence watch` checks it against
//! ```
//!
//! `baseline` is a folder relative to the config file's own folder.
//!
//! Every problem names the file and line. Keys stay in the environment: a field that looks like
//! a secret (`api_key`, `token`, ...) is refused rather than ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::bail;
use toml::{Spanned, Value};

use crate::endpoint::shown_var_name;
use crate::engine::MAX_CONCURRENCY;

/// The file read when `--config` is not given and it exists in the working directory.
pub const DEFAULT_CONFIG: &str = "coherence.toml";

/// One `[endpoint.NAME]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedEndpoint {
    pub name: String,
    pub url: String,
    /// The line of `url` in the file, for errors about the URL.
    pub url_line: usize,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub concurrency: Option<usize>,
    /// `baseline`: the watch's pinned run, resolved against the config file's folder.
    pub baseline: Option<PathBuf>,
}

/// A loaded config file.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The file it came from, as shown in messages.
    pub file: PathBuf,
    /// The endpoints, in file order.
    pub endpoints: Vec<NamedEndpoint>,
}

impl Config {
    pub fn get(&self, name: &str) -> Option<&NamedEndpoint> {
        self.endpoints.iter().find(|e| e.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.endpoints.iter().map(|e| e.name.as_str()).collect()
    }
}

/// `--config FILE` (which must exist), else `coherence.toml` here when present, else none.
pub fn load_config(flag: Option<&Path>) -> anyhow::Result<Option<Config>> {
    let (file, required) = match flag {
        Some(f) => (f.to_path_buf(), true),
        None => (PathBuf::from(DEFAULT_CONFIG), false),
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => bail!("--config {}: cannot read it: {e}", file.display()),
    };
    parse_config(&file, &text).map(Some)
}

/// Fields that look like a secret: refused, because keys stay in the environment.
fn looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k != "api_key_env"
        && [
            "key",
            "token",
            "secret",
            "password",
            "authorization",
            "bearer",
        ]
        .iter()
        .any(|s| k.contains(s))
}

/// Parse a config file's text; every error starts with `file:line:`.
pub fn parse_config(file: &Path, text: &str) -> anyhow::Result<Config> {
    let shown = file.display().to_string();
    let syntax = |e: toml::de::Error| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        anyhow::anyhow!("{shown}:{line}: {}", e.message().trim())
    };
    let top: toml::Table = toml::from_str(text).map_err(syntax)?;
    for (key, value) in &top {
        let line = line_of_key(text, key, 1);
        if key != "endpoint" {
            bail!("{shown}:{line}: unknown table `{key}`; the file holds [endpoint.NAME] tables");
        }
        let tables = value
            .as_table()
            .is_some_and(|t| t.values().all(Value::is_table));
        if !tables {
            bail!("{shown}:{line}: `endpoint` must hold [endpoint.NAME] tables");
        }
    }
    // Read again, now with the span of every field's value (toml gives no spans to keys here).
    #[derive(serde::Deserialize)]
    struct Spans {
        #[serde(default)]
        endpoint: BTreeMap<String, BTreeMap<String, Spanned<Value>>>,
    }
    let spans: Spans = toml::from_str(text).map_err(syntax)?;
    let mut tables: Vec<_> = spans.endpoint.into_iter().collect();
    // File order: by where each table's first field is.
    tables.sort_by_key(|(_, fields)| fields.values().map(|v| v.span().start).min());
    let endpoints = tables
        .into_iter()
        .map(|(name, fields)| named_endpoint(&shown, text, name, &fields))
        .collect::<anyhow::Result<_>>()?;
    Ok(Config {
        file: file.to_path_buf(),
        endpoints,
    })
}

/// One `[endpoint.NAME]` table, each field checked; errors start with `shown:line:`.
fn named_endpoint(
    shown: &str,
    text: &str,
    name: String,
    fields: &BTreeMap<String, Spanned<Value>>,
) -> anyhow::Result<NamedEndpoint> {
    let first = fields.values().map(|v| line_of(text, v.span().start)).min();
    let here = format!(
        "{shown}:{}",
        line_of_key(text, &format!("endpoint.{name}"), first.unwrap_or(1))
    );
    if !crate::endpoint::is_endpoint_name(&name) {
        bail!("{here}: endpoint name `{name}`: use letters, digits, '-', '_' and '.' only (not `.` or `..` alone)");
    }
    let mut endpoint = NamedEndpoint {
        name: name.clone(),
        url: String::new(),
        url_line: 0,
        model: None,
        api_key_env: None,
        concurrency: None,
        baseline: None,
    };
    for (field, value) in fields {
        let line = format!("{shown}:{}", line_of(text, value.span().start));
        let field = field.as_str();
        let string = || match value.get_ref() {
            Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            _ => Err(anyhow::anyhow!(
                "{line}: endpoint `{name}`: `{field}` must be a non-empty string"
            )),
        };
        match field {
            "url" => {
                endpoint.url = string()?;
                endpoint.url_line = line_of(text, value.span().start);
            }
            "model" => endpoint.model = Some(string()?),
            "api_key_env" => {
                let var = string()?;
                if shown_var_name(&var).is_none() {
                    bail!(
                        "{line}: endpoint `{name}`: `api_key_env` takes the name of the \
                         environment variable that holds the key; the value given is not one \
                         (not shown)"
                    );
                }
                endpoint.api_key_env = Some(var);
            }
            "concurrency" => match value.get_ref() {
                Value::Integer(n) if (1..=MAX_CONCURRENCY as i64).contains(n) => {
                    endpoint.concurrency = usize::try_from(*n).ok();
                }
                _ => bail!(
                    "{line}: endpoint `{name}`: `concurrency` must be a whole number from 1 to {MAX_CONCURRENCY}"
                ),
            },
            "baseline" => {
                let folder = Path::new(shown).parent().unwrap_or(Path::new(""));
                endpoint.baseline = Some(folder.join(string()?));
            }
            f if looks_secret(f) => bail!(
                "{line}: endpoint `{name}`: `{f}` looks like a secret; keys stay in the \
                 environment, never in the file: write api_key_env = \"VAR\" and export VAR"
            ),
            f => bail!(
                "{line}: endpoint `{name}`: unknown field `{f}` (known: url, model, api_key_env, concurrency, baseline)"
            ),
        }
    }
    if endpoint.url.is_empty() {
        bail!("{here}: endpoint `{name}`: `url` is required");
    }
    Ok(endpoint)
}

/// The line of the first table header or key that starts with `key` (`[key`, `[key.`, `key =`,
/// `key.`), else `fallback`.
fn line_of_key(text: &str, key: &str, fallback: usize) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim_start().trim_start_matches('[').trim_start();
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(['=', '.', ']']))
        })
        .map_or(fallback, |i| i + 1)
}

/// 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<Config> {
        parse_config(Path::new("c.toml"), text)
    }

    #[test]
    fn endpoints_keep_file_order_and_optional_fields() {
        let c = parse(
            "[endpoint.zeta]\nurl = \"http://a/v1\"\nconcurrency = 2\n\n\
             [endpoint.alpha]\nurl = \"http://b/v1\"\nmodel = \"m\"\napi_key_env = \"K\"\n",
        )
        .unwrap();
        assert_eq!(c.names(), vec!["zeta", "alpha"]);
        assert_eq!(c.get("zeta").unwrap().concurrency, Some(2));
        assert_eq!(c.get("alpha").unwrap().url_line, 6);
        assert_eq!(c.get("alpha").unwrap().model.as_deref(), Some("m"));
        assert_eq!(c.get("alpha").unwrap().api_key_env.as_deref(), Some("K"));
        assert!(parse("").unwrap().endpoints.is_empty());
    }

    #[test]
    fn a_baseline_is_read_relative_to_the_files_folder() {
        let text = "[endpoint.a]\nurl = \"http://a/v1\"\nbaseline = \"runs/base\"\n\n\
                    [endpoint.b]\nurl = \"http://b/v1\"\n";
        let c = parse_config(Path::new("ops/fleet/c.toml"), text).unwrap();
        assert_eq!(
            c.get("a").unwrap().baseline.as_deref(),
            Some(Path::new("ops/fleet/runs/base"))
        );
        assert_eq!(c.get("b").unwrap().baseline, None);
        let here = parse(text).unwrap();
        assert_eq!(
            here.get("a").unwrap().baseline.as_deref(),
            Some(Path::new("runs/base"))
        );
        let abs = parse("[endpoint.a]\nurl = \"x\"\nbaseline = \"/srv/base\"\n").unwrap();
        assert_eq!(
            abs.get("a").unwrap().baseline.as_deref(),
            Some(Path::new("/srv/base"))
        );
        let e = parse("[endpoint.a]\nurl = \"x\"\nbaseline = 3\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml:3:") && e.contains("baseline"), "{e}");
    }

    #[test]
    fn problems_name_file_and_line() {
        let e = parse("[endpoint.a]\nurl = \"http://a/v1\"\napi_key = \"sk-1\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c.toml:3:") && e.contains("environment"),
            "{e}"
        );
        let e = parse("[endpoint.a]\nurl = \"http://a/v1\"\nurll = 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c.toml:3:") && e.contains("unknown field"),
            "{e}"
        );
        let e = parse("\n[endpoint.a]\nmodel = \"m\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml:2:") && e.contains("url"), "{e}");
        let e = parse("[endpoint.a]\nurl = \"x\"\nconcurrency = 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml:3:"), "{e}");
        for absurd in ["1025", "1000000", "9223372036854775807"] {
            let e = parse(&format!(
                "[endpoint.a]\nurl = \"x\"\nconcurrency = {absurd}\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(e.starts_with("c.toml:3:") && e.contains("1 to 1024"), "{e}");
        }
        let e = parse("[endpoint.a]\nurl = \n").unwrap_err().to_string();
        assert!(e.starts_with("c.toml:2:"), "{e}");
        let e = parse("[server]\nx = 1\n").unwrap_err().to_string();
        assert!(e.starts_with("c.toml:1:"), "{e}");
        let e = parse("endpoint = 3\n").unwrap_err().to_string();
        assert!(e.starts_with("c.toml:1:"), "{e}");
        assert!(looks_secret("token") && looks_secret("API_KEY") && !looks_secret("api_key_env"));
    }
}
