//! The in-memory form of a catalogue prompt, independent of how it was written on disk.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::score::ScorerSpec;

/// The known categories and how many prompts the full catalogue holds in each.
pub const CATEGORIES: &[(&str, usize)] = &[
    ("counting_traps", 13),
    ("deterministic_math", 13),
    ("logic_puzzles", 5),
    ("reasoning_mode", 4),
    ("code_generation", 12),
    ("code_reasoning", 5),
    ("factual", 12),
    ("structured_output", 6),
    ("traps", 6),
    ("translation", 6),
    ("summarization", 4),
    ("creative", 4),
    ("long_reasoning", 4),
    ("multiturn", 3),
    ("ambiguity", 3),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

/// What is sent: a chat conversation, or a raw prompt for `/v1/completions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum PromptRequest {
    Chat { messages: Vec<Message> },
    Completion { prompt: String },
}

/// OpenAI tool use sent with a chat prompt, each part as the API takes it: function
/// definitions, the `tool_choice` mode, whether calls may run in parallel, and turns that follow
/// the prompt's messages (an assistant turn with `tool_calls`, then `tool` results), so a
/// prompt can hand the model a tool's result and ask for the final answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolUse {
    /// `tools`: `{"type": "function", "function": {name, description, parameters}}` each.
    #[serde(default)]
    pub tools: Vec<Value>,
    /// `tool_choice`: `"auto"`, `"none"`, `"required"` or `{"type": "function", ...}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Messages sent after the prompt's own, verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<Value>,
}

impl ToolUse {
    /// The `parameters` JSON Schema of the function called `name`, when one is defined
    /// (a function without `parameters` takes anything: the schema `true`).
    pub fn parameters(&self, name: &str) -> Option<&Value> {
        static ANY: Value = Value::Bool(true);
        let function = self
            .tools
            .iter()
            .filter_map(|t| t.get("function"))
            .find(|f| f.get("name").and_then(Value::as_str) == Some(name))?;
        Some(function.get("parameters").unwrap_or(&ANY))
    }

    /// The names of the functions defined.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
            .collect()
    }
}

/// Where a prompt was defined, for error messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceLocation {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One validated catalogue prompt.
#[derive(Debug, Clone, Serialize)]
pub struct Prompt {
    pub id: String,
    /// The suite it belongs to, set by whoever made it (the catalogue's files: core).
    #[serde(skip)]
    pub suite: Suite,
    pub category: String,
    pub request: PromptRequest,
    /// Budget for this prompt when `--max-tokens` is not given.
    pub max_tokens: Option<u32>,
    pub tags: Vec<String>,
    /// A worked reference answer; it must score correct.
    pub reference: String,
    /// A plausible wrong answer; it must not score correct.
    pub wrong: String,
    pub score: ScorerSpec,
    pub source: SourceLocation,
    /// Tools offered with a chat prompt (none for most prompts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use: Option<ToolUse>,
}

impl Prompt {
    /// The text shown in reports: the last user turn, or the raw completion prompt.
    pub fn question(&self) -> &str {
        match &self.request {
            PromptRequest::Chat { messages } => messages
                .iter()
                .rev()
                .find(|m| m.role == Role::User)
                .map(|m| m.content.as_str())
                .unwrap_or(""),
            PromptRequest::Completion { prompt } => prompt,
        }
    }
}

/// A suite of prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// The catalogue's prompt files (built in: the 100 prompts of the field report).
    Core,
    /// Seeded items from the generator.
    Generated,
    /// Prompts that offer functions and score the calls (`tools/`).
    Tools,
    /// The long-context retrieval ladder (`long/`).
    Long,
}

impl Suite {
    pub const ALL: [Suite; 4] = [Suite::Core, Suite::Generated, Suite::Tools, Suite::Long];

    pub fn name(self) -> &'static str {
        match self {
            Suite::Core => "core",
            Suite::Generated => "generated",
            Suite::Tools => "tools",
            Suite::Long => "long",
        }
    }

    pub fn parse(name: &str) -> Option<Suite> {
        Suite::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
