//! Flag values to domain values: endpoint specs and keys, client options, `--param`s, the
//! catalogue, the config file's named endpoints. Every error names the flag (or file and line)
//! it is about.

use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use serde_json::{Map, Value};

use super::config::{load_config, Config, NamedEndpoint, DEFAULT_CONFIG};
use crate::catalogue::{embedded, load_catalogue, Catalogue};
use crate::cli::{ClientArgs, EndpointArgs};
use crate::endpoint::{shown_var_name, ApiKey, ClientOptions, EndpointSpec, RetryPolicy};
use crate::run::params::{refused, Refused};
use crate::run::PlannedEndpoint;

const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// Split `NAME=VALUE`, naming the flag in the error.
pub fn split_pair<'a>(flag: &str, raw: &'a str, what: &str) -> anyhow::Result<(&'a str, &'a str)> {
    match raw.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => Ok((k.trim(), v.trim())),
        _ => bail!("{flag} `{raw}`: expected {what}"),
    }
}

/// The catalogue named by `--catalogue`, else the one compiled into the binary. A `prompts/`
/// folder in the working directory is not picked up silently: what a run uses is what its flags
/// say (a run that recorded the built-in catalogue names [`embedded::BUILT_IN_DIR`], which
/// resolves to it again).
pub fn load_catalogue_for(flag: Option<&Path>) -> anyhow::Result<Catalogue> {
    match flag {
        Some(dir) if !embedded::is_built_in(dir) => {
            if !dir.is_dir() {
                bail!(
                    "--catalogue {}: no such folder (leave the flag out for the built-in catalogue, or write it out with `coherence prompts export DIR`)",
                    dir.display()
                );
            }
            load_catalogue(dir).map_err(|e| anyhow!(e))
        }
        _ => embedded::load_built_in().map_err(|e| anyhow!(e)),
    }
}

/// Parse and check the endpoint names, `--endpoint`, `--model` and `--api-key-env` into
/// endpoint specs (with the config file when one is read); `base` when none is given.
pub fn endpoint_specs(
    args: &EndpointArgs,
    base: Vec<EndpointSpec>,
) -> anyhow::Result<Vec<EndpointSpec>> {
    Ok(resolve_endpoints(args, base)?.specs)
}

/// Endpoint specs and what the config file adds to them.
#[derive(Debug)]
pub struct Resolved {
    pub specs: Vec<EndpointSpec>,
    /// The config file's `concurrency` of the endpoints that set one, by name.
    pub concurrency: Vec<(String, usize)>,
}

/// [`endpoint_specs`], keeping the config file's per-endpoint concurrency. Positional names are
/// `[endpoint.NAME]` tables of the config file, in order; `--endpoint NAME=URL` adds an endpoint
/// or overrides the URL of a named one, `--model` and `--api-key-env` override the file.
pub fn resolve_endpoints(args: &EndpointArgs, base: Vec<EndpointSpec>) -> anyhow::Result<Resolved> {
    let wants_file = !args.names.is_empty() || args.config.is_some() || !args.endpoints.is_empty();
    let config = if wants_file {
        load_config(args.config.as_deref())?
    } else {
        None
    };
    let mut specs = if args.names.is_empty() && args.endpoints.is_empty() {
        base
    } else {
        Vec::new()
    };
    let mut concurrency = Vec::new();
    for name in &args.names {
        let Some(config) = &config else {
            bail!(
                "endpoint `{name}`: there is no {DEFAULT_CONFIG} here to name it; pass --config FILE, or give --endpoint {name}=URL"
            );
        };
        let Some(entry) = config.get(name) else {
            let known = config.names();
            bail!(
                "endpoint `{name}` is not in {} ({})",
                config.file.display(),
                if known.is_empty() {
                    "it names no endpoint".to_string()
                } else {
                    format!("it names: {}", known.join(", "))
                }
            );
        };
        if specs.iter().any(|s: &EndpointSpec| s.name == *name) {
            bail!("endpoint `{name}` is named twice");
        }
        specs.push(named_spec(config, entry)?);
        if let Some(n) = entry.concurrency {
            concurrency.push((name.clone(), n));
        }
    }
    let mut flagged: Vec<&str> = Vec::new();
    for raw in &args.endpoints {
        let (name, url) = split_pair(
            "--endpoint",
            raw,
            "NAME=URL, e.g. spark=http://10.0.0.1:8000/v1",
        )?;
        if !crate::endpoint::is_endpoint_name(name) {
            bail!("--endpoint `{raw}`: NAME may use letters, digits, '-', '_' and '.' only (not `.` or `..` alone)");
        }
        if flagged.contains(&name) {
            bail!("--endpoint `{raw}`: the name `{name}` is used twice");
        }
        flagged.push(name);
        let base_url = checked_url(&format!("--endpoint `{raw}`"), name, url)?;
        if let Some(spec) = find(&mut specs, name) {
            // A named endpoint: the flag overrides the file's URL.
            spec.base_url = base_url;
            continue;
        }
        let entry = config.as_ref().and_then(|c| c.get(name));
        if let Some(n) = entry.and_then(|e| e.concurrency) {
            concurrency.push((name.to_string(), n));
        }
        specs.push(EndpointSpec {
            name: name.to_string(),
            base_url,
            model: entry.and_then(|e| e.model.clone()),
            api_key_env: entry.and_then(|e| e.api_key_env.clone()),
            sampling_override: Map::new(),
        });
    }
    for raw in &args.models {
        let (name, model) = split_pair("--model", raw, "NAME=MODEL")?;
        let spec = find(&mut specs, name)
            .ok_or_else(|| anyhow!("--model `{raw}`: no endpoint named `{name}`"))?;
        spec.model = Some(model.to_string());
    }
    for raw in &args.api_key_envs {
        let (name, var) = key_env_pair(raw)?;
        let spec = find(&mut specs, name)
            .ok_or_else(|| anyhow!("--api-key-env {name}={var}: no endpoint named `{name}`"))?;
        spec.api_key_env = Some(var.to_string());
    }
    Ok(Resolved { specs, concurrency })
}

/// The endpoint `[endpoint.NAME]` of `config` names, its URL checked (an error names the file
/// and line).
pub fn named_spec(config: &Config, entry: &NamedEndpoint) -> anyhow::Result<EndpointSpec> {
    let name = &entry.name;
    let context = format!(
        "{}:{}: endpoint `{name}`",
        config.file.display(),
        entry.url_line
    );
    Ok(EndpointSpec {
        name: name.clone(),
        base_url: checked_url(&context, name, &entry.url)?,
        model: entry.model.clone(),
        api_key_env: entry.api_key_env.clone(),
        sampling_override: Map::new(),
    })
}

/// `NAME=ENVVAR` of `--api-key-env`. A key pasted in place of its variable's name (or of the
/// whole pair) is never printed back: an error shows the value only when it reads as a
/// variable's name ([`shown_var_name`]).
fn key_env_pair(raw: &str) -> anyhow::Result<(&str, &str)> {
    let refused = |given: &str, why: &str| {
        anyhow!(
            "--api-key-env {given}: {why} (not shown); --api-key-env takes NAME=ENV_VAR, the name \
             of the environment variable that holds the endpoint's key"
        )
    };
    let Some((name, var)) = raw.split_once('=').map(|(n, v)| (n.trim(), v.trim())) else {
        return Err(refused("…", "the value given has no `=`"));
    };
    if name.is_empty() || var.is_empty() {
        return Err(refused("…", "the value given has an empty side"));
    }
    let var = shown_var_name(var).ok_or_else(|| {
        refused(
            &format!("{name}=…"),
            "the value after `=` is not an environment variable name",
        )
    })?;
    Ok((name, var))
}

/// An `http(s)://` base URL without credentials, query or fragment, its trailing `/` dropped;
/// errors start with `context`, in which any credentials or query of `url` are masked.
fn checked_url(context: &str, name: &str, url: &str) -> anyhow::Result<String> {
    checked_base_url(context, &format!("--api-key-env {name}=ENVVAR"), url)
}

/// [`checked_url`] with the flag that takes the key instead said in full (`key_flag`, e.g.
/// `--api-key-env ENVVAR` for `watch`).
pub fn checked_base_url(context: &str, key_flag: &str, url: &str) -> anyhow::Result<String> {
    let context = context.replace(url, &masked_url(url));
    if let Some(why) = crate::cli::url_blemish(url) {
        bail!("{context}: {why}");
    }
    let parsed = reqwest::Url::parse(url).with_context(|| format!("{context}: invalid URL"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        bail!("{context}: the URL must start with http:// or https://");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        bail!("{context}: do not put credentials in the URL; pass the key with {key_flag}");
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        bail!(
            "{context}: the URL must be a base such as http://10.0.0.1:8000/v1, without a \
             `?query` or `#fragment` (coherence appends /chat/completions to it)"
        );
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// `url` with whatever stands between `://` and the authority's last `@`, and whatever follows
/// a `?` or `#`, shown as `***`, so an error about a URL never prints a key pasted into its
/// credentials or its query.
fn masked_url(url: &str) -> String {
    let url = match url.find(['?', '#']) {
        Some(i) => format!("{}***", &url[..=i]),
        None => url.to_string(),
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return url;
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url,
    }
}

fn find<'a>(specs: &'a mut [EndpointSpec], name: &str) -> Option<&'a mut EndpointSpec> {
    specs.iter_mut().find(|s| s.name == name)
}

/// Read each endpoint's key from its environment variable (or OPENAI_API_KEY when set).
pub fn with_keys(specs: Vec<EndpointSpec>) -> anyhow::Result<Vec<PlannedEndpoint>> {
    specs
        .into_iter()
        .map(|mut spec| {
            let key = match &spec.api_key_env {
                Some(var) => {
                    let value = std::env::var(var).unwrap_or_default();
                    let key = ApiKey::new(value).ok_or_else(|| match shown_var_name(var) {
                        Some(var) => anyhow!(
                            "--api-key-env {}={var}: the environment variable {var} is not set",
                            spec.name
                        ),
                        None => anyhow!(
                            "--api-key-env {}=…: the value given is not an environment variable \
                             name (not shown); give the name of the variable that holds the key",
                            spec.name
                        ),
                    })?;
                    Some(key)
                }
                None => {
                    let key = std::env::var(DEFAULT_KEY_ENV).ok().and_then(ApiKey::new);
                    if key.is_some() {
                        spec.api_key_env = Some(DEFAULT_KEY_ENV.to_string());
                    }
                    key
                }
            };
            Ok(PlannedEndpoint {
                spec,
                key,
                replayed: None,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .and_then(refuse_keys_in_specs)
}

/// Refuse an endpoint whose URL or model name holds an endpoint's API key: both are written to
/// the run folder and shown in every report, while a key is sent only in the Authorization
/// header. The error names the flag and the endpoints, never the key.
fn refuse_keys_in_specs(endpoints: Vec<PlannedEndpoint>) -> anyhow::Result<Vec<PlannedEndpoint>> {
    for e in &endpoints {
        let fields = [
            ("URL", Some(&e.spec.base_url)),
            ("--model", e.spec.model.as_ref()),
        ];
        for (flag, text) in fields {
            let Some(text) = text else { continue };
            let holder = endpoints
                .iter()
                .find(|h| h.key.as_ref().is_some_and(|k| k.redact(text) != *text));
            if let Some(h) = holder {
                bail!(
                    "endpoint `{}`: its {flag} holds the API key of endpoint `{}`; a key is sent only in the Authorization header and is never stored (put it in the variable --api-key-env names)",
                    e.spec.name,
                    h.spec.name
                );
            }
        }
    }
    Ok(endpoints)
}

pub fn client_options(args: &ClientArgs) -> anyhow::Result<ClientOptions> {
    Ok(ClientOptions {
        timeout: Duration::from_secs(args.timeout),
        retry: RetryPolicy {
            retries: args.retries,
            base_backoff: Duration::from_millis(args.backoff_ms),
            ..RetryPolicy::default()
        },
        max_body_bytes: args.max_response_bytes,
        max_rps: args.max_rps,
    })
}

/// What a command's requests sample with, which a `--param` may not change (see
/// `run::params`), named in the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampled {
    /// compare, determinism, selftest, bench, project: temperature 0, one choice.
    Greedy,
    /// distribution: the `--temperature` (and `--top-p`, `--top-k`) given, one choice.
    AtTemperature,
}

impl Sampled {
    /// What every request carries, as a refusal states it.
    fn statement(self) -> &'static str {
        match self {
            Sampled::Greedy => {
                "coherence sends temperature 0 and one choice to every endpoint, and its \
                 manifest and report say so"
            }
            Sampled::AtTemperature => {
                "distribution sends the --temperature given (and --top-p, --top-k when given) \
                 and one choice to both endpoints, and its manifest and report say so"
            }
        }
    }
}

/// Refuse a `--param` whose value holds an endpoint's API key: it would go into every request
/// body and be kept in the manifest, the records and the reports. The error names the field
/// and the endpoint, never the key.
pub fn refuse_keys_in_params(
    params: &Map<String, Value>,
    endpoints: &[PlannedEndpoint],
) -> anyhow::Result<()> {
    for (field, value) in params {
        let text = value.to_string();
        let holder = endpoints
            .iter()
            .find(|e| e.key.as_ref().is_some_and(|key| key.redact(&text) != text));
        if let Some(e) = holder {
            bail!(
                "--param {field}: its value holds the API key of endpoint `{}`; a key is sent only in the Authorization header and is never stored",
                e.spec.name
            );
        }
    }
    Ok(())
}

/// Parse `--param KEY=VALUE` flags on top of `params`; fields coherence owns and fields that
/// change what is sampled (`run::params`) are refused, naming the flag and what is sent instead.
pub fn parse_params(
    raw: &[String],
    mut params: Map<String, Value>,
    sampled: Sampled,
) -> anyhow::Result<Map<String, Value>> {
    for p in raw {
        let (k, v) = split_pair("--param", p, "KEY=VALUE, e.g. top_p=1 or seed=42")?;
        match refused(k) {
            Some(Refused::OwnField) => {
                let hint = if k.starts_with("max_") {
                    " (use --max-tokens)"
                } else {
                    ""
                };
                bail!("--param `{p}`: `{k}` is set by coherence itself{hint}");
            }
            Some(Refused::Sampling) => bail!(
                "--param `{p}`: `{k}` changes what is sampled; {}",
                sampled.statement()
            ),
            None => {}
        }
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()));
        params.insert(k.to_string(), value);
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_errors_mask_credentials_and_refuse_query_and_fragment() {
        let raw = "a=http://user:sk-live-1@host:8000/v1";
        let e = checked_url(
            &format!("--endpoint `{raw}`"),
            "a",
            "http://user:sk-live-1@host:8000/v1",
        )
        .unwrap_err()
        .to_string();
        assert!(!e.contains("sk-live-1") && !e.contains("user"), "{e}");
        assert!(
            e.contains("http://***@host:8000/v1") && e.contains("credentials"),
            "{e}"
        );
        let e = checked_url("--endpoint `a=http://u:sk-2@h:x`", "a", "http://u:sk-2@h:x")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("sk-2") && e.contains("invalid URL"), "{e}");
        for url in ["http://h/v1?x=1", "http://h/v1#top", "http://h/v1/?"] {
            let e = checked_url("--endpoint", "a", url).unwrap_err().to_string();
            assert!(e.contains("`?query` or `#fragment`"), "{url}: {e}");
        }
        let url = "http://h/v1?key=sk-live-3#sk-live-4";
        let e = checked_url(&format!("--endpoint `a={url}`"), "a", url)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`a=http://h/v1?***`"), "{e}");
        assert!(!e.contains("sk-live"), "{e}");
        assert_eq!(
            checked_url("x", "a", "http://h:1/v1/").unwrap(),
            "http://h:1/v1"
        );
    }

    #[test]
    fn a_url_with_a_space_or_a_control_character_is_refused_naming_the_flag() {
        for url in [
            "http://x y/v1",
            "http://x/v 1",
            "http://x/v1\t",
            "http://x/\u{7}v1",
        ] {
            let e = checked_url(&format!("--endpoint `a={url}`"), "a", url)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("--endpoint `a=") && e.contains("a space or a control character"),
                "{url:?}: {e}"
            );
        }
    }

    fn params(raw: &[&str]) -> anyhow::Result<Map<String, Value>> {
        let raw: Vec<String> = raw.iter().map(|s| s.to_string()).collect();
        parse_params(&raw, Map::new(), Sampled::Greedy)
    }

    #[test]
    fn params_that_change_sampling_are_refused_naming_the_flag() {
        for p in [
            "temperature=1.0",
            "n=2",
            "best_of=3",
            "mirostat=2",
            "repetition_penalty=1.3",
            "frequency_penalty=0.5",
            "presence_penalty=0.5",
        ] {
            let e = params(&[p]).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--param `{p}`")) && e.contains("changes what is sampled"),
                "{e}"
            );
        }
        let e = params(&["max_completion_tokens=5"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("set by coherence itself (use --max-tokens)"),
            "{e}"
        );
        let raw = vec!["temperature=0".to_string()];
        let e = parse_params(&raw, Map::new(), Sampled::AtTemperature)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("distribution sends the --temperature given")
                && !e.contains("temperature 0"),
            "a distribution run does not send temperature 0: {e}"
        );
        let ok = params(&["seed=42", "top_p=1", "cache_prompt=false"]).unwrap();
        assert_eq!(ok["top_p"], serde_json::json!(1));
        assert_eq!(ok["seed"], serde_json::json!(42));
        assert_eq!(ok["cache_prompt"], serde_json::json!(false));
    }
}
