//! One chat request of a probe and what came back: status, the parsed completion, the raw JSON.

use serde_json::{json, Map, Value};

use super::{ProbeResult, Status};
use crate::endpoint::{parse_completion, Client, Completion};
use crate::text::clip;

/// Sends a probe's chat requests to one endpoint's model.
pub struct Asker<'a> {
    client: &'a Client,
    model: &'a str,
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
    pub failure: Option<String>,
}

impl<'a> Asker<'a> {
    pub fn new(client: &'a Client, model: &'a str) -> Self {
        Asker { client, model }
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
        let text = ex.body.unwrap_or_default();
        let json = serde_json::from_str::<Value>(&text).ok();
        let mut failure = ex.failure.map(|f| f.to_string());
        let completion = match (&failure, &json) {
            (None, Some(_)) => match parse_completion(&text) {
                Ok(c) => Some(c),
                Err(f) => {
                    failure = Some(f.to_string());
                    None
                }
            },
            _ => None,
        };
        Reply {
            status: ex.status,
            body: text,
            json,
            completion,
            failure,
        }
    }
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
    /// was sent; a server error or a broken connection on a valid request is a failure. None
    /// when the request succeeded.
    pub fn refused(&self, probe: &'static str) -> Option<ProbeResult> {
        let why = self.failure.clone()?;
        Some(match self.status {
            Some(s) if (400..500).contains(&s) && s != 429 => {
                ProbeResult::new(probe, Status::Unsupported, format!("refused: {why}"))
            }
            _ => ProbeResult::new(probe, Status::Fail, why),
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
