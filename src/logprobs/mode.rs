//! How a server is asked for prompt logprobs (completions echo, or vLLM's `prompt_logprobs`),
//! which of them it supports, and the decode request the self-consistency check compares with.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::align::span_of;
use super::parse::{parse_completion_logprobs, parse_prompt_logprobs};
use crate::endpoint::{Client, LogprobToken};

/// A request mode for prompt logprobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `/completions` with `echo: true`, `logprobs: k`, `max_tokens: 1`.
    Echo,
    /// `/completions` with vLLM's `prompt_logprobs: k`, `max_tokens: 1`.
    PromptLogprobs,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::Echo => "completions echo",
            Mode::PromptLogprobs => "vLLM prompt_logprobs",
        }
    }
}

/// The text the modes are detected with: plain ASCII that any tokenizer spells back.
pub const PROBE: &str = "The capital of France is Paris, and the capital of Italy is Rome.";

/// The request body scoring `text` in `mode` with top-`k` logprobs.
pub fn score_body(mode: Mode, model: &str, text: &str, k: u32) -> Value {
    let mut body = json!({
        "model": model,
        "prompt": text,
        "max_tokens": 1,
        "temperature": 0,
        "stream": false,
    });
    match mode {
        Mode::Echo => {
            body["echo"] = json!(true);
            body["logprobs"] = json!(k);
        }
        Mode::PromptLogprobs => {
            body["prompt_logprobs"] = json!(k);
            body["return_token_ids"] = json!(true);
        }
    }
    body
}

/// A greedy completion of `prompt` with its decode logprobs.
pub fn decode_body(model: &str, prompt: &str, max_tokens: u32, k: u32) -> Value {
    json!({
        "model": model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": false,
        "logprobs": k,
    })
}

/// Score `text` in `mode`: the server's positions, or why there are none.
pub async fn score(
    client: &Client,
    model: &str,
    mode: Mode,
    text: &str,
    k: u32,
) -> Result<Vec<LogprobToken>, String> {
    score_counted(client, model, mode, text, k)
        .await
        .map(|s| s.positions)
}

/// What a scoring request returned: the positions, and the prompt tokens the server counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoring {
    pub positions: Vec<LogprobToken>,
    /// `usage.prompt_tokens`: every token of the text, special ones included.
    pub prompt_tokens: Option<u64>,
}

/// [`score`], keeping the server's `usage.prompt_tokens`.
pub async fn score_counted(
    client: &Client,
    model: &str,
    mode: Mode,
    text: &str,
    k: u32,
) -> Result<Scoring, String> {
    let ex = client
        .post("completions", &score_body(mode, model, text, k))
        .await;
    if let Some(f) = ex.failure {
        return Err(f.to_string());
    }
    let body = ex.body.unwrap_or_default();
    let positions = match mode {
        Mode::Echo => parse_completion_logprobs(&body),
        Mode::PromptLogprobs => parse_prompt_logprobs(&body, text),
    }?;
    let prompt_tokens = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v.pointer("/usage/prompt_tokens").and_then(Value::as_u64));
    Ok(Scoring {
        positions,
        prompt_tokens,
    })
}

/// Generate a greedy completion of `prompt` and return its tokens with decode logprobs.
pub async fn decode(
    client: &Client,
    model: &str,
    prompt: &str,
    max_tokens: u32,
    k: u32,
) -> Result<Vec<LogprobToken>, String> {
    let ex = client
        .post("completions", &decode_body(model, prompt, max_tokens, k))
        .await;
    if let Some(f) = ex.failure {
        return Err(f.to_string());
    }
    parse_completion_logprobs(&ex.body.unwrap_or_default())
}

/// What detection found: the mode to use (if any) and what each mode tried said.
#[derive(Debug, Clone, Serialize)]
pub struct Detection {
    pub mode: Option<Mode>,
    pub notes: Vec<String>,
}

/// Try echo, then `prompt_logprobs`, on `PROBE`: the first whose tokens spell the probe wins.
pub async fn detect(client: &Client, model: &str, k: u32) -> Detection {
    let mut notes = Vec::new();
    for mode in [Mode::Echo, Mode::PromptLogprobs] {
        match score(client, model, mode, PROBE, k).await {
            Ok(positions) => match span_of(&positions, PROBE) {
                Ok(span)
                    if positions[span.start..span.start + span.len]
                        .iter()
                        .any(|p| !p.top.is_empty()) =>
                {
                    return Detection {
                        mode: Some(mode),
                        notes,
                    }
                }
                Ok(_) => notes.push(format!("{}: no top logprobs listed", mode.label())),
                Err(m) => notes.push(format!("{}: {m}", mode.label())),
            },
            Err(e) => notes.push(format!("{}: {e}", mode.label())),
        }
    }
    Detection { mode: None, notes }
}
