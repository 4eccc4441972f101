//! One line of `records.jsonl`: the full outcome of one request, success or failure; and
//! `Answered`, the smaller form scoring keeps of it.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::endpoint::{cut_body, cut_too_long, Completion, Exchange, Failure, Text};
use crate::score::tool_call::{Call, Reply};
use crate::score::ScorerSpec;

/// Records are merged on this key: the newest record per key wins.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordKey {
    pub prompt: String,
    pub endpoint: String,
    pub max_tokens: u32,
    pub repeat: u32,
}

/// Read back, the completion gets its tokens' logprobs and tool calls from `raw_body` again
/// (`Completion::read_body`): the file keeps them only there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Record {
    pub prompt: String,
    pub endpoint: String,
    pub max_tokens: u32,
    pub repeat: u32,
    /// sha256 (first 16 hex digits) of the exact request body sent.
    pub request_hash: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// The final attempt, from sending the request to the last body byte.
    pub latency_ms: f64,
    /// All attempts and the waits between them.
    pub elapsed_ms: f64,
    pub attempts: u32,
    pub http_status: Option<u16>,
    /// What the response said (content, answer, reasoning, finish_reason, usage, model,
    /// system_fingerprint), as fields of the record itself.
    #[serde(flatten)]
    pub completion: Completion,
    /// The `Server` response header.
    #[serde(default)]
    pub server: Option<String>,
    pub error: Option<Failure>,
    /// Why this request was made, when not part of the plan (e.g. a reasoning retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The final attempt's response body, capped, with any API key redacted.
    pub raw_body: Option<Arc<str>>,
    /// On disk: `content`, `answer` and `reasoning` are left out of the line because one of
    /// them is longer than [`INLINE_TEXT_BYTES`] and `raw_body` holds them (they are read back
    /// from it), so a long reply is written once. Always false in memory.
    #[serde(default, skip_serializing_if = "is_false")]
    pub texts_in_raw_body: bool,
}

/// A completion text longer than this is written only inside the record's `raw_body`, not
/// again as `content`, `answer` and `reasoning` (64 KiB: every ordinary answer keeps its
/// fields, a reply of megabytes is written once).
pub const INLINE_TEXT_BYTES: usize = 64 * 1024;

fn is_false(b: &bool) -> bool {
    !*b
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.with_texts_in_body() {
            Some(line) => Record::serialize(&line, serializer),
            None => Record::serialize(self, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut record = Record::deserialize(deserializer)?;
        if let Some(body) = &record.raw_body {
            if std::mem::take(&mut record.texts_in_raw_body) {
                record.completion.read_texts(body);
            }
            record.completion.read_body(body);
        }
        // A line written before replies were capped is read back as one written since.
        if record.error.is_none() {
            if let Some(cut) = cut_too_long(&mut record.completion) {
                record.error = Some(cut);
                record.raw_body = record.raw_body.map(|b| Arc::from(cut_body(&b)));
            }
        }
        Ok(record)
    }
}

impl Record {
    /// The line to write when a completion text is longer than [`INLINE_TEXT_BYTES`] and the raw
    /// body gives every text back exactly: this record without them, flagged. None otherwise.
    fn with_texts_in_body(&self) -> Option<Record> {
        let c = &self.completion;
        let long = [&c.content, &c.answer, &c.reasoning]
            .into_iter()
            .flatten()
            .any(|t| t.len() > INLINE_TEXT_BYTES);
        let body = self.raw_body.as_deref().filter(|_| long)?;
        let mut back = Completion::default();
        back.read_texts(body);
        let same =
            (&back.content, &back.answer, &back.reasoning) == (&c.content, &c.answer, &c.reasoning);
        same.then(|| Record {
            completion: Completion {
                content: None,
                answer: None,
                reasoning: None,
                ..c.clone()
            },
            texts_in_raw_body: true,
            ..self.clone()
        })
    }
}

impl Record {
    /// The record of one exchange: the slot it answers, the hash of the body sent, when it was
    /// sent, and what came back (the final body kept; no note).
    pub fn of_exchange(
        key: RecordKey,
        request_hash: String,
        started_at: DateTime<Utc>,
        ex: Exchange,
    ) -> Record {
        Record {
            prompt: key.prompt,
            endpoint: key.endpoint,
            max_tokens: key.max_tokens,
            repeat: key.repeat,
            request_hash,
            started_at,
            finished_at: Utc::now(),
            latency_ms: ex.latency.as_secs_f64() * 1000.0,
            elapsed_ms: ex.elapsed.as_secs_f64() * 1000.0,
            attempts: ex.attempts,
            http_status: ex.status,
            completion: ex.completion.unwrap_or_default(),
            server: ex.server,
            error: ex.failure,
            note: None,
            raw_body: ex.body.map(Arc::from),
            texts_in_raw_body: false,
        }
    }
}

/// What readers ask of a journal line in either form (a whole [`Record`], or the [`Answered`]
/// scoring keeps): where it belongs and what it answered.
pub trait Line {
    fn prompt(&self) -> &str;
    fn endpoint(&self) -> &str;
    fn max_tokens(&self) -> u32;
    fn repeat(&self) -> u32;
    fn completion(&self) -> &Completion;
    fn error(&self) -> Option<&Failure>;

    /// What it is merged on: the newest line per key wins.
    fn key(&self) -> RecordKey {
        RecordKey {
            prompt: self.prompt().to_string(),
            endpoint: self.endpoint().to_string(),
            max_tokens: self.max_tokens(),
            repeat: self.repeat(),
        }
    }

    /// The text a scorer reads of this line: the answer, or for a `tool_call` score the whole
    /// reply (its text, tool calls and finish reason, as `tool_call::Reply::text` renders it).
    /// Shared, so that keeping it (as scoring does per distinct answer) copies no text.
    fn scored_text(&self, spec: &ScorerSpec) -> Text {
        match spec {
            ScorerSpec::ToolCall { .. } => Text::from(self.reply().text()),
            _ => self
                .completion()
                .answer
                .clone()
                .unwrap_or_else(|| Text::from("")),
        }
    }

    /// What the tool-call scorer reads of this line.
    fn reply(&self) -> Reply {
        let c = self.completion();
        Reply {
            content: c.answer.as_deref().map(str::to_string),
            tool_calls: c
                .tool_calls
                .iter()
                .map(|t| Call {
                    id: t.id.clone(),
                    name: t.name.clone(),
                    arguments: t.arguments.clone(),
                    arguments_type: t.arguments_type.clone(),
                })
                .collect(),
            finish_reason: c.finish_reason.clone(),
        }
    }

    /// A response was received and holds an answer to score.
    fn is_usable(&self) -> bool {
        self.error().is_none()
    }

    /// The request itself failed (as opposed to the model leaving no answer): re-sent on resume.
    fn is_request_failure(&self) -> bool {
        self.error().is_some_and(|e| e.kind.is_request_failure())
    }
}

/// A record as scoring keeps it (`journal::load_for_scoring`): what the analysis reads of one
/// line, without the raw body, with its names and completion shared with every earlier line
/// that had the same. Repeats at temperature 0 mostly say the same thing, so a long run holds one
/// small handle per line and one copy of each distinct completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    pub prompt: Arc<str>,
    pub endpoint: Arc<str>,
    pub max_tokens: u32,
    pub repeat: u32,
    pub started_at: DateTime<Utc>,
    /// The final attempt, from sending the request to the last body byte.
    pub latency_ms: f64,
    /// All attempts and the waits between them.
    pub elapsed_ms: f64,
    /// Its logprobs and tool calls parsed from the raw body as the line was read.
    pub completion: Arc<Completion>,
    /// The `Server` response header.
    pub server: Option<Arc<str>>,
    pub error: Option<Failure>,
    /// Why this request was made, when not part of the plan (e.g. a reasoning retry).
    pub note: Option<String>,
}

/// Both forms name their fields alike.
macro_rules! line_of_fields {
    ($($form:ty),*) => {$(
        impl Line for $form {
            fn prompt(&self) -> &str {
                &self.prompt
            }
            fn endpoint(&self) -> &str {
                &self.endpoint
            }
            fn max_tokens(&self) -> u32 {
                self.max_tokens
            }
            fn repeat(&self) -> u32 {
                self.repeat
            }
            fn completion(&self) -> &Completion {
                &self.completion
            }
            fn error(&self) -> Option<&Failure> {
                self.error.as_ref()
            }
        }
    )*};
}

line_of_fields!(Record, Answered);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::parse_completion;

    /// The record of a 200 response with `body` to prompt `p`.
    fn record_of(body: &str) -> Record {
        let ex = Exchange {
            status: Some(200),
            body: Some(body.into()),
            completion: parse_completion(body).ok(),
            ..Exchange::default()
        };
        let key = RecordKey {
            prompt: "p".into(),
            endpoint: "e".into(),
            max_tokens: 8,
            repeat: 0,
        };
        Record::of_exchange(key, "h".into(), Utc::now(), ex)
    }

    #[test]
    fn a_record_read_back_gets_its_logprobs_from_the_raw_body() {
        let body = r#"{"choices":[{"message":{"content":"3"},"logprobs":{"content":[{"token":"3","logprob":-0.5}]},"finish_reason":"stop"}]}"#;
        let record = record_of(body);
        let line = serde_json::to_value(&record).unwrap();
        assert!(
            line.get("logprobs").is_none() && line.get("tool_calls").is_none(),
            "records.jsonl keeps its format: {line}"
        );
        let back: Record = serde_json::from_value(line).unwrap();
        assert_eq!(back.completion.token_texts().unwrap(), ["3"]);
        assert_eq!(back, record);
    }

    #[test]
    fn a_line_written_before_the_reply_cap_is_read_back_cut() {
        let args =
            serde_json::to_string(&"x".repeat(2 * crate::endpoint::REPLY_PART_BYTES)).unwrap();
        let body = format!(
            r#"{{"choices":[{{"message":{{"content":null,"tool_calls":[{{"id":"c1","type":"function","function":{{"name":"f","arguments":{args}}}}}]}},"finish_reason":"tool_calls"}}]}}"#
        );
        let mut old = record_of(&body);
        old.completion.tool_calls.clear();
        let line = serde_json::to_string(&old).unwrap();
        assert!(line.len() > 2 * crate::endpoint::REPLY_PART_BYTES);
        let back: Record = serde_json::from_str(&line).unwrap();
        let error = back.error.unwrap();
        assert_eq!(error.kind, crate::endpoint::FailureKind::ReplyTooLong);
        assert!(error.message.starts_with("tool call 1's arguments"));
        assert!(back.raw_body.unwrap().len() <= 64 * 1024);
        assert!(
            back.completion.tool_calls[0]
                .arguments
                .as_ref()
                .unwrap()
                .len()
                <= crate::endpoint::REPLY_PART_BYTES
        );
    }

    #[test]
    fn tool_calls_and_finish_reason_come_back_and_old_lines_still_load() {
        let body = r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}"#;
        let record = record_of(body);
        let back: Record = serde_json::from_str(&serde_json::to_string(&record).unwrap()).unwrap();
        let reply = back.reply();
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            reply.tool_calls,
            [Call {
                id: Some("c1".into()),
                name: Some("get_weather".into()),
                arguments: Some(r#"{"city":"Paris"}"#.into()),
                arguments_type: None,
            }]
        );
        let mut old = serde_json::to_value(&record).unwrap();
        old.as_object_mut().unwrap().remove("raw_body");
        let old: Record = serde_json::from_value(old).unwrap();
        assert!(old.completion.tool_calls.is_empty());
        assert_eq!(old.reply().tool_calls, []);
    }
}
