//! One measured request: send it (`stream: false`), time it, and classify what came back as a
//! usable answer, a soft-empty reply (200 OK without content) or an error. Shared by bench, soak
//! and smoke.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::endpoint::{Client, Exchange, Failure, FailureKind};

/// Every request goes to the chat endpoint.
pub const CHAT_PATH: &str = "chat/completions";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleOutcome {
    /// A response with content (or tool calls).
    Ok,
    /// HTTP 200 and a well-formed completion, but no content and no tool calls (for example the
    /// reasoning used the whole budget, or the server returned `content: null`).
    SoftEmpty,
    /// No completion: transport failure, HTTP error, unparseable body, error object.
    Error,
}

/// What one request measured. Times are seconds since the run's origin, so requests of one run
/// can be laid on a single time line (also after reading them back from JSONL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub start_s: f64,
    pub end_s: f64,
    /// The final attempt, from sending the request to the last body byte.
    pub latency_ms: f64,
    pub attempts: u32,
    pub status: Option<u16>,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub finish_reason: Option<String>,
    pub outcome: SampleOutcome,
    /// Why the request failed, or why the reply is soft-empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<Failure>,
    /// The answer text (content without any think block). Not written to logs.
    #[serde(skip)]
    pub answer: Option<String>,
}

impl Sample {
    pub fn latency_s(&self) -> f64 {
        self.latency_ms / 1000.0
    }

    /// Generated tokens per second of this request: the server's `completion_tokens` over the
    /// wall time of the final attempt.
    pub fn tps(&self) -> Option<f64> {
        let tokens = self.completion_tokens?;
        (self.latency_ms > 0.0).then(|| tokens as f64 / self.latency_s())
    }

    /// Prompt tokens per second when the request is (almost) all prefill, as with `max_tokens: 1`.
    pub fn prompt_tps(&self) -> Option<f64> {
        let tokens = self.prompt_tokens?;
        (self.latency_ms > 0.0).then(|| tokens as f64 / self.latency_s())
    }

    /// The request produced a completion the server accounted for (usable for throughput, even
    /// when its content is empty).
    pub fn has_completion(&self) -> bool {
        self.outcome != SampleOutcome::Error
    }

    /// A one-line reason for a failed or empty request, or why the rate cannot be computed.
    /// Errors carry their kind ("timeout: ..."); an empty reply just says what was empty.
    pub fn problem_line(&self) -> Option<String> {
        if let Some(p) = &self.problem {
            return Some(match self.outcome {
                SampleOutcome::SoftEmpty => p.message.clone(),
                _ => p.to_string(),
            });
        }
        if self.completion_tokens.is_none() {
            return Some("the server reported no usage.completion_tokens".into());
        }
        None
    }

    /// Why the server refused the prompt outright (a 4xx other than 429): usually longer than
    /// its context, on servers whose `GET /models` does not report `max_model_len`.
    pub fn rejection(&self) -> Option<String> {
        match (self.outcome, self.status) {
            (SampleOutcome::Error, Some(code)) if (400..500).contains(&code) && code != 429 => {
                self.problem_line()
            }
            _ => None,
        }
    }
}

/// Send `body` to the chat endpoint and measure it. `origin` is the run's time zero.
pub async fn measure(client: &Client, body: &Value, origin: Instant) -> Sample {
    let start = origin.elapsed().as_secs_f64();
    let ex = client.complete(CHAT_PATH, body).await;
    let end = origin.elapsed().as_secs_f64();
    from_exchange(ex, start, end)
}

/// Classify an exchange. A completion counts even when `Client::complete` flagged its content
/// as unusable: the server did the work, so its tokens count, and the empty reply is reported.
pub fn from_exchange(ex: Exchange, start_s: f64, end_s: f64) -> Sample {
    let (outcome, answer, usage, finish_reason, problem) = match ex.completion {
        Some(c) => {
            let has_answer = c.answer.as_deref().is_some_and(|a| !a.trim().is_empty());
            let outcome = if has_answer || !c.tool_calls.is_empty() {
                SampleOutcome::Ok
            } else {
                SampleOutcome::SoftEmpty
            };
            let problem = match outcome {
                SampleOutcome::Ok => None,
                _ => Some(c.problem().unwrap_or_else(|| {
                    Failure::new(FailureKind::NullContent, "content is an empty string")
                })),
            };
            (outcome, c.answer, c.usage, c.finish_reason, problem)
        }
        None => (SampleOutcome::Error, None, None, None, ex.failure),
    };
    Sample {
        start_s,
        end_s,
        latency_ms: ex.latency.as_secs_f64() * 1000.0,
        attempts: ex.attempts,
        status: ex.status,
        prompt_tokens: usage.and_then(|u| u.prompt_tokens),
        completion_tokens: usage.and_then(|u| u.completion_tokens),
        finish_reason,
        outcome,
        problem,
        answer: answer.as_deref().map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::endpoint::parse_completion;

    fn exchange(body: &str) -> Exchange {
        let completion = parse_completion(body).ok();
        Exchange {
            status: Some(200),
            body: Some(body.to_string()),
            latency: Duration::from_millis(500),
            attempts: 1,
            failure: completion.as_ref().and_then(|c| c.problem()),
            completion,
            ..Exchange::default()
        }
    }

    #[test]
    fn rates_come_from_usage_over_wall_time() {
        let s = from_exchange(
            exchange(
                r#"{"choices":[{"message":{"content":"hi"},"finish_reason":"length"}],"usage":{"prompt_tokens":1000,"completion_tokens":50}}"#,
            ),
            0.0,
            0.5,
        );
        assert_eq!(s.outcome, SampleOutcome::Ok);
        assert_eq!(s.tps(), Some(100.0));
        assert_eq!(s.prompt_tps(), Some(2000.0));
    }

    #[test]
    fn empty_content_is_soft_empty_unless_tools_were_called() {
        let empty = from_exchange(
            exchange(
                r#"{"choices":[{"message":{"content":null,"reasoning_content":"hmm"},"finish_reason":"length"}],"usage":{"completion_tokens":16}}"#,
            ),
            0.0,
            0.5,
        );
        assert_eq!(empty.outcome, SampleOutcome::SoftEmpty);
        assert_eq!(empty.tps(), Some(32.0));
        assert!(empty.problem_line().unwrap().contains("reasoning"));
        let tool = from_exchange(
            exchange(
                r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"completion_tokens":9}}"#,
            ),
            0.0,
            0.5,
        );
        assert_eq!(tool.outcome, SampleOutcome::Ok);
    }

    #[test]
    fn a_failed_exchange_is_an_error_with_its_reason() {
        let ex = Exchange {
            status: Some(503),
            failure: Some(Failure::new(FailureKind::ServerError, "HTTP 503")),
            ..Exchange::default()
        };
        let s = from_exchange(ex, 0.0, 0.1);
        assert_eq!(s.outcome, SampleOutcome::Error);
        assert!(!s.has_completion());
        assert!(s.problem_line().unwrap().contains("503"));
    }
}
