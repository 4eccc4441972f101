//! Flags to a validated plan: which prompts go to which endpoints, how often, with what budget.
//! Every validation error names the flag it is about.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use serde_json::{Map, Value};

use super::folder::new_run_dir;
use super::manifest::{Manifest, Sampling};
use crate::analysis::{parse_gate, DEFAULT_COMPARE_GATE, DEFAULT_DETERMINISM_GATE};
use crate::catalogue::{load_catalogue, Catalogue};
use crate::cli::{ClientArgs, CompareArgs, EndpointArgs};
use crate::endpoint::{ApiKey, ClientOptions, EndpointSpec, RetryPolicy};

/// The default token budget: generous, because reasoning endpoints spend budget before answering.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// An endpoint ready to be called: its spec plus the key read from the environment.
#[derive(Debug, Clone)]
pub struct PlannedEndpoint {
    pub spec: EndpointSpec,
    pub key: Option<ApiKey>,
}

#[derive(Debug)]
pub struct RunPlan {
    pub dir: PathBuf,
    /// The manifest of the run being resumed.
    pub previous: Option<Manifest>,
    pub catalogue: Catalogue,
    pub endpoints: Vec<PlannedEndpoint>,
    /// Prompt ids to send now (only what is missing is actually sent).
    pub send: Vec<String>,
    /// Every prompt id the run covers (what the report shows).
    pub scope: Vec<String>,
    pub repeats: u32,
    /// `--max-tokens`, which overrides each prompt's own budget.
    pub max_tokens_override: Option<u32>,
    /// What every request carries: temperature 0, no streaming, the default budget, `--param`s.
    pub sampling: Sampling,
    pub concurrency: usize,
    pub client: ClientOptions,
    pub quiet: bool,
    /// The validated `--fail-on` expression.
    pub fail_on: String,
    /// Re-run at this budget when the reasoning consumed a smaller one (0: never).
    pub reasoning_retry_budget: u32,
}

/// What the run is for: it decides the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// At least two endpoints, one repeat, gate `diff>0,fail>0`.
    Compare,
    /// One endpoint or more, five repeats, gate `nondeterministic>0,fail>0`.
    Determinism,
}

impl RunPlan {
    /// The budget a prompt is sent with.
    pub fn max_tokens_for(&self, prompt_max: Option<u32>) -> u32 {
        self.max_tokens_override
            .or(prompt_max)
            .unwrap_or(self.sampling.max_tokens)
    }
}

/// Split `NAME=VALUE`, naming the flag in the error.
pub fn split_pair<'a>(flag: &str, raw: &'a str, what: &str) -> anyhow::Result<(&'a str, &'a str)> {
    match raw.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => Ok((k.trim(), v.trim())),
        _ => bail!("{flag} `{raw}`: expected {what}"),
    }
}

/// The catalogue folder: the flag, else `prompts/` here, else the one shipped with the source.
pub fn resolve_catalogue_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.to_path_buf();
    }
    let local = PathBuf::from("prompts");
    if local.is_dir() {
        return local;
    }
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    if shipped.is_dir() {
        shipped
    } else {
        local
    }
}

pub fn load_catalogue_for(flag: Option<&Path>) -> anyhow::Result<Catalogue> {
    let dir = resolve_catalogue_dir(flag);
    load_catalogue(&dir).map_err(|e| anyhow!(e))
}

/// Parse and check `--endpoint`, `--model` and `--api-key-env` into endpoint specs.
pub fn endpoint_specs(
    args: &EndpointArgs,
    base: Vec<EndpointSpec>,
) -> anyhow::Result<Vec<EndpointSpec>> {
    let mut specs = if args.endpoints.is_empty() {
        base
    } else {
        Vec::new()
    };
    for raw in &args.endpoints {
        let (name, url) = split_pair(
            "--endpoint",
            raw,
            "NAME=URL, e.g. spark=http://10.0.0.1:8000/v1",
        )?;
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            bail!("--endpoint `{raw}`: NAME may use letters, digits, '-', '_' and '.' only");
        }
        if specs.iter().any(|s: &EndpointSpec| s.name == name) {
            bail!("--endpoint `{raw}`: the name `{name}` is used twice");
        }
        let parsed =
            reqwest::Url::parse(url).with_context(|| format!("--endpoint `{raw}`: invalid URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            bail!("--endpoint `{raw}`: the URL must start with http:// or https://");
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            bail!("--endpoint `{name}=…`: do not put credentials in the URL; pass the key with --api-key-env {name}=ENVVAR");
        }
        specs.push(EndpointSpec {
            name: name.to_string(),
            base_url: url.trim_end_matches('/').to_string(),
            model: None,
            api_key_env: None,
        });
    }
    for raw in &args.models {
        let (name, model) = split_pair("--model", raw, "NAME=MODEL")?;
        let spec = find(&mut specs, name)
            .ok_or_else(|| anyhow!("--model `{raw}`: no endpoint named `{name}`"))?;
        spec.model = Some(model.to_string());
    }
    for raw in &args.api_key_envs {
        let (name, var) = split_pair("--api-key-env", raw, "NAME=ENVVAR")?;
        let spec = find(&mut specs, name)
            .ok_or_else(|| anyhow!("--api-key-env `{raw}`: no endpoint named `{name}`"))?;
        spec.api_key_env = Some(var.to_string());
    }
    Ok(specs)
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
                    let key = ApiKey::new(value).ok_or_else(|| {
                        anyhow!(
                            "--api-key-env {}={var}: the environment variable {var} is not set",
                            spec.name
                        )
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
            Ok(PlannedEndpoint { spec, key })
        })
        .collect()
}

pub fn client_options(args: &ClientArgs) -> anyhow::Result<ClientOptions> {
    if args.timeout == 0 {
        bail!("--timeout must be at least 1 second");
    }
    if args.max_response_bytes < 1024 {
        bail!("--max-response-bytes must be at least 1024");
    }
    Ok(ClientOptions {
        timeout: Duration::from_secs(args.timeout),
        retry: RetryPolicy {
            retries: args.retries,
            base_backoff: Duration::from_millis(args.backoff_ms),
            ..RetryPolicy::default()
        },
        max_body_bytes: args.max_response_bytes,
    })
}

/// Fields a `--param` may not set, because the tool owns them.
const RESERVED_PARAMS: &[&str] = &["model", "messages", "prompt", "stream", "max_tokens", "n"];

/// Parse `--param KEY=VALUE` flags on top of `params`; fields coherence owns are refused.
pub fn parse_params(
    raw: &[String],
    mut params: Map<String, Value>,
) -> anyhow::Result<Map<String, Value>> {
    for p in raw {
        let (k, v) = split_pair("--param", p, "KEY=VALUE, e.g. top_p=1 or seed=42")?;
        if RESERVED_PARAMS.contains(&k) {
            let hint = if k == "max_tokens" {
                " (use --max-tokens)"
            } else {
                ""
            };
            bail!("--param `{p}`: `{k}` is set by coherence itself{hint}");
        }
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()));
        params.insert(k.to_string(), value);
    }
    Ok(params)
}

/// Build the plan for `coherence compare` or `coherence determinism`.
pub fn plan_compare(args: &CompareArgs, mode: Mode) -> anyhow::Result<RunPlan> {
    let (min_endpoints, default_repeats, default_gate) = match mode {
        Mode::Compare => (2, 1, DEFAULT_COMPARE_GATE),
        Mode::Determinism => (1, 5, DEFAULT_DETERMINISM_GATE),
    };
    let repeats_flag = args.repeats.unwrap_or(default_repeats);
    for (flag, value) in [
        ("--concurrency", args.concurrency as u64),
        ("--repeats", repeats_flag as u64),
    ] {
        if value == 0 {
            bail!("{flag} must be at least 1");
        }
    }
    if args.max_tokens == Some(0) {
        bail!("--max-tokens must be at least 1");
    }
    let previous = args.resume.as_deref().map(Manifest::read).transpose()?;
    let base_specs = previous
        .as_ref()
        .map(|m| m.endpoints.iter().map(|e| e.spec.clone()).collect())
        .unwrap_or_default();
    let specs = endpoint_specs(&args.endpoints, base_specs)?;
    if specs.len() < min_endpoints {
        match mode {
            Mode::Compare => bail!(
                "--endpoint: give at least two endpoints (NAME=URL); the first is the reference"
            ),
            Mode::Determinism => bail!("--endpoint: give at least one endpoint (NAME=URL)"),
        }
    }
    let endpoints = with_keys(specs)?;

    let catalogue_flag = args
        .catalogue
        .catalogue
        .clone()
        .or_else(|| previous.as_ref().map(|m| PathBuf::from(&m.catalogue.dir)));
    let catalogue = load_catalogue_for(catalogue_flag.as_deref())?;
    let selected: Vec<String> = catalogue
        .select(&args.only, &args.category)
        .map_err(|e| anyhow!(e))?
        .into_iter()
        .map(|p| p.id.clone())
        .collect();
    if selected.is_empty() {
        bail!("--only/--category: no prompt matches");
    }

    let filtered = !args.only.is_empty() || !args.category.is_empty();
    let (dir, scope, repeats, mut sampling) = match &previous {
        Some(m) => {
            // Resuming adds prompts to the run only when --only/--category name them.
            let mut scope: Vec<String> = m.prompts.clone();
            if filtered {
                let known: BTreeSet<String> = scope.iter().cloned().collect();
                scope.extend(selected.iter().filter(|id| !known.contains(*id)).cloned());
            }
            (
                args.resume.clone().unwrap_or_default(),
                scope,
                m.repeats.max(args.repeats.unwrap_or(0)),
                m.sampling.clone(),
            )
        }
        None => {
            let names: Vec<&str> = endpoints.iter().map(|e| e.spec.name.as_str()).collect();
            let dir = match &args.out {
                Some(d) => d.clone(),
                None => new_run_dir(None, &names),
            };
            if dir.join(super::manifest::MANIFEST_FILE).exists() {
                bail!(
                    "--out {}: this folder already holds a run; continue it with --resume {}",
                    dir.display(),
                    dir.display()
                );
            }
            (
                dir,
                selected.clone(),
                repeats_flag,
                Sampling::deterministic(DEFAULT_MAX_TOKENS),
            )
        }
    };
    let send = if previous.is_some() && !filtered {
        scope.clone()
    } else {
        selected
    };
    sampling.params = parse_params(&args.params, std::mem::take(&mut sampling.params))?;
    sampling.logprobs |= args.logprobs;
    let fail_on = resolve_gate(
        args.gate.fail_on.as_deref(),
        previous
            .as_ref()
            .map(|m| m.fail_on.as_str())
            .filter(|g| !g.is_empty()),
        default_gate,
    )?;
    Ok(RunPlan {
        dir,
        previous,
        catalogue,
        endpoints,
        send,
        scope,
        repeats,
        max_tokens_override: args.max_tokens,
        sampling,
        concurrency: args.concurrency,
        client: client_options(&args.client)?,
        quiet: args.quiet,
        fail_on,
        reasoning_retry_budget: args.reasoning_retry_budget,
    })
}

/// The gate in force: the flag, else the run's own, else the mode's default; validated.
pub fn resolve_gate(
    flag: Option<&str>,
    previous: Option<&str>,
    default: &str,
) -> anyhow::Result<String> {
    let expr = flag.or(previous).unwrap_or(default).to_string();
    parse_gate(&expr).map_err(|e| anyhow!(e))?;
    Ok(expr)
}
