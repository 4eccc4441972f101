//! The soak's agent-shaped traffic: six kinds of request (tool call, code, JSON, reasoning, long
//! context, chat) crossed with three temperatures and three budgets, in a fixed rotation so every
//! combination is sent equally often.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::prompts::{chat_body, filler, user};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Tool,
    Code,
    Json,
    Reasoning,
    Long,
    Chat,
    /// A catalogue prompt of `soak --graded` (never in `--kinds`).
    Graded,
}

pub const ALL_KINDS: [Kind; 6] = [
    Kind::Tool,
    Kind::Code,
    Kind::Json,
    Kind::Reasoning,
    Kind::Long,
    Kind::Chat,
];
pub const TEMPERATURES: [f64; 3] = [0.0, 0.3, 0.7];
pub const BUDGETS: [u32; 3] = [300, 500, 800];

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Code => "code",
            Kind::Json => "json",
            Kind::Reasoning => "reasoning",
            Kind::Long => "long",
            Kind::Chat => "chat",
            Kind::Graded => "graded",
        }
    }

    pub fn parse(raw: &str) -> Option<Kind> {
        ALL_KINDS.into_iter().find(|k| k.label() == raw)
    }

    pub fn names() -> String {
        ALL_KINDS.map(Kind::label).join(", ")
    }
}

/// The shape of request number `seq` of the soak.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub kind: Kind,
    pub temperature: f64,
    pub max_tokens: u32,
}

/// Request `seq` rotates through kinds fastest, then temperatures, then budgets, so any
/// `kinds × 9` consecutive requests cover every combination once.
pub fn shape(kinds: &[Kind], seq: u64) -> Shape {
    let k = kinds.len() as u64;
    Shape {
        kind: kinds[(seq % k) as usize],
        temperature: TEMPERATURES[((seq / k) % 3) as usize],
        max_tokens: BUDGETS[((seq / (k * 3)) % 3) as usize],
    }
}

const CODE: &[&str] = &[
    "Write a Python function `merge_intervals(intervals)` that merges overlapping intervals, with a docstring and three doctests.",
    "Write a Rust function that parses a semantic version string like `1.2.3-beta` into a struct, returning a Result.",
    "Refactor this JavaScript into small pure functions and explain each change:\n\nfunction f(a){let r=[];for(let i=0;i<a.length;i++){if(a[i]%2==0){r.push(a[i]*a[i])}}return r.reduce((x,y)=>x+y,0)}",
];
const JSON_TASKS: &[&str] = &[
    "Return only a JSON object (no prose) describing a fictional bookshop with keys name, city, founded (integer), and books (an array of 3 objects with title, author, price).",
    "Extract the entities from this sentence as JSON with keys people, places and dates, and nothing else: \"On 4 May 2021 Ada met Grace in Lisbon, and they flew to Oslo on 9 May.\"",
    "Produce a JSON array of 5 tasks for moving house, each {\"id\": int, \"title\": str, \"depends_on\": [int]}. Output JSON only.",
];
const REASONING: &[&str] = &[
    "A tank fills in 6 hours with pipe A and empties in 9 hours with pipe B. Both are open and the tank starts empty. How long until it is full? Think step by step, then give the answer.",
    "Three friends split a bill. Alice pays twice what Bob pays, Carol pays 10 more than Bob, and the bill is 130. How much does each pay? Reason carefully before answering.",
    "Is 391 prime? Show your reasoning and then answer yes or no.",
];
const CHAT: &[&str] = &[
    "I keep forgetting to water my plants. Any practical tips?",
    "Explain the difference between a process and a thread to a new programmer.",
    "What should I pack for a three-day hiking trip in autumn?",
];
const TOOL: &[&str] = &[
    "What's the weather in Lisbon right now, in celsius?",
    "Find the files under src/ that mention `retry` and tell me how many there are.",
    "Is it going to rain in Oslo tomorrow?",
];

fn tools() -> Value {
    json!([
        {"type": "function", "function": {
            "name": "get_weather",
            "description": "Current weather or forecast for a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "day": {"type": "string", "description": "today or tomorrow"}
            }, "required": ["city"]}
        }},
        {"type": "function", "function": {
            "name": "search_files",
            "description": "Search files under a folder for a text pattern.",
            "parameters": {"type": "object", "properties": {
                "folder": {"type": "string"},
                "pattern": {"type": "string"}
            }, "required": ["folder", "pattern"]}
        }}
    ])
}

/// The body of request `seq` with shape `s`. `long_context` is the approximate prompt size of
/// the `long` kind.
pub fn request(
    model: &str,
    s: Shape,
    seq: u64,
    long_context: u64,
    extra: &Map<String, Value>,
) -> Value {
    let pick = |list: &[&'static str]| list[(seq / ALL_KINDS.len() as u64) as usize % list.len()];
    let messages = match s.kind {
        Kind::Tool => json!([
            {"role": "system", "content": "You are an agent. Use the tools when they help."},
            {"role": "user", "content": pick(TOOL)}
        ]),
        Kind::Code => user(pick(CODE)),
        Kind::Json => user(pick(JSON_TASKS)),
        Kind::Reasoning => user(pick(REASONING)),
        Kind::Chat => json!([
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": pick(CHAT)}
        ]),
        Kind::Long => user(&long_context_prompt(long_context, seq)),
        Kind::Graded => user(pick(CHAT)), // graded bodies are built from the catalogue
    };
    let mut body = chat_body(model, messages, s.max_tokens, s.temperature, extra);
    if s.kind == Kind::Tool {
        body["tools"] = tools();
        body["tool_choice"] = json!("auto");
    }
    body
}

/// A document of about `tokens` tokens with one fact hidden in the middle, and a question about it.
fn long_context_prompt(tokens: u64, seq: u64) -> String {
    let words = tokens.saturating_sub(64).max(16) as usize;
    let code = 1000 + (seq * 7919) % 9000;
    format!(
        "Here are meeting notes.\n\n{}\n\nNote: the access code for the archive room is {code}.\n\n{}\n\n\
         What is the access code for the archive room? Answer with the number and one sentence.",
        filler(words / 2, seq),
        filler(words - words / 2, seq.wrapping_add(1)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rotation_covers_every_combination_evenly() {
        let kinds = ALL_KINDS.to_vec();
        let mut seen = std::collections::HashSet::new();
        for seq in 0..54 {
            let s = shape(&kinds, seq);
            seen.insert((s.kind, (s.temperature * 10.0) as u32, s.max_tokens));
        }
        assert_eq!(seen.len(), 54);
    }

    #[test]
    fn every_kind_builds_a_non_streaming_request() {
        for kind in ALL_KINDS {
            let s = Shape {
                kind,
                temperature: 0.3,
                max_tokens: 500,
            };
            let b = request("m", s, 5, 2048, &Map::new());
            assert_eq!(b["stream"], json!(false));
            assert_eq!(b["max_tokens"], json!(500));
            assert_eq!(b.get("tools").is_some(), kind == Kind::Tool);
        }
        assert_eq!(Kind::parse("long"), Some(Kind::Long));
        assert_eq!(Kind::parse("poetry"), None);
    }
}
