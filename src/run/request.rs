//! The exact request body each endpoint receives: identical sampling everywhere.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::manifest::Sampling;
use crate::catalogue::{Prompt, PromptRequest, ToolUse};

/// Alternatives requested per generated token with `--logprobs`: enough to tell whether each
/// side's token at a first divergence was in the other's top-k (a near-tie).
pub const TOP_LOGPROBS: u32 = 5;

/// The API path (relative to the base URL) and JSON body for one prompt.
pub fn build_request(
    prompt: &Prompt,
    model: &str,
    max_tokens: u32,
    sampling: &Sampling,
) -> (&'static str, Value) {
    let (path, mut body) = match &prompt.request {
        PromptRequest::Chat { messages } => (
            "chat/completions",
            json!({ "model": model, "messages": messages }),
        ),
        PromptRequest::Completion { prompt } => {
            ("completions", json!({ "model": model, "prompt": prompt }))
        }
    };
    let obj = body.as_object_mut().expect("object");
    obj.insert("temperature".into(), json!(sampling.temperature));
    obj.insert("max_tokens".into(), json!(max_tokens));
    obj.insert("stream".into(), json!(sampling.stream));
    if sampling.logprobs {
        // Chat takes a flag plus a count; raw completions take the count alone.
        match path {
            "chat/completions" => {
                obj.insert("logprobs".into(), json!(true));
                obj.insert("top_logprobs".into(), json!(TOP_LOGPROBS));
            }
            _ => {
                obj.insert("logprobs".into(), json!(TOP_LOGPROBS));
            }
        }
    }
    if let Some(tool_use) = &prompt.tool_use {
        add_tools(obj, tool_use);
    }
    for (k, v) in &sampling.params {
        obj.insert(k.clone(), v.clone());
    }
    (path, body)
}

/// A chat body with the prompt's tools: `tools`, `tool_choice` and `parallel_tool_calls` when
/// set, and the turns that follow its messages (a call and the tool's result).
fn add_tools(obj: &mut Map<String, Value>, tool_use: &ToolUse) {
    if let Some(Value::Array(messages)) = obj.get_mut("messages") {
        messages.extend(tool_use.turns.iter().cloned());
    }
    if !tool_use.tools.is_empty() {
        obj.insert("tools".into(), json!(tool_use.tools));
    }
    if let Some(choice) = &tool_use.tool_choice {
        obj.insert("tool_choice".into(), choice.clone());
    }
    if let Some(parallel) = tool_use.parallel_tool_calls {
        obj.insert("parallel_tool_calls".into(), json!(parallel));
    }
}

/// The exact request one endpoint receives: [`build_request`] with the endpoint's own fields
/// (`EndpointSpec::sampling_override`) on top.
pub fn endpoint_request(
    prompt: &Prompt,
    model: &str,
    max_tokens: u32,
    sampling: &Sampling,
    overrides: &Map<String, Value>,
) -> (&'static str, Value) {
    let (path, mut body) = build_request(prompt, model, max_tokens, sampling);
    for (k, v) in overrides {
        body[k.as_str()] = v.clone();
    }
    (path, body)
}

/// The first 16 hex digits of the body's sha256: equal bodies, equal hashes.
pub fn request_hash(body: &Value) -> String {
    short_hash(body.to_string().as_bytes())
}

/// The first 16 hex digits of the sha256 of `bytes`.
pub fn short_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{Message, Role, SourceLocation};
    use crate::score::ScorerSpec;

    fn prompt(request: PromptRequest) -> Prompt {
        Prompt {
            id: "p".into(),
            suite: crate::catalogue::Suite::Core,
            category: "factual".into(),
            request,
            max_tokens: None,
            tags: vec![],
            reference: "x".into(),
            wrong: "y".into(),
            score: ScorerSpec::Exact {
                expected: "x".into(),
                aliases: vec![],
                distractors: vec![],
                closed: false,
            },
            source: SourceLocation {
                file: "f".into(),
                line: 1,
            },
            tool_use: None,
        }
    }

    #[test]
    fn chat_and_completion_bodies_share_sampling() {
        let chat = prompt(PromptRequest::Chat {
            messages: vec![Message {
                role: Role::User,
                content: "hi".into(),
            }],
        });
        let mut sampling = Sampling::deterministic(1024);
        sampling.params.insert("seed".into(), json!(7));
        sampling.logprobs = true;
        let (path, body) = build_request(&chat, "m", 64, &sampling);
        assert_eq!(body["top_logprobs"], json!(TOP_LOGPROBS));
        assert_eq!(path, "chat/completions");
        assert_eq!(body["temperature"], json!(0.0));
        assert_eq!(body["stream"], json!(false));
        assert_eq!(body["max_tokens"], json!(64));
        assert_eq!(body["seed"], json!(7));
        assert_eq!(body["messages"][0]["role"], json!("user"));
        let raw = prompt(PromptRequest::Completion {
            prompt: "Once".into(),
        });
        let (path, body) = build_request(&raw, "m", 64, &sampling);
        assert_eq!(body["logprobs"], json!(TOP_LOGPROBS));
        assert_eq!(path, "completions");
        assert_eq!(body["prompt"], json!("Once"));
        assert_eq!(request_hash(&body), request_hash(&body.clone()));
    }
}
