//! coherence-testkit: a fake OpenAI-compatible server on loopback, for coherence's tests and
//! benchmarks. Unpublished; a dev-dependency of `coherence` only, so none of it ships.
//!
//! Each test decides the behaviour per request with a handler: answers, latency, HTTP errors with
//! `Retry-After`, hangs, connection resets, invalid JSON, HTML pages, empty choices, null content,
//! reasoning-only replies, huge bodies and event streams that never end. It speaks just enough
//! HTTP/1.1 (one request per connection) to be driven by any real client. It is written by hand
//! on a bare `TcpStream` rather than on an HTTP server library because the failures it injects
//! are below what such a library lets a handler do: a connection reset (SO_LINGER 0, then
//! close), a body without `Content-Length`, a request that is never answered.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request as the fake server saw it.
#[derive(Debug, Clone)]
pub struct Incoming {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// How many earlier requests carried the same path and question (0 for the first).
    pub call: u32,
}

impl Incoming {
    /// The last user message, or the raw completion prompt.
    pub fn question(&self) -> String {
        if let Some(p) = self.body.get("prompt").and_then(Value::as_str) {
            return p.to_string();
        }
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| {
                m.iter()
                    .rev()
                    .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            })
            .and_then(|m| m.get("content").and_then(Value::as_str))
            .unwrap_or_default()
            .to_string()
    }

    pub fn max_tokens(&self) -> Option<u64> {
        self.body.get("max_tokens").and_then(Value::as_u64)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn is_raw_completion(&self) -> bool {
        self.path.ends_with("/completions") && !self.path.ends_with("/chat/completions")
    }
}

/// What the fake server does with one request.
#[derive(Debug, Clone)]
pub enum ReplyKind {
    /// A well-formed completion (chat or raw, matching the request path).
    Answer {
        content: Option<String>,
        reasoning: Option<String>,
        finish_reason: String,
        completion_tokens: u64,
    },
    /// Any status with a JSON body.
    Json { status: u16, body: Value },
    /// Any status with raw bytes and a content type.
    Raw {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
    /// A 200 streamed without Content-Length, `bytes` long.
    Huge { bytes: usize },
    /// A 200 event stream that never ends: `event` sent every `every`, until the client leaves.
    Endless { event: String, every: Duration },
    /// Never answer.
    Hang,
    /// Reset the connection after reading the request.
    Reset,
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub kind: ReplyKind,
    pub delay: Duration,
    pub headers: Vec<(String, String)>,
}

impl Reply {
    fn of(kind: ReplyKind) -> Self {
        Reply {
            kind,
            delay: Duration::ZERO,
            headers: Vec::new(),
        }
    }

    /// A normal answer with `finish_reason: stop`.
    pub fn content(text: &str) -> Self {
        Reply::of(ReplyKind::Answer {
            content: Some(text.to_string()),
            reasoning: None,
            finish_reason: "stop".into(),
            completion_tokens: text.split_whitespace().count().max(1) as u64,
        })
    }

    /// An answer with a separate `reasoning_content` field.
    pub fn with_reasoning(text: &str, reasoning: &str) -> Self {
        Reply::of(ReplyKind::Answer {
            content: Some(text.to_string()),
            reasoning: Some(reasoning.to_string()),
            finish_reason: "stop".into(),
            completion_tokens: (text.len() + reasoning.len()) as u64 / 4 + 1,
        })
    }

    /// content null, finish_reason length, reasoning present: the budget went to reasoning.
    pub fn reasoning_only(reasoning: &str, tokens: u64) -> Self {
        Reply::of(ReplyKind::Answer {
            content: None,
            reasoning: Some(reasoning.to_string()),
            finish_reason: "length".into(),
            completion_tokens: tokens,
        })
    }

    /// content null with no reasoning.
    pub fn null_content() -> Self {
        Reply::of(ReplyKind::Answer {
            content: None,
            reasoning: None,
            finish_reason: "stop".into(),
            completion_tokens: 0,
        })
    }

    /// A generated answer of exactly `tokens` completion tokens (for throughput tests).
    pub fn tokens(tokens: u64) -> Self {
        Reply::of(ReplyKind::Answer {
            content: Some("tok ".repeat(tokens as usize).trim_end().to_string()),
            reasoning: None,
            finish_reason: "length".into(),
            completion_tokens: tokens,
        })
    }

    pub fn status(status: u16, message: &str) -> Self {
        Reply::of(ReplyKind::Json {
            status,
            body: json!({"error": {"message": message, "code": status}}),
        })
    }

    pub fn json(status: u16, body: Value) -> Self {
        Reply::of(ReplyKind::Json { status, body })
    }

    pub fn html(status: u16) -> Self {
        Reply::of(ReplyKind::Raw {
            status,
            content_type: "text/html".into(),
            body: format!("<!DOCTYPE html><html><body><h1>{status} Bad Gateway</h1></body></html>")
                .into_bytes(),
        })
    }

    pub fn invalid_json() -> Self {
        Reply::of(ReplyKind::Raw {
            status: 200,
            content_type: "application/json".into(),
            body: b"{\"choices\": [ {\"message\": ".to_vec(),
        })
    }

    pub fn empty_choices() -> Self {
        Reply::json(200, json!({"object": "chat.completion", "choices": []}))
    }

    pub fn huge(bytes: usize) -> Self {
        Reply::of(ReplyKind::Huge { bytes })
    }

    /// A 200 event stream without Content-Length that sends `event` every `every` and never ends.
    pub fn endless_stream(event: &str, every: Duration) -> Self {
        Reply::of(ReplyKind::Endless {
            event: event.to_string(),
            every,
        })
    }

    pub fn hang() -> Self {
        Reply::of(ReplyKind::Hang)
    }

    pub fn reset() -> Self {
        Reply::of(ReplyKind::Reset)
    }

    /// Wait this long before answering.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

type Handler = dyn Fn(&Incoming) -> Reply + Send + Sync;

/// The context window `GET /v1/models` reports unless told otherwise.
pub const DEFAULT_MAX_MODEL_LEN: u64 = 4096;

struct Shared {
    model: String,
    fingerprint: Option<String>,
    /// `max_model_len` in the models listing.
    max_model_len: u64,
    handler: Box<Handler>,
    log: Mutex<Vec<Incoming>>,
    calls: Mutex<HashMap<(String, String), u32>>,
}

/// A running fake server. Dropping it stops it.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeServer {
    /// Start on a free loopback port. `GET /v1/models` lists `model`; every other request goes
    /// to `handler`.
    pub fn start(
        model: &str,
        handler: impl Fn(&Incoming) -> Reply + Send + Sync + 'static,
    ) -> Self {
        Self::start_with(model, None, handler)
    }

    /// As `start`, with a `system_fingerprint` in every answer.
    pub fn start_with(
        model: &str,
        fingerprint: Option<&str>,
        handler: impl Fn(&Incoming) -> Reply + Send + Sync + 'static,
    ) -> Self {
        Self::start_full(model, fingerprint, DEFAULT_MAX_MODEL_LEN, handler)
    }

    /// As `start`, its models listing reporting a context window of `max_model_len` tokens
    /// (a hostile server may report 2^63 - 1).
    pub fn start_with_context(
        model: &str,
        max_model_len: u64,
        handler: impl Fn(&Incoming) -> Reply + Send + Sync + 'static,
    ) -> Self {
        Self::start_full(model, None, max_model_len, handler)
    }

    fn start_full(
        model: &str,
        fingerprint: Option<&str>,
        max_model_len: u64,
        handler: impl Fn(&Incoming) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let shared = Arc::new(Shared {
            model: model.to_string(),
            fingerprint: fingerprint.map(str::to_string),
            max_model_len,
            handler: Box::new(handler),
            log: Mutex::new(Vec::new()),
            calls: Mutex::new(HashMap::new()),
        });
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let addr = std_listener.local_addr().expect("local addr");
        let (tx, rx) = tokio::sync::oneshot::channel();
        let state = shared.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = TcpListener::from_std(std_listener).expect("listener");
                let accept = async {
                    loop {
                        if let Ok((stream, _)) = listener.accept().await {
                            tokio::spawn(serve(stream, state.clone()));
                        }
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = rx => {}
                }
            });
            rt.shutdown_background();
        });
        FakeServer {
            addr,
            shared,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The OpenAI-compatible base URL, ending in `/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far (models listings included).
    pub fn requests(&self) -> Vec<Incoming> {
        self.shared.log.lock().unwrap().clone()
    }

    /// Completion requests received so far.
    pub fn completion_requests(&self) -> Vec<Incoming> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("completions"))
            .collect()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let Some(mut req) = read_request(&mut stream).await else {
        return;
    };
    {
        let mut calls = shared.calls.lock().unwrap();
        let n = calls.entry((req.path.clone(), req.question())).or_insert(0);
        req.call = *n;
        *n += 1;
    }
    shared.log.lock().unwrap().push(req.clone());
    let reply = if req.method == "GET" && req.path.ends_with("/models") {
        Reply::json(
            200,
            json!({"object": "list", "data": [{"id": shared.model, "object": "model", "owned_by": "fake", "max_model_len": shared.max_model_len}]}),
        )
    } else {
        (shared.handler)(&req)
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let (status, content_type, body) = match reply.kind {
        ReplyKind::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return;
        }
        ReplyKind::Reset => {
            // Linger 0 makes the close an RST; it does not block for a zero timeout.
            #[allow(deprecated)]
            let _ = stream.set_linger(Some(Duration::ZERO));
            return;
        }
        ReplyKind::Huge { bytes } => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let chunk = vec![b' '; 64 * 1024];
            let mut sent = 0;
            while sent < bytes {
                let n = chunk.len().min(bytes - sent);
                if stream.write_all(&chunk[..n]).await.is_err() {
                    return;
                }
                sent += n;
            }
            return;
        }
        ReplyKind::Endless { event, every } => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            while stream.write_all(event.as_bytes()).await.is_ok() {
                tokio::time::sleep(every).await;
            }
            return;
        }
        ReplyKind::Json { status, body } => (
            status,
            "application/json".to_string(),
            body.to_string().into_bytes(),
        ),
        ReplyKind::Raw {
            status,
            content_type,
            body,
        } => (status, content_type, body),
        ReplyKind::Answer {
            content,
            reasoning,
            finish_reason,
            completion_tokens,
        } => {
            let body = answer_body(
                &shared,
                &req,
                content,
                reasoning,
                &finish_reason,
                completion_tokens,
            );
            (
                200,
                "application/json".to_string(),
                body.to_string().into_bytes(),
            )
        }
    };
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    if !reply
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("server"))
    {
        head.push_str("Server: fake-openai/1.0\r\n");
    }
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&body).await;
    let _ = stream.shutdown().await;
}

/// What the fake reports as `usage.prompt_tokens` for a request body: a quarter of the length of
/// what is tokenized (the messages or the prompt), not of the whole body, so two fakes serving
/// different model names agree on the same request, as one real model does.
pub fn prompt_tokens(body: &Value) -> u64 {
    let tokenized = body
        .get("messages")
        .or_else(|| body.get("prompt"))
        .map_or(0, |v| v.to_string().len());
    (tokenized / 4) as u64
}

fn answer_body(
    shared: &Shared,
    req: &Incoming,
    content: Option<String>,
    reasoning: Option<String>,
    finish_reason: &str,
    completion_tokens: u64,
) -> Value {
    let prompt_tokens = prompt_tokens(&req.body);
    let mut choice = if req.is_raw_completion() {
        json!({"index": 0, "text": content, "finish_reason": finish_reason})
    } else {
        json!({"index": 0, "finish_reason": finish_reason,
               "message": {"role": "assistant", "content": content, "reasoning_content": reasoning}})
    };
    let wants_logprobs = req
        .body
        .get("logprobs")
        .is_some_and(|v| v == &json!(true) || v.is_u64());
    if let (true, Some(text)) = (wants_logprobs, &content) {
        let tokens = word_tokens(text);
        choice["logprobs"] = if req.is_raw_completion() {
            json!({"tokens": tokens})
        } else {
            json!({"content": tokens.iter().map(|t| json!({"token": t, "logprob": -0.1})).collect::<Vec<_>>()})
        };
    }
    json!({
        "id": "fake-1",
        "object": if req.is_raw_completion() { "text_completion" } else { "chat.completion" },
        "model": shared.model,
        "system_fingerprint": shared.fingerprint,
        "choices": [choice],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })
}

/// Split text into word tokens that keep their leading whitespace, as real tokenizers do.
fn word_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_whitespace() && current.chars().any(|x| !x.is_whitespace()) {
            tokens.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<Incoming> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[header_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Incoming {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        call: 0,
    })
}

impl Reply {
    /// Any status with a plain-text body (for example a Prometheus `/metrics` page).
    pub fn text(status: u16, body: &str) -> Self {
        Reply::of(ReplyKind::Raw {
            status,
            content_type: "text/plain; version=0.0.4".into(),
            body: body.as_bytes().to_vec(),
        })
    }
}
