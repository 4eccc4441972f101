//! The HTTP client for one endpoint: bounded bodies, timeouts, retries, secrets kept out of output.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::pace::Pacer;
use super::reply_cap;
use super::response::{parse_completion, snippet, Completion, Failure, FailureKind};
use super::retry::{parse_retry_after, RetryPolicy};
use super::secret::ApiKey;

/// Whether `name` can name an endpoint: letters, digits, `-`, `_` and `.`, not `.` or `..`
/// alone (a name goes into reports and file names, so it must never be a path).
pub fn is_endpoint_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// One endpoint as the user named it. Serialised into the manifest: it never holds the key,
/// only the name of the environment variable the key is read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointSpec {
    pub name: String,
    pub base_url: String,
    /// The model to request; resolved from `GET /models` when not given.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Request fields sent to this endpoint only, over the run's identical sampling. Never set
    /// by `compare`; `selftest` uses it for its perturbed positive control.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub sampling_override: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Per attempt, including reading the body. A request (all its attempts and the waits
    /// between them) must end within `retries + 1` times this: see [`ClientOptions::deadline`].
    pub timeout: Duration,
    pub retry: RetryPolicy,
    pub max_body_bytes: usize,
    /// `--max-rps`: at most this many attempts per second to the endpoint (None: no limit).
    pub max_rps: Option<f64>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(900),
            retry: RetryPolicy::default(),
            max_body_bytes: 16 * 1024 * 1024,
            max_rps: None,
        }
    }
}

impl ClientOptions {
    /// How long one logical request may take, attempts and waits together: one `timeout` per
    /// attempt allowed. A wait that would end past it is not taken.
    pub fn deadline(&self) -> Duration {
        self.timeout
            .saturating_mul(self.retry.retries.saturating_add(1))
    }
}

/// What `GET /models` said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelsInfo {
    pub ids: Vec<String>,
    pub max_model_len: Option<u64>,
    /// The `Server` response header, when sent, with the key redacted.
    pub server: Option<String>,
}

impl ModelsInfo {
    /// The model to ask when none was named: the first listed; Err says how to name one for
    /// `endpoint`.
    pub fn first_model(&self, endpoint: &str) -> Result<String, String> {
        self.ids.first().cloned().ok_or_else(|| {
            format!("GET /models lists no model; name one with --model {endpoint}=MODEL")
        })
    }
}

/// The outcome of one logical request (all its attempts).
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    pub status: Option<u16>,
    /// The final attempt's body, capped and with the key redacted.
    pub body: Option<String>,
    /// The `Server` response header, with the key redacted.
    pub server: Option<String>,
    /// Duration of the final attempt.
    pub latency: Duration,
    /// Duration of all attempts and waits.
    pub elapsed: Duration,
    pub attempts: u32,
    pub completion: Option<Completion>,
    pub failure: Option<Failure>,
}

/// One attempt's raw result.
struct Attempt {
    status: Option<u16>,
    body: Option<String>,
    server: Option<String>,
    retry_after: Option<Duration>,
    latency: Duration,
    failure: Option<Failure>,
}

/// Which failures a request is attempted again after.
#[derive(Debug, Clone, Copy)]
enum Retry {
    /// Every retryable failure ([`FailureKind::is_retryable`]).
    Retryable,
    /// As `Retryable`, but not a timeout.
    NotOnTimeout,
}

impl Retry {
    fn covers(self, kind: FailureKind) -> bool {
        kind.is_retryable() && !matches!((self, kind), (Retry::NotOnTimeout, FailureKind::Timeout))
    }
}

#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base_url: String,
    key: Option<ApiKey>,
    opts: ClientOptions,
    /// Shared by every clone of this client, so the limit holds for the endpoint.
    pacer: Option<Arc<Pacer>>,
}

impl Client {
    pub fn new(base_url: &str, key: Option<ApiKey>, opts: ClientOptions) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(opts.timeout.min(Duration::from_secs(30)))
            .user_agent(concat!("coherence/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Client {
            http,
            base_url: base_url.trim_end_matches('/').to_string(),
            key,
            pacer: opts.max_rps.and_then(Pacer::new).map(Arc::new),
            opts,
        })
    }

    /// `GET /models`, with retries.
    pub async fn models(&self) -> Result<ModelsInfo, Failure> {
        let ex = self.send(None, "models", Retry::Retryable).await;
        if let Some(f) = ex.failure {
            return Err(f);
        }
        let body = ex.body.unwrap_or_default();
        let json: Value = serde_json::from_str(&body).map_err(|e| {
            Failure::new(
                FailureKind::InvalidJson,
                format!("GET /models: {e}: {}", snippet(&body)),
            )
        })?;
        let data = json
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let ids = data
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
            .collect();
        let max_model_len = data
            .iter()
            .find_map(|m| m.get("max_model_len").and_then(Value::as_u64))
            .or_else(|| {
                data.iter()
                    .find_map(|m| m.pointer("/meta/n_ctx_train").and_then(Value::as_u64))
            });
        Ok(ModelsInfo {
            ids,
            max_model_len,
            server: ex.server,
        })
    }

    /// `GET` a path relative to the base URL (for example `metrics`), with retries. The body is
    /// capped and redacted like every other; `failure` is set for non-2xx statuses.
    pub async fn get(&self, path: &str) -> Exchange {
        self.send(None, path, Retry::Retryable).await
    }

    /// POST a JSON body to `path` with retries and return the raw exchange, without parsing it
    /// as a completion (for responses read by their own parser, such as prompt logprobs).
    pub async fn post(&self, path: &str, body: &Value) -> Exchange {
        self.send(Some(body), path, Retry::Retryable).await
    }

    /// As [`Client::post`], for a request sent with `stream: true`: a timeout is not retried,
    /// because a stream that did not end within `--timeout` would not end on another attempt
    /// either, so the request ends within one `--timeout`, not `--retries + 1` of them.
    pub async fn post_stream(&self, path: &str, body: &Value) -> Exchange {
        self.send(Some(body), path, Retry::NotOnTimeout).await
    }

    /// POST a completion request (`path` is `chat/completions` or `completions`) and parse it. A
    /// reply with a part too long to keep (`reply_cap`) is cut, body too, and fails as such.
    pub async fn complete(&self, path: &str, body: &Value) -> Exchange {
        let mut ex = self.send(Some(body), path, Retry::Retryable).await;
        if ex.failure.is_none() {
            match parse_completion(ex.body.as_deref().unwrap_or("")) {
                Ok(mut c) => {
                    ex.failure = match reply_cap::cut_too_long(&mut c) {
                        Some(cut) => {
                            if let Some(body) = ex.body.as_mut() {
                                body.truncate(reply_cap::cut_body(body).len());
                                body.shrink_to_fit();
                            }
                            Some(cut)
                        }
                        None => c.problem(),
                    };
                    ex.completion = Some(c);
                }
                Err(f) => ex.failure = Some(f),
            }
        }
        ex
    }

    async fn send(&self, body: Option<&Value>, path: &str, retry: Retry) -> Exchange {
        let started = Instant::now();
        let deadline = self.opts.deadline();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut a = self.attempt(body, path).await;
            let retry = a.failure.as_ref().is_some_and(|f| retry.covers(f.kind))
                && attempts <= self.opts.retry.retries;
            let wait = retry
                .then(|| {
                    let left = deadline.saturating_sub(started.elapsed());
                    self.opts
                        .retry
                        .wait_within(attempts - 1, a.retry_after, left)
                })
                .and_then(|wait| match wait {
                    Ok(wait) => Some(wait),
                    Err(past) => {
                        if let Some(f) = a.failure.as_mut() {
                            f.message.push_str(&format!(
                                " (not retried: the {:.1} s wait would pass the request's \
                                 deadline of {} s, (--retries + 1) x --timeout)",
                                past.wait.as_secs_f64(),
                                deadline.as_secs()
                            ));
                        }
                        None
                    }
                });
            let Some(wait) = wait else {
                return Exchange {
                    status: a.status,
                    body: a.body,
                    server: a.server,
                    latency: a.latency,
                    elapsed: started.elapsed(),
                    attempts,
                    completion: None,
                    failure: a.failure,
                };
            };
            tokio::time::sleep(wait).await;
        }
    }

    async fn attempt(&self, body: Option<&Value>, path: &str) -> Attempt {
        if let Some(pacer) = &self.pacer {
            pacer.wait().await;
        }
        let url = format!("{}/{}", self.base_url, path);
        let mut req = match body {
            Some(b) => self.http.post(&url).json(b),
            None => self.http.get(&url),
        };
        if let Some(key) = &self.key {
            req = req.bearer_auth(key.expose());
        }
        let start = Instant::now();
        let mut out = Attempt {
            status: None,
            body: None,
            server: None,
            retry_after: None,
            latency: Duration::ZERO,
            failure: None,
        };
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                out.latency = start.elapsed();
                out.failure = Some(self.transport_failure(&e, &url));
                return out;
            }
        };
        let status = resp.status();
        out.status = Some(status.as_u16());
        let header = |name: reqwest::header::HeaderName| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        // A header is the server's text like the body: a hostile one echoes the key there too.
        out.server = header(reqwest::header::SERVER).map(|v| self.redact(&v));
        out.retry_after = header(reqwest::header::RETRY_AFTER)
            .and_then(|v| parse_retry_after(&v, SystemTime::now()));
        let body = self.read_capped(resp).await;
        out.latency = start.elapsed();
        let text = match body {
            Ok(t) => t,
            Err(f) => {
                out.failure = Some(f);
                return out;
            }
        };
        if !status.is_success() {
            let kind = if status.as_u16() == 429 {
                FailureKind::RateLimited
            } else if status.is_server_error() {
                FailureKind::ServerError
            } else {
                FailureKind::HttpStatus
            };
            out.failure = Some(Failure::new(
                kind,
                format!("HTTP {}: {} ({url})", status.as_u16(), snippet(&text)),
            ));
        }
        out.body = Some(text);
        out
    }

    async fn read_capped(&self, mut resp: reqwest::Response) -> Result<String, Failure> {
        let cap = self.opts.max_body_bytes;
        let too_large = || {
            Failure::new(
                FailureKind::BodyTooLarge,
                format!("response body exceeds {cap} bytes (--max-response-bytes)"),
            )
        };
        if resp.content_length().is_some_and(|n| n as usize > cap) {
            return Err(too_large());
        }
        let mut buf = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if buf.len() + chunk.len() > cap {
                        return Err(too_large());
                    }
                    buf.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return Err(self.transport_failure(&e, resp.url().as_str())),
            }
        }
        Ok(self.redact_body(&String::from_utf8_lossy(&buf)))
    }

    /// A response body with the key redacted ([`Client::redact`]), also where it is split
    /// across the body's logprob tokens (`split_secret`).
    fn redact_body(&self, body: &str) -> String {
        let redacted = self.redact(body);
        match &self.key {
            Some(k) => {
                super::split_secret::redact_tokens(k.expose(), &redacted).unwrap_or(redacted)
            }
            None => redacted,
        }
    }

    /// `text` with this endpoint's key redacted ([`ApiKey::redact`]). Every body, header and
    /// message the client returns has been through it; a caller that joins pieces of bodies
    /// (the deltas of a stream) passes the joined text through it again, since a key split
    /// across two pieces is whole only there.
    pub fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(k) => k.redact(text),
            None => text.to_string(),
        }
    }

    fn transport_failure(&self, e: &reqwest::Error, url: &str) -> Failure {
        let kind = if e.is_timeout() {
            FailureKind::Timeout
        } else {
            FailureKind::Connect
        };
        let mut msg = format!("{url}: {e}");
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            msg.push_str(&format!(": {s}"));
            source = s.source();
        }
        if kind == FailureKind::Timeout {
            msg.push_str(&format!(
                " (after {}s, --timeout)",
                self.opts.timeout.as_secs_f64()
            ));
        }
        Failure::new(kind, self.redact(&msg))
    }
}
