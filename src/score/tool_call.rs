//! The `tool_call` scorer: did the reply call a function when it should (and not when it should
//! not), is every call well formed (JSON arguments, a defined function, arguments valid against
//! its JSON Schema), do the arguments match the expected call, does `finish_reason` say
//! `tool_calls` when a call was made, and is a call hidden in the text instead.
//!
//! Scorers read text, so the reply comes as text too: [`Reply::text`] renders a reply's content,
//! tool calls and finish reason as one JSON object, and [`Reply::read`] reads it back (any other
//! text is a reply of that content and no call).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Detail, Score};
use crate::text::clip;

/// A call the prompt expects: the function and the arguments it must be given. Arguments the
/// reply adds beyond these are allowed when the function's schema declares them (optional ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

/// One call of a reply, as the server sent it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// The arguments as the model wrote them: JSON text, not yet parsed.
    #[serde(default)]
    pub arguments: Option<String>,
    /// The JSON type the arguments came as when not a JSON-encoded string (`object`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_type: Option<String>,
}

/// What the scorer reads of a reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<Call>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

impl Reply {
    /// The reply as the text the scorer reads.
    pub fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A reply rendered by [`Reply::text`]; any other text is content with no call.
    pub fn read(answer: &str) -> Reply {
        serde_json::from_str(answer).unwrap_or_else(|_| Reply {
            content: Some(answer.to_string()),
            ..Reply::default()
        })
    }
}

/// Why one call of a reply is not a well-formed call (the buckets OpenRouter counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFault {
    /// `arguments` is not a JSON object.
    InvalidJson,
    /// `arguments` came as a JSON value of this type instead of the JSON-encoded string the
    /// OpenAI API sends (counted with `invalid_json`).
    NotAString(String),
    /// No function of that name was offered.
    UnknownName,
    /// The arguments break the function's `parameters` schema: the first violation.
    SchemaMismatch(String),
}

impl CallFault {
    pub fn label(&self) -> &'static str {
        match self {
            CallFault::InvalidJson | CallFault::NotAString(_) => "invalid_json",
            CallFault::UnknownName => "unknown_name",
            CallFault::SchemaMismatch(_) => "schema_mismatch",
        }
    }
}

/// What the scorer found in one reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCallFound {
    /// How many calls the prompt expects (0: answer in text).
    pub expected: usize,
    /// How many calls the reply made.
    pub made: usize,
    /// Each call's fault, in the reply's order (`None`: well formed).
    pub faults: Vec<Option<CallFault>>,
    /// The arguments of a well-formed call differ from the expected call's, or the calls are
    /// other functions or another number of them.
    pub argument_mismatch: bool,
    /// A call was made and `finish_reason` is not `tool_calls` (or the reverse).
    pub finish_reason_mismatch: bool,
    /// The text holds what parses as a call (`{"name": …, "arguments": …}`).
    pub hidden_call: bool,
}

impl ToolCallFound {
    /// A call was expected and none made.
    pub fn missed(&self) -> bool {
        self.expected > 0 && self.made == 0
    }

    /// A call was made where none was expected.
    pub fn unexpected(&self) -> bool {
        self.expected == 0 && self.made > 0
    }

    /// How many calls fell in the bucket `label` (`invalid_json`, `unknown_name`,
    /// `schema_mismatch`).
    pub fn count(&self, label: &str) -> usize {
        self.faults
            .iter()
            .flatten()
            .filter(|f| f.label() == label)
            .count()
    }

    /// Every check passed.
    pub fn passed(&self) -> bool {
        !self.missed()
            && !self.unexpected()
            && self.faults.iter().all(Option::is_none)
            && !self.argument_mismatch
            && !self.finish_reason_mismatch
            && !self.hidden_call
    }

    /// What went wrong, in words (empty when nothing did).
    fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.missed() {
            out.push("no call where one was expected".to_string());
        }
        if self.unexpected() {
            out.push("a call where none was expected".to_string());
        }
        for (i, fault) in self.faults.iter().enumerate() {
            match fault {
                Some(CallFault::SchemaMismatch(why)) => out.push(format!(
                    "call {}: schema_mismatch ({})",
                    i + 1,
                    clip(why, 80)
                )),
                Some(CallFault::NotAString(kind)) => out.push(format!(
                    "call {}: invalid_json (arguments must be a JSON-encoded string per the OpenAI API, not a JSON {})",
                    i + 1,
                    clip(kind, 20)
                )),
                Some(f) => out.push(format!("call {}: {}", i + 1, f.label())),
                None => {}
            }
        }
        if self.argument_mismatch {
            out.push("arguments differ from the expected call".to_string());
        }
        if self.finish_reason_mismatch {
            out.push("finish_reason does not say tool_calls".to_string());
        }
        if self.hidden_call {
            out.push("a call written in the text".to_string());
        }
        out
    }
}

/// Checks the spec against the functions it is scored with: every expected call names a
/// defined function and its arguments satisfy the function's schema.
pub fn validate(calls: &[ExpectedCall], schemas: &BTreeMap<String, Value>) -> Result<(), String> {
    for call in calls {
        let Some(schema) = schemas.get(&call.name) else {
            return Err(format!(
                "expected call `{}` is not a defined tool",
                call.name
            ));
        };
        if let Some(why) = schema_violation(schema, &Value::Object(call.arguments.clone())) {
            return Err(format!("expected call `{}`: {why}", call.name));
        }
    }
    Ok(())
}

/// Score a reply (text as [`Reply::text`] renders it) against the expected calls, with the
/// offered functions' parameter schemas by name.
pub fn score(calls: &[ExpectedCall], schemas: &BTreeMap<String, Value>, answer: &str) -> Score {
    let reply = Reply::read(answer);
    let found = check(calls, schemas, &reply);
    let key = reply_key(&reply);
    let problems = found.problems();
    let evidence = if problems.is_empty() {
        format!("{key}: as expected")
    } else {
        format!("{key}: {}", problems.join("; "))
    };
    let as_written = written(&reply);
    let mut s = Score::new(
        Some(found.passed()),
        Detail::ToolCall(found),
        clip(&evidence, 300),
    );
    s.extracted = Some(key);
    s.as_written = Some(as_written);
    s
}

/// Every check of one reply.
pub fn check(
    calls: &[ExpectedCall],
    schemas: &BTreeMap<String, Value>,
    reply: &Reply,
) -> ToolCallFound {
    let parsed: Vec<Option<Map<String, Value>>> = reply.tool_calls.iter().map(arguments).collect();
    let faults: Vec<Option<CallFault>> = reply
        .tool_calls
        .iter()
        .zip(&parsed)
        .map(|(call, args)| fault(call, args.as_ref(), schemas))
        .collect();
    let made = reply.tool_calls.len();
    let argument_mismatch =
        !calls.is_empty() && made > 0 && !same_calls(calls, &reply.tool_calls, &parsed, schemas);
    let finish_reason_mismatch = made > 0
        && reply
            .finish_reason
            .as_deref()
            .is_some_and(|f| f != "tool_calls");
    ToolCallFound {
        expected: calls.len(),
        made,
        faults,
        argument_mismatch,
        finish_reason_mismatch,
        hidden_call: made == 0 && reply.content.as_deref().is_some_and(holds_call),
    }
}

/// A call's arguments as a JSON object (empty text counts as no arguments).
fn arguments(call: &Call) -> Option<Map<String, Value>> {
    let text = call.arguments.as_deref().unwrap_or("").trim();
    if text.is_empty() {
        return Some(Map::new());
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

fn fault(
    call: &Call,
    args: Option<&Map<String, Value>>,
    schemas: &BTreeMap<String, Value>,
) -> Option<CallFault> {
    if let Some(kind) = &call.arguments_type {
        return Some(CallFault::NotAString(kind.clone()));
    }
    let Some(args) = args else {
        return Some(CallFault::InvalidJson);
    };
    let Some(schema) = call.name.as_deref().and_then(|n| schemas.get(n)) else {
        return Some(CallFault::UnknownName);
    };
    schema_violation(schema, &Value::Object(args.clone())).map(CallFault::SchemaMismatch)
}

/// The first way `instance` breaks `schema` (JSON Schema, validated by the `jsonschema` crate),
/// or why the schema itself cannot be used.
fn schema_violation(schema: &Value, instance: &Value) -> Option<String> {
    match jsonschema::validator_for(schema) {
        Ok(validator) => validator.validate(instance).err().map(|e| e.to_string()),
        Err(e) => Some(format!("the tool's schema is invalid: {e}")),
    }
}

/// The reply's calls are the expected ones: the same functions, as many, each with the
/// expected arguments (normalised), in any order; extra arguments only where the schema
/// declares them.
fn same_calls(
    expected: &[ExpectedCall],
    made: &[Call],
    parsed: &[Option<Map<String, Value>>],
    schemas: &BTreeMap<String, Value>,
) -> bool {
    if expected.len() != made.len() {
        return false;
    }
    let mut unmatched: Vec<usize> = (0..made.len()).collect();
    expected.iter().all(|want| {
        let hit = unmatched.iter().position(|&i| {
            made[i].name.as_deref() == Some(want.name.as_str())
                && parsed[i]
                    .as_ref()
                    .is_some_and(|got| same_arguments(want, got, schemas.get(&want.name)))
        });
        hit.map(|h| unmatched.remove(h)).is_some()
    })
}

fn same_arguments(want: &ExpectedCall, got: &Map<String, Value>, schema: Option<&Value>) -> bool {
    let declared = |key: &str| {
        schema
            .and_then(|s| s.get("properties"))
            .is_some_and(|p| p.get(key).is_some())
    };
    want.arguments
        .iter()
        .all(|(k, v)| got.get(k).is_some_and(|g| normalise(g) == normalise(v)))
        && got
            .keys()
            .all(|k| want.arguments.contains_key(k) || declared(k))
}

/// A value in a form where equal meanings are equal: numbers as numbers (`2`, `2.0` and `"2"`
/// alike), strings trimmed, lowercased and with single spaces, objects in key order.
fn normalise(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |f| format!("{f}")),
        Value::String(s) => match s.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => format!("{f}"),
            _ => format!(
                "{:?}",
                s.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
            ),
        },
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(normalise).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(m) => {
            let sorted: BTreeMap<&String, String> =
                m.iter().map(|(k, v)| (k, normalise(v))).collect();
            let fields: Vec<String> = sorted.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
            format!("{{{}}}", fields.join(","))
        }
        other => other.to_string(),
    }
}

/// What endpoints are compared on: the calls, each as `name{normalised arguments}`, sorted;
/// `(text)` when the reply made none.
fn reply_key(reply: &Reply) -> String {
    if reply.tool_calls.is_empty() {
        return "(text)".to_string();
    }
    let mut calls: Vec<String> = reply
        .tool_calls
        .iter()
        .map(|c| {
            let name = c.name.as_deref().unwrap_or("?");
            match arguments(c) {
                Some(args) => format!("{name}{}", normalise(&Value::Object(args))),
                None => format!("{name}(invalid json)"),
            }
        })
        .collect();
    calls.sort();
    calls.join("; ")
}

/// The calls as the model wrote them, or its text when it made none.
fn written(reply: &Reply) -> String {
    if reply.tool_calls.is_empty() {
        return reply.content.clone().unwrap_or_default().trim().to_string();
    }
    let calls: Vec<String> = reply
        .tool_calls
        .iter()
        .map(|c| {
            format!(
                "{}({})",
                c.name.as_deref().unwrap_or("?"),
                c.arguments.as_deref().unwrap_or("")
            )
        })
        .collect();
    calls.join("; ")
}

/// The text holds a JSON object shaped like a call: a `name` string with `arguments` or
/// `parameters` beside it (as a template without tool support leaves it). Only the first
/// few objects are tried, so a long text costs little.
fn holds_call(text: &str) -> bool {
    text.match_indices('{').take(16).any(|(i, _)| {
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        matches!(stream.next(), Some(Ok(Value::Object(m)))
            if m.get("name").is_some_and(Value::is_string)
                && (m.contains_key("arguments") || m.contains_key("parameters")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemas() -> BTreeMap<String, Value> {
        BTreeMap::from([(
            "get_weather".to_string(),
            json!({"type": "object", "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
            }, "required": ["city"], "additionalProperties": false}),
        )])
    }

    fn expected() -> Vec<ExpectedCall> {
        vec![ExpectedCall {
            name: "get_weather".into(),
            arguments: json!({"city": "Paris", "days": 3})
                .as_object()
                .unwrap()
                .clone(),
        }]
    }

    fn reply(name: &str, args: &str, finish: &str) -> String {
        Reply {
            content: None,
            tool_calls: vec![Call {
                id: Some("c1".into()),
                name: Some(name.into()),
                arguments: Some(args.into()),
                arguments_type: None,
            }],
            finish_reason: Some(finish.into()),
        }
        .text()
    }

    fn found(answer: &str) -> ToolCallFound {
        check(&expected(), &schemas(), &Reply::read(answer))
    }

    #[test]
    fn the_expected_call_passes_with_keys_in_any_order_and_numbers_normalised() {
        let s = score(
            &expected(),
            &schemas(),
            &reply(
                "get_weather",
                r#"{"days": 3.0, "city": " paris "}"#,
                "tool_calls",
            ),
        );
        assert_eq!(s.correct, Some(true), "{}", s.evidence);
        let other = score(
            &expected(),
            &schemas(),
            &reply("get_weather", r#"{"city":"Paris","days":3}"#, "tool_calls"),
        );
        assert_eq!(s.extracted, other.extracted);
    }

    #[test]
    fn arguments_sent_as_an_object_are_not_a_string_not_a_schema_mismatch() {
        // What the parser makes of `"arguments": {"city": "Paris", "days": 3}`.
        let answer = Reply {
            content: None,
            tool_calls: vec![Call {
                id: Some("c1".into()),
                name: Some("get_weather".into()),
                arguments: Some(r#"{"city":"Paris","days":3}"#.into()),
                arguments_type: Some("object".into()),
            }],
            finish_reason: Some("tool_calls".into()),
        }
        .text();
        let f = found(&answer);
        assert_eq!(
            (f.count("invalid_json"), f.count("schema_mismatch")),
            (1, 0)
        );
        let s = score(&expected(), &schemas(), &answer);
        assert_eq!(s.correct, Some(false));
        assert!(
            s.evidence.contains(
                "arguments must be a JSON-encoded string per the OpenAI API, not a JSON object"
            ),
            "{}",
            s.evidence
        );
    }

    #[test]
    fn each_fault_lands_in_its_own_bucket() {
        let f = found(&reply("get_weather", "{city: Paris", "tool_calls"));
        assert_eq!((f.count("invalid_json"), f.passed()), (1, false));
        let f = found(&reply("get_forecast", r#"{"city":"Paris"}"#, "tool_calls"));
        assert_eq!(f.count("unknown_name"), 1);
        assert!(f.argument_mismatch);
        let f = found(&reply(
            "get_weather",
            r#"{"city":"Paris","days":"three"}"#,
            "tool_calls",
        ));
        assert_eq!(f.count("schema_mismatch"), 1);
        let f = found(&reply(
            "get_weather",
            r#"{"city":"Lyon","days":3}"#,
            "tool_calls",
        ));
        assert!(f.argument_mismatch && f.faults == [None]);
        let f = found(&reply(
            "get_weather",
            r#"{"city":"Paris","days":3}"#,
            "stop",
        ));
        assert!(f.finish_reason_mismatch && !f.passed());
    }

    #[test]
    fn optional_arguments_the_schema_declares_may_be_added() {
        let f = found(&reply(
            "get_weather",
            r#"{"city":"Paris","days":3,"unit":"celsius"}"#,
            "tool_calls",
        ));
        assert!(f.passed(), "{f:?}");
    }

    #[test]
    fn trigger_misses_unexpected_calls_and_calls_hidden_in_text() {
        let text = r#"{"content":"Sure: {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}","tool_calls":[],"finish_reason":"stop"}"#;
        let f = found(text);
        assert!(f.missed() && f.hidden_call);
        let none = check(&[], &schemas(), &Reply::read("It is sunny."));
        assert!(none.passed());
        let unexpected = check(
            &[],
            &schemas(),
            &Reply::read(&reply("get_weather", r#"{"city":"Paris"}"#, "tool_calls")),
        );
        assert!(unexpected.unexpected() && !unexpected.passed());
    }

    #[test]
    fn parallel_calls_match_in_any_order() {
        let want = vec![
            ExpectedCall {
                name: "get_weather".into(),
                arguments: json!({"city": "Paris"}).as_object().unwrap().clone(),
            },
            ExpectedCall {
                name: "get_weather".into(),
                arguments: json!({"city": "Rome"}).as_object().unwrap().clone(),
            },
        ];
        let call = |city: &str| Call {
            id: None,
            name: Some("get_weather".into()),
            arguments: Some(format!(r#"{{"city":"{city}"}}"#)),
            arguments_type: None,
        };
        let r = Reply {
            content: None,
            tool_calls: vec![call("Rome"), call("Paris")],
            finish_reason: Some("tool_calls".into()),
        };
        assert!(check(&want, &schemas(), &r).passed());
        let one = Reply {
            tool_calls: vec![call("Rome")],
            ..r
        };
        assert!(check(&want, &schemas(), &one).argument_mismatch);
    }

    #[test]
    fn an_expected_call_must_fit_its_schema() {
        assert!(validate(&expected(), &schemas()).is_ok());
        let bad = vec![ExpectedCall {
            name: "get_weather".into(),
            arguments: json!({"days": 0}).as_object().unwrap().clone(),
        }];
        assert!(validate(&bad, &schemas()).is_err());
        assert!(validate(&expected(), &BTreeMap::new()).is_err());
    }
}
