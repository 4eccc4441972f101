//! The `tools` suite: chat prompts that offer OpenAI functions and know the right behaviour
//! (call this function with these arguments, call none, choose between similar ones, obey
//! `tool_choice`, use a tool's result, call in parallel), written as data in `items.toml` and
//! compiled in; and how any prompt's `tool_use` binds to its `tool_call` score.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::{json, Value};

use super::spec::{Message, Prompt, PromptRequest, Role, SourceLocation, ToolUse};
use crate::score::tool_call::{Call, Reply};
use crate::score::{ExpectedCall, ScorerSpec};

/// Every id of the suite starts with this (ids of files cannot hold a dot, so none clash).
pub const ID_PREFIX: &str = "tools.";

/// Budget of every item: a call or a short answer.
const MAX_TOKENS: u32 = 256;

/// Where the items are written, as messages name it.
const SOURCE: &str = "(built-in)/tools/items.toml";

/// The `score` a prompt is scored with, given its `tool_use`: a `tool_call` score learns the
/// offered functions' schemas. Refused: `tool_use` on a raw completion, a `tool_call` score
/// without `tool_use`, and functions that are not `{"type": "function", "function": {"name"}}`
/// or whose names repeat.
pub(crate) fn bind(
    score: ScorerSpec,
    tool_use: Option<&ToolUse>,
    request: &PromptRequest,
) -> Result<ScorerSpec, String> {
    let Some(tool_use) = tool_use else {
        return match score {
            ScorerSpec::ToolCall { .. } => Err("a `tool_call` score needs `tool_use`".into()),
            other => Ok(other),
        };
    };
    if matches!(request, PromptRequest::Completion { .. }) {
        return Err("`tool_use` is only for chat prompts".into());
    }
    let names = tool_use.names();
    if names.len() != tool_use.tools.len() {
        return Err(
            "tool_use: every tool is { type = \"function\", function = { name = ... } }".into(),
        );
    }
    let mut seen = BTreeSet::new();
    for name in &names {
        if !seen.insert(*name) {
            return Err(format!("tool_use: the function `{name}` is defined twice"));
        }
    }
    let schemas = names
        .iter()
        .filter_map(|n| tool_use.parameters(n).map(|p| (*n, p)));
    Ok(score.with_tools(schemas))
}

/// A function the suite offers, as written in `items.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Function {
    description: String,
    parameters: Value,
}

/// A tool's result handed back before the final answer: the call the assistant made and what
/// the tool returned.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolResult {
    name: String,
    arguments: serde_json::Map<String, Value>,
    content: String,
}

/// One item as written in `items.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Item {
    id: String,
    /// What the item tests (its category): `single`, `no_call`, `choose`, `typed`,
    /// `tool_choice`, `multi_turn`, `parallel`.
    family: String,
    #[serde(default)]
    system: Option<String>,
    user: String,
    /// Names of the functions offered.
    tools: Vec<String>,
    /// `auto`, `none`, `required`, or a function's name (that function is forced).
    #[serde(default)]
    tool_choice: Option<String>,
    #[serde(default)]
    parallel_tool_calls: Option<bool>,
    /// The calls expected (none: answer in text).
    #[serde(default)]
    calls: Vec<ExpectedCall>,
    /// For a final answer after a tool's result: the result, the text scorer and its answers.
    #[serde(default)]
    result: Option<ToolResult>,
    #[serde(default)]
    score: Option<ScorerSpec>,
    #[serde(default)]
    reference: Option<String>,
    #[serde(default)]
    wrong: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ItemsFile {
    functions: BTreeMap<String, Function>,
    item: Vec<Item>,
}

/// The suite's items, in file order. The file is compiled in and a unit test proves every item
/// valid; an item that is not is left out rather than stopping the run.
pub fn items() -> Vec<Prompt> {
    parse(include_str!("items.toml"))
        .map(|(prompts, _)| prompts)
        .unwrap_or_default()
}

/// The items of `text` and the problems of those left out.
fn parse(text: &str) -> Result<(Vec<Prompt>, Vec<String>), String> {
    let file: ItemsFile = toml::from_str(text).map_err(|e| format!("{SOURCE}: {e}"))?;
    let mut prompts = Vec::new();
    let mut problems = Vec::new();
    for (line, item) in file.item.into_iter().enumerate() {
        let id = item.id.clone();
        match prompt(item, &file.functions, line + 1) {
            Ok(p) => prompts.push(p),
            Err(e) => problems.push(format!("{SOURCE}: item `{id}`: {e}")),
        }
    }
    Ok((prompts, problems))
}

/// One item as a catalogue prompt: its request with the tools, its score bound to them, and a
/// reference and a wrong reply written from the expected calls.
fn prompt(
    item: Item,
    functions: &BTreeMap<String, Function>,
    index: usize,
) -> Result<Prompt, String> {
    let tools = item
        .tools
        .iter()
        .map(|name| {
            let f = functions
                .get(name)
                .ok_or_else(|| format!("no function `{name}` is defined"))?;
            Ok(json!({"type": "function", "function": {
                "name": name, "description": f.description, "parameters": f.parameters,
            }}))
        })
        .collect::<Result<Vec<Value>, String>>()?;
    let tool_choice = item.tool_choice.as_deref().map(|c| match c {
        "auto" | "none" | "required" => json!(c),
        name => json!({"type": "function", "function": {"name": name}}),
    });
    let mut messages = Vec::new();
    if let Some(system) = &item.system {
        messages.push(Message {
            role: Role::System,
            content: system.clone(),
        });
    }
    messages.push(Message {
        role: Role::User,
        content: item.user.clone(),
    });
    let tool_use = ToolUse {
        tools,
        tool_choice,
        parallel_tool_calls: item.parallel_tool_calls,
        turns: item.result.as_ref().map(result_turns).unwrap_or_default(),
    };
    let request = PromptRequest::Chat { messages };
    let (score, reference, wrong) = match (item.result.is_some(), item.score) {
        (true, Some(score)) => (
            score,
            item.reference
                .ok_or("a final-answer item needs `reference`")?,
            item.wrong.ok_or("a final-answer item needs `wrong`")?,
        ),
        (false, None) => {
            let (reference, wrong) = replies(&item.calls);
            (
                ScorerSpec::ToolCall {
                    calls: item.calls,
                    schemas: BTreeMap::new(),
                },
                reference,
                wrong,
            )
        }
        _ => return Err("give `score` with `result` (a final answer), else neither".into()),
    };
    let score = bind(score, Some(&tool_use), &request)?;
    score.validate()?;
    Ok(Prompt {
        id: format!("{ID_PREFIX}{}", item.id),
        suite: crate::catalogue::Suite::Tools,
        category: item.family,
        request,
        max_tokens: Some(MAX_TOKENS),
        tags: vec!["tools".to_string()],
        reference,
        wrong,
        score,
        source: SourceLocation {
            file: SOURCE.to_string(),
            line: index,
        },
        tool_use: Some(tool_use),
    })
}

/// The assistant's call and the tool's answer, as the API takes them.
fn result_turns(result: &ToolResult) -> Vec<Value> {
    let arguments = Value::Object(result.arguments.clone()).to_string();
    vec![
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_0", "type": "function",
            "function": {"name": result.name, "arguments": arguments},
        }]}),
        json!({"role": "tool", "tool_call_id": "call_0", "content": result.content}),
    ]
}

/// A reply that makes exactly the expected calls (or answers in text when none is), and one
/// that does the opposite.
fn replies(calls: &[ExpectedCall]) -> (String, String) {
    let text = Reply {
        content: Some("I can answer that without a tool.".into()),
        tool_calls: Vec::new(),
        finish_reason: Some("stop".into()),
    };
    let calling = |calls: Vec<Call>| Reply {
        content: None,
        tool_calls: calls,
        finish_reason: Some("tool_calls".into()),
    };
    if calls.is_empty() {
        let wrong = calling(vec![Call {
            id: Some("call_0".into()),
            name: Some("unrequested".into()),
            arguments: Some("{}".into()),
            arguments_type: None,
        }]);
        return (text.text(), wrong.text());
    }
    let made = calls
        .iter()
        .enumerate()
        .map(|(i, c)| Call {
            id: Some(format!("call_{i}")),
            name: Some(c.name.clone()),
            arguments: Some(Value::Object(c.arguments.clone()).to_string()),
            arguments_type: None,
        })
        .collect();
    (calling(made).text(), text.text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::{score, ScoreContext};

    #[test]
    fn every_item_is_valid_and_its_reference_and_wrong_reply_score_as_they_should() {
        let (prompts, problems) = parse(include_str!("items.toml")).unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
        assert!(prompts.len() >= 40, "{} items", prompts.len());
        let ctx = ScoreContext::for_catalogue(std::path::Path::new("."));
        for p in &prompts {
            let r = score(&p.score, &p.reference, &ctx);
            assert_eq!(r.correct, Some(true), "{}: {}", p.id, r.evidence);
            let w = score(&p.score, &p.wrong, &ctx);
            assert_ne!(w.correct, Some(true), "{}: {}", p.id, w.evidence);
        }
        for family in [
            "single",
            "no_call",
            "choose",
            "typed",
            "tool_choice",
            "multi_turn",
            "parallel",
        ] {
            assert!(
                prompts.iter().any(|p| p.category == family),
                "no {family} item"
            );
        }
    }

    #[test]
    fn a_tool_call_score_needs_tools_and_a_chat_prompt() {
        let spec = ScorerSpec::ToolCall {
            calls: Vec::new(),
            schemas: BTreeMap::new(),
        };
        let chat = PromptRequest::Chat {
            messages: Vec::new(),
        };
        assert!(bind(spec.clone(), None, &chat).is_err());
        let raw = PromptRequest::Completion { prompt: "x".into() };
        assert!(bind(spec.clone(), Some(&ToolUse::default()), &raw).is_err());
        let twice = ToolUse {
            tools: vec![
                json!({"type": "function", "function": {"name": "f"}}),
                json!({"type": "function", "function": {"name": "f"}}),
            ],
            ..ToolUse::default()
        };
        assert!(bind(spec, Some(&twice), &chat).is_err());
    }
}
