//! Turning an OpenAI-compatible response body into a completion, or a failure with a clear reason.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::logprobs::{parse_logprobs, LogprobToken};

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub total_tokens: Option<u64>,
}

/// A completion's text, shared: repeats that said the same thing hold one copy once a run is
/// read back (see `run::journal::load_for_scoring`).
pub type Text = Arc<str>;

/// What one successful response said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// `message.content` (chat) or `text` (completions), as sent.
    pub content: Option<Text>,
    /// The answer: content without its reasoning (a `<think>…</think>` block, harmony channels
    /// other than the final one) or control tokens (`score::channels`).
    pub answer: Option<Text>,
    /// Reasoning from `reasoning`, `reasoning_content`, a `<think>` block or harmony channels.
    pub reasoning: Option<Text>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    pub model: Option<String>,
    pub system_fingerprint: Option<String>,
    /// The generated tokens with their logprobs and top-k, when the server sent them
    /// (`--logprobs`) and they were well formed. Not saved apart from the raw body: a record
    /// read back gets them from it again ([`Completion::read_body`]).
    #[serde(skip)]
    pub logprobs: Option<Vec<LogprobToken>>,
    /// `message.tool_calls`, as the server sent them (empty when it called none). Not saved
    /// apart from the raw body either.
    #[serde(skip)]
    pub tool_calls: Vec<ToolCall>,
}

/// One entry of a chat message's `tool_calls`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCall {
    pub id: Option<String>,
    /// `function.name`.
    pub name: Option<String>,
    /// `function.arguments`: JSON text, as the model wrote it (for one sent as another JSON
    /// type, that value's JSON text).
    pub arguments: Option<String>,
    /// The JSON type `function.arguments` came as when it was not the JSON-encoded string the
    /// OpenAI API sends (`object`, `array`, …); None for a string or no arguments.
    pub arguments_type: Option<String>,
}

/// Why a request produced no usable answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Could not connect, or the connection broke.
    Connect,
    Timeout,
    /// HTTP 429 after every retry.
    RateLimited,
    /// HTTP 5xx after every retry.
    ServerError,
    /// Any other non-success HTTP status (not retried).
    HttpStatus,
    /// The body was not JSON.
    InvalidJson,
    /// The body was an HTML page (a proxy or load balancer error).
    HtmlPage,
    /// JSON with an `error` object instead of choices.
    ErrorObject,
    NoChoices,
    /// `content` was null or missing and no reasoning explains it.
    NullContent,
    /// The body exceeded `--max-response-bytes`.
    BodyTooLarge,
    /// content null + finish_reason length + reasoning present: the reasoning used the whole budget.
    ReasoningConsumedBudget,
    /// A text or a tool call's arguments passed `REPLY_PART_BYTES`: kept cut, no answer.
    ReplyTooLong,
}

impl FailureKind {
    /// Failures of the request itself (exit 3, re-sent on `--resume`), as opposed to the model
    /// answering in a way that leaves nothing to score.
    pub fn is_request_failure(self) -> bool {
        !matches!(
            self,
            FailureKind::ReasoningConsumedBudget | FailureKind::ReplyTooLong
        )
    }

    /// Worth another attempt: transport trouble, 429 and 5xx.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            FailureKind::Connect
                | FailureKind::Timeout
                | FailureKind::RateLimited
                | FailureKind::ServerError
        )
    }

    pub fn label(self) -> &'static str {
        match self {
            FailureKind::Connect => "connection error",
            FailureKind::Timeout => "timeout",
            FailureKind::RateLimited => "rate limited (429)",
            FailureKind::ServerError => "server error (5xx)",
            FailureKind::HttpStatus => "HTTP error",
            FailureKind::InvalidJson => "invalid JSON",
            FailureKind::HtmlPage => "HTML error page",
            FailureKind::ErrorObject => "error object",
            FailureKind::NoChoices => "no choices",
            FailureKind::NullContent => "null content",
            FailureKind::BodyTooLarge => "response too large",
            FailureKind::ReasoningConsumedBudget => "reasoning consumed the budget",
            FailureKind::ReplyTooLong => "reply too long",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.label(), self.message)
    }
}

/// Parse a 2xx body. `Ok` holds what the server said; `Completion::problem` tells whether it is usable.
pub fn parse_completion(body: &str) -> Result<Completion, Failure> {
    let trimmed = body.trim_start();
    if trimmed.starts_with('<') {
        return Err(Failure::new(
            FailureKind::HtmlPage,
            format!("expected JSON, got an HTML page: {}", snippet(trimmed)),
        ));
    }
    let json: Value = serde_json::from_str(body).map_err(|e| {
        Failure::new(
            FailureKind::InvalidJson,
            format!("{e} in body: {}", snippet(body)),
        )
    })?;
    if let Some(err) = json.get("error").filter(|e| !e.is_null()) {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        return Err(Failure::new(FailureKind::ErrorObject, msg));
    }
    let choice = json
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| Failure::new(FailureKind::NoChoices, "the response has no choices"))?;

    let str_at = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let raw_content = match choice.get("message") {
        Some(msg) => msg.get("content"),
        None => choice.get("text"),
    };
    if let Some(other) = raw_content.filter(|v| !v.is_null() && !v.is_string()) {
        return Err(Failure::new(
            FailureKind::NullContent,
            format!(
                "content is {}, not text: {}",
                json_kind(other),
                snippet(&other.to_string())
            ),
        ));
    }
    let (content, field_reasoning) = match choice.get("message") {
        Some(msg) => (
            str_at(msg, "content"),
            str_at(msg, "reasoning_content").or_else(|| str_at(msg, "reasoning")),
        ),
        None => (str_at(choice, "text"), None),
    };
    let (answer, think) = match &content {
        Some(c) => {
            let (a, t) = crate::score::channels::split(c);
            (Some(a), t)
        }
        None => (None, None),
    };
    let reasoning = match (field_reasoning, think) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    };
    let content = content.map(Text::from);
    // The answer is most often the content itself: one copy for both.
    let answer = answer.map(|a| match &content {
        Some(c) if **c == *a => c.clone(),
        _ => Text::from(a),
    });
    Ok(Completion {
        content,
        answer,
        reasoning: reasoning.filter(|r| !r.trim().is_empty()).map(Text::from),
        finish_reason: str_at(choice, "finish_reason"),
        usage: json
            .get("usage")
            .and_then(|u| serde_json::from_value(u.clone()).ok()),
        model: str_at(&json, "model"),
        system_fingerprint: str_at(&json, "system_fingerprint"),
        logprobs: token_logprobs(choice),
        tool_calls: tool_calls(choice),
    })
}

/// The choice's generated tokens, when it lists them well formed and not empty.
fn token_logprobs(choice: &Value) -> Option<Vec<LogprobToken>> {
    parse_logprobs(choice).ok().filter(|t| !t.is_empty())
}

/// The choice's `message.tool_calls`.
fn tool_calls(choice: &Value) -> Vec<ToolCall> {
    let str_at =
        |v: &Value, path: &str| v.pointer(path).and_then(Value::as_str).map(str::to_string);
    choice
        .pointer("/message/tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    let (arguments, arguments_type) = match c.pointer("/function/arguments") {
                        None | Some(Value::Null) => (None, None),
                        Some(Value::String(text)) => (Some(text.clone()), None),
                        Some(other) => (Some(other.to_string()), Some(json_type(other).into())),
                    };
                    ToolCall {
                        id: str_at(c, "/id"),
                        name: str_at(c, "/function/name"),
                        arguments,
                        arguments_type,
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The name of a JSON value's type, as JSON Schema names it.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Completion {
    /// Reads `content`, `answer` and `reasoning` from the raw response body, as the response was
    /// first parsed, for a record that keeps a long reply only there (nothing when the body
    /// does not parse).
    pub fn read_texts(&mut self, body: &str) {
        if let Ok(parsed) = parse_completion(body) {
            self.content = parsed.content;
            self.answer = parsed.answer;
            self.reasoning = parsed.reasoning;
        }
    }

    /// Reads the tokens' logprobs and the tool calls from the raw response body, for a
    /// completion read back from a record (which keeps them only there).
    pub fn read_body(&mut self, body: &str) {
        let json: Option<Value> = serde_json::from_str(body).ok();
        if let Some(choice) = json.as_ref().and_then(|j| j.pointer("/choices/0")) {
            self.logprobs = token_logprobs(choice);
            self.tool_calls = tool_calls(choice);
        }
    }

    /// The generated tokens' texts, when the server listed them.
    pub fn token_texts(&self) -> Option<Vec<String>> {
        self.logprobs
            .as_ref()
            .map(|t| t.iter().map(|t| t.token.clone()).collect())
    }

    /// Why this completion leaves nothing to score, if it does. A reply that calls a tool has
    /// answered, whatever its text.
    pub fn problem(&self) -> Option<Failure> {
        let empty_answer = self.answer.as_deref().is_none_or(|a| a.trim().is_empty());
        if !empty_answer || !self.tool_calls.is_empty() {
            return None;
        }
        if self.finish_reason.as_deref() == Some("length") && self.reasoning.is_some() {
            let used = self
                .usage
                .and_then(|u| u.completion_tokens)
                .map(|n| format!(" ({n} tokens)"))
                .unwrap_or_default();
            return Some(Failure::new(
                FailureKind::ReasoningConsumedBudget,
                format!("content is empty and finish_reason is length: the reasoning used the whole budget{used}"),
            ));
        }
        if self.content.is_none() {
            return Some(Failure::new(
                FailureKind::NullContent,
                format!(
                    "content is null (finish_reason {})",
                    self.finish_reason.as_deref().unwrap_or("missing")
                ),
            ));
        }
        None
    }
}

/// "a number", "an object"...: what a JSON value is, for messages.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The start of a body for an error message, on one line.
pub(crate) fn snippet(body: &str) -> String {
    crate::text::clip(body, 160)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_that_is_not_text_says_what_it_is() {
        let body = |content: &str| {
            format!(
                r#"{{"choices":[{{"message":{{"content":{content}}},"finish_reason":"stop"}}]}}"#
            )
        };
        let f = parse_completion(&body("42")).unwrap_err();
        assert_eq!(f.message, "content is a number, not text: 42");
        let f = parse_completion(&body(r#"{"a":1}"#)).unwrap_err();
        assert_eq!(f.message, r#"content is an object, not text: {"a":1}"#);
        let null = parse_completion(&body("null")).unwrap();
        assert!(null
            .problem()
            .unwrap()
            .message
            .starts_with("content is null"));
    }

    #[test]
    fn reads_chat_content_reasoning_and_usage() {
        let body = r#"{"model":"m","system_fingerprint":"fp1","choices":[{"message":{"content":"3","reasoning_content":"count"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#;
        let c = parse_completion(body).unwrap();
        assert_eq!(c.answer.as_deref(), Some("3"));
        assert_eq!(c.reasoning.as_deref(), Some("count"));
        assert_eq!(c.usage.unwrap().completion_tokens, Some(2));
        assert_eq!(c.system_fingerprint.as_deref(), Some("fp1"));
        assert!(c.problem().is_none());
    }

    #[test]
    fn logprobs_and_tool_calls_are_read_once_with_the_response() {
        let body = r#"{"choices":[{"message":{"content":"3","tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":1}"}}]},"logprobs":{"content":[{"token":"3","logprob":-0.25,"top_logprobs":[{"token":"3","logprob":-0.25},{"token":"4","logprob":-1.5}]}]},"finish_reason":"stop"}]}"#;
        let c = parse_completion(body).unwrap();
        let tokens = c.logprobs.as_deref().unwrap();
        assert_eq!(tokens.len(), 1);
        assert_eq!(tokens[0].top[1], ("4".into(), -1.5));
        assert_eq!(c.token_texts().unwrap(), ["3"]);
        assert_eq!(
            c.tool_calls,
            [ToolCall {
                id: Some("c1".into()),
                name: Some("add".into()),
                arguments: Some("{\"a\":1}".into()),
                arguments_type: None,
            }]
        );
        // Arguments sent as an object, not the JSON-encoded string the API sends: kept, and
        // said so.
        let object = parse_completion(
            r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}}}]},"finish_reason":"tool_calls"}]}"#,
        )
        .unwrap();
        assert_eq!(object.tool_calls[0].arguments.as_deref(), Some("{\"a\":1}"));
        assert_eq!(
            object.tool_calls[0].arguments_type.as_deref(),
            Some("object")
        );
        let mut read_back = Completion {
            logprobs: None,
            tool_calls: Vec::new(),
            ..c.clone()
        };
        read_back.read_body(body);
        assert_eq!(read_back, c);
        let plain =
            parse_completion(r#"{"choices":[{"message":{"content":"3"},"logprobs":null}]}"#)
                .unwrap();
        assert_eq!((plain.logprobs, plain.tool_calls.len()), (None, 0));
        let broken =
            r#"{"choices":[{"text":"3","logprobs":{"tokens":["3"],"token_logprobs":[]}}]}"#;
        assert_eq!(parse_completion(broken).unwrap().logprobs, None);
    }

    #[test]
    fn raw_completion_text_is_read() {
        let c =
            parse_completion(r#"{"choices":[{"text":" Paris","finish_reason":"stop"}]}"#).unwrap();
        assert_eq!(c.answer.as_deref(), Some("Paris"));
    }

    #[test]
    fn broken_bodies_are_failures_with_reasons() {
        let kind = |b: &str| parse_completion(b).unwrap_err().kind;
        assert_eq!(
            kind("<!DOCTYPE html><h1>502 Bad Gateway</h1>"),
            FailureKind::HtmlPage
        );
        assert_eq!(kind("{not json"), FailureKind::InvalidJson);
        assert_eq!(kind(r#"{"choices":[]}"#), FailureKind::NoChoices);
        assert_eq!(
            kind(r#"{"error":{"message":"model not found"}}"#),
            FailureKind::ErrorObject
        );
    }

    #[test]
    fn null_content_and_reasoning_budget_are_flagged() {
        let null = parse_completion(
            r#"{"choices":[{"message":{"content":null},"finish_reason":"stop"}]}"#,
        )
        .unwrap();
        assert_eq!(null.problem().unwrap().kind, FailureKind::NullContent);
        let budget = parse_completion(
            r#"{"choices":[{"message":{"content":null,"reasoning":"let me think"},"finish_reason":"length"}]}"#,
        )
        .unwrap();
        assert_eq!(
            budget.problem().unwrap().kind,
            FailureKind::ReasoningConsumedBudget
        );
        let called = parse_completion(
            r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
        )
        .unwrap();
        assert_eq!(called.problem(), None, "a tool call is an answer");
    }
}
