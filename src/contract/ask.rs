//! One chat request of a probe and what came back: status, the parsed completion, the raw JSON;
//! and the tally of every reply, which says whether the endpoint answered any probe at all.

use std::sync::Mutex;

use serde_json::{json, Map, Value};

use super::sse::{self, Stream};
use super::{ProbeResult, Status};
use crate::endpoint::{parse_completion, Client, Completion, Exchange, Failure, FailureKind};
use crate::text::clip;

/// Sends a probe's chat requests to one endpoint's model.
pub struct Asker<'a> {
    client: &'a Client,
    model: &'a str,
    tally: Mutex<Tally>,
}

/// What every request of the probes got back.
#[derive(Default)]
struct Tally {
    /// The HTTP status of each request, None when none came.
    statuses: Vec<Option<u16>>,
    /// The first failure, quoted when no request was answered.
    first_failure: Option<String>,
}

/// One reply.
pub struct Reply {
    pub status: Option<u16>,
    /// The raw body (capped and redacted by the client).
    pub body: String,
    /// The body as JSON, when it is JSON.
    pub json: Option<Value>,
    /// The parsed first choice, for a 2xx JSON completion.
    pub completion: Option<Completion>,
    /// Why the request failed: transport, status or parse.
    pub failure: Option<Failure>,
}

impl<'a> Asker<'a> {
    pub fn new(client: &'a Client, model: &'a str) -> Self {
        Asker {
            client,
            model,
            tally: Mutex::default(),
        }
    }

    /// A non-streamed chat body at temperature 0 with one user message, `extra` fields over it.
    pub fn body(&self, question: &str, max_tokens: u32, extra: Value) -> Value {
        self.body_with(
            json!([{"role": "user", "content": question}]),
            max_tokens,
            extra,
        )
    }

    /// As [`Asker::body`], with the whole `messages` list given.
    pub fn body_with(&self, messages: Value, max_tokens: u32, extra: Value) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), self.model.into());
        body.insert("messages".into(), messages);
        body.insert("max_tokens".into(), max_tokens.into());
        body.insert("temperature".into(), 0.into());
        body.insert("stream".into(), false.into());
        if let Value::Object(extra) = extra {
            body.extend(extra);
        }
        Value::Object(body)
    }

    pub async fn send(&self, body: &Value) -> Reply {
        let ex = self.client.post("chat/completions", body).await;
        self.reply(ex)
    }

    /// Send a body with `stream: true`: the reply, and its event stream when it is one, whose
    /// joined text has the key redacted again (a key split across two deltas is whole only
    /// there). The request ends within one `--timeout` ([`Client::post_stream`]).
    pub async fn stream(&self, body: &Value) -> (Reply, Option<Stream>) {
        let ex = self.client.post_stream("chat/completions", body).await;
        let reply = self.reply(ex);
        let stream = sse::read(&reply.body).map(|mut s| {
            s.text = self.client.redact(&s.text);
            for call in &mut s.tool_calls {
                call.name = self.client.redact(&call.name);
                call.arguments = self.client.redact(&call.arguments);
            }
            s
        });
        (reply, stream)
    }

    fn reply(&self, ex: Exchange) -> Reply {
        let text = ex.body.unwrap_or_default();
        let json = serde_json::from_str::<Value>(&text).ok();
        let mut failure = ex.failure;
        let completion = match (&failure, &json) {
            (None, Some(_)) => match parse_completion(&text) {
                Ok(c) => Some(c),
                Err(f) => {
                    failure = Some(f);
                    None
                }
            },
            _ => None,
        };
        if let Ok(mut tally) = self.tally.lock() {
            tally.statuses.push(ex.status);
            if tally.first_failure.is_none() {
                tally.first_failure = failure.as_ref().map(Failure::to_string);
            }
        }
        Reply {
            status: ex.status,
            body: text,
            json,
            completion,
            failure,
        }
    }

    /// Why the endpoint could not be probed when no request got a 2xx reply (every one refused,
    /// failed or unanswered): the probes' verdicts would say nothing about the server's contract.
    /// None when one was answered.
    pub fn unanswered(&self) -> Option<String> {
        let tally = self.tally.lock().ok()?;
        let sent = tally.statuses.len();
        if sent == 0
            || tally
                .statuses
                .iter()
                .any(|s| s.is_some_and(|s| (200..300).contains(&s)))
        {
            return None;
        }
        let said = tally
            .first_failure
            .as_deref()
            .map(|f| format!("; it said: {}", clip(f, 200)))
            .unwrap_or_default();
        let refused_auth = tally.statuses.iter().all(|s| matches!(s, Some(401 | 403)));
        Some(if refused_auth {
            let status = tally.statuses[0].unwrap_or(401);
            format!(
                "the endpoint refused authentication (HTTP {status}) on every one of the {sent} \
                 probe requests: check the API key (--api-key-env NAME=ENVVAR, else \
                 OPENAI_API_KEY){said}"
            )
        } else {
            format!(
                "the endpoint answered none of the {sent} probe requests ({}){said}",
                status_counts(&tally.statuses)
            )
        })
    }
}

/// `HTTP 418 on all 24`, or `HTTP 500 x 3, no reply x 21`: what the requests got, most first.
fn status_counts(statuses: &[Option<u16>]) -> String {
    let mut counts: Vec<(Option<u16>, usize)> = Vec::new();
    for s in statuses {
        match counts.iter_mut().find(|(k, _)| k == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((*s, 1)),
        }
    }
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let name = |s: Option<u16>| s.map_or("no reply".to_string(), |s| format!("HTTP {s}"));
    if let [(only, n)] = counts.as_slice() {
        return format!("{} on all {n}", name(*only));
    }
    counts
        .iter()
        .map(|(s, n)| format!("{} x {n}", name(*s)))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Reply {
    /// The verdict of a reply that cannot be read as a completion ([`Reply::refused`], or a body
    /// that is not one); None when it is a completion.
    pub fn unusable(&self, probe: &'static str) -> Option<ProbeResult> {
        if self.completion.is_some() {
            return None;
        }
        self.refused(probe).or_else(|| {
            Some(ProbeResult::new(
                probe,
                Status::Fail,
                format!("not a completion: {}", clip(&self.body, 200)),
            ))
        })
    }

    /// The verdict of a failed request: a client error means the server does not support what
    /// was sent; a server error or a broken connection on a valid request is a failure, and so
    /// is a reply that did not end within `--timeout` (a stream that never ends). None when the
    /// request succeeded.
    pub fn refused(&self, probe: &'static str) -> Option<ProbeResult> {
        let failure = self.failure.as_ref()?;
        Some(match self.status {
            Some(s) if (400..500).contains(&s) && s != 429 => {
                ProbeResult::new(probe, Status::Unsupported, format!("refused: {failure}"))
            }
            Some(s) if failure.kind == FailureKind::Timeout => ProbeResult::new(
                probe,
                Status::Fail,
                format!("HTTP {s}, but the reply did not end within --timeout: {failure}"),
            ),
            _ => ProbeResult::new(probe, Status::Fail, failure.to_string()),
        })
    }

    /// The completion's text as sent (empty when none).
    pub fn text(&self) -> &str {
        self.completion
            .as_ref()
            .and_then(|c| c.content.as_deref())
            .unwrap_or("")
    }

    pub fn finish_reason(&self) -> Option<&str> {
        self.completion.as_ref()?.finish_reason.as_deref()
    }

    /// `usage.prompt_tokens`, `usage.completion_tokens`, `usage.total_tokens`.
    pub fn usage(&self) -> (Option<u64>, Option<u64>, Option<u64>) {
        match self.completion.as_ref().and_then(|c| c.usage.as_ref()) {
            Some(u) => (u.prompt_tokens, u.completion_tokens, u.total_tokens),
            None => (None, None, None),
        }
    }
}
