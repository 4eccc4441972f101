//! The in-memory form of a catalogue prompt, independent of how it was written on disk.

use serde::{Deserialize, Serialize};

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
