//! JSON scoring: find the JSON value in an answer, check validity, required keys, types and values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Detail, JsonFound, JsonPlace, Score};

/// A JSON type a required key must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JsonType {
    String,
    Number,
    Integer,
    Boolean,
    Array,
    Object,
    Null,
    Any,
}

impl JsonType {
    pub fn matches(self, v: &Value) -> bool {
        match self {
            JsonType::String => v.is_string(),
            JsonType::Number => v.is_number(),
            JsonType::Integer => v.is_i64() || v.is_u64(),
            JsonType::Boolean => v.is_boolean(),
            JsonType::Array => v.is_array(),
            JsonType::Object => v.is_object(),
            JsonType::Null => v.is_null(),
            JsonType::Any => true,
        }
    }
}

/// Find the JSON value in an answer: the whole text, a fenced code block, or the first
/// balanced `{...}` / `[...]` span that parses; with the value's text as written and its place.
fn extract_json(answer: &str) -> Option<(Value, &str, JsonPlace)> {
    let trimmed = answer.trim();
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        if v.is_object() || v.is_array() {
            return Some((v, trimmed, JsonPlace::Whole));
        }
    }
    let mut rest = answer;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let Some(end) = after[body_start..].find("```") else {
            break;
        };
        let body = &after[body_start..body_start + end];
        if let Ok(v) = serde_json::from_str::<Value>(body.trim()) {
            return Some((v, body.trim(), JsonPlace::CodeFence));
        }
        rest = &after[body_start + end + 3..];
    }
    for (i, c) in answer.char_indices() {
        if c == '{' || c == '[' {
            let mut stream = serde_json::Deserializer::from_str(&answer[i..]).into_iter::<Value>();
            if let Some(Ok(v)) = stream.next() {
                if v.is_object() || v.is_array() {
                    let written = &answer[i..i + stream.byte_offset()];
                    return Some((v, written, JsonPlace::Embedded));
                }
            }
        }
    }
    None
}

pub fn score(
    required: &BTreeMap<String, JsonType>,
    values: &BTreeMap<String, Value>,
    answer: &str,
) -> Score {
    let Some((value, written, place)) = extract_json(answer) else {
        return Score::new(Some(false), Detail::NotFound, "no valid JSON found");
    };
    let how = match place {
        JsonPlace::Whole => "valid JSON",
        JsonPlace::CodeFence => "valid JSON (extracted from a code fence)",
        JsonPlace::Embedded => "valid JSON (extracted from surrounding prose)",
    };
    let detail = Detail::Json(JsonFound {
        place,
        object: value.is_object(),
        in_foreign_code: in_foreign_code(answer),
    });
    let canonical = serde_json::to_string(&value).unwrap_or_default();
    let mut problems = Vec::new();
    if !required.is_empty() || !values.is_empty() {
        match value.as_object() {
            None => problems.push("top-level value is not an object".to_string()),
            Some(obj) => {
                for (key, ty) in required {
                    match obj.get(key) {
                        None => problems.push(format!("missing key `{key}`")),
                        Some(v) if !ty.matches(v) => problems.push(format!(
                            "`{key}` is not {}",
                            format!("{ty:?}").to_lowercase()
                        )),
                        _ => {}
                    }
                }
                for (key, want) in values {
                    match obj.get(key) {
                        Some(v) if json_equal(v, want) => {}
                        Some(v) => problems.push(format!("`{key}` is {v}, expected {want}")),
                        None if required.contains_key(key) => {}
                        None => problems.push(format!("missing key `{key}`")),
                    }
                }
            }
        }
    }
    let evidence = if problems.is_empty() {
        how.to_string()
    } else {
        format!("{how}; {}", problems.join("; "))
    };
    Score::new(Some(problems.is_empty()), detail, evidence).read(canonical, written)
}

/// The answer is a fenced block in a language other than JSON (```python, ```js …).
fn in_foreign_code(answer: &str) -> bool {
    answer.trim_start().strip_prefix("```").is_some_and(|rest| {
        let lang = rest.lines().next().unwrap_or("").trim().to_lowercase();
        !lang.is_empty() && lang != "json"
    })
}

/// Equality that treats 2 and 2.0 as the same number.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(pairs: &[(&str, JsonType)]) -> BTreeMap<String, JsonType> {
        pairs.iter().map(|(k, t)| (k.to_string(), *t)).collect()
    }

    #[test]
    fn finds_json_in_fences_and_prose() {
        let r = req(&[("name", JsonType::String), ("age", JsonType::Integer)]);
        let fenced = "Here you go:\n```json\n{\"name\": \"Ada\", \"age\": 36}\n```";
        let s = score(&r, &BTreeMap::new(), fenced);
        assert_eq!(s.correct, Some(true));
        assert!(s.evidence.contains("code fence"));
        let prose = "Sure! {\"name\": \"Ada\", \"age\": 36} Hope that helps.";
        let s = score(&r, &BTreeMap::new(), prose);
        assert_eq!(s.correct, Some(true));
        assert!(s.evidence.contains("prose"));
    }

    #[test]
    fn reports_missing_keys_and_wrong_types() {
        let r = req(&[("name", JsonType::String), ("age", JsonType::Integer)]);
        let s = score(&r, &BTreeMap::new(), "{\"name\": 5}");
        assert_eq!(s.correct, Some(false));
        assert!(s.evidence.contains("missing key `age`"), "{}", s.evidence);
        assert!(
            s.evidence.contains("`name` is not string"),
            "{}",
            s.evidence
        );
    }

    #[test]
    fn invalid_json_is_wrong() {
        let s = score(&BTreeMap::new(), &BTreeMap::new(), "{name: 'Ada'}");
        assert_eq!(s.correct, Some(false));
        assert_eq!(s.extracted, None);
    }

    #[test]
    fn exact_values_are_checked() {
        let values: BTreeMap<String, Value> = [("count".to_string(), serde_json::json!(3))].into();
        assert_eq!(
            score(&BTreeMap::new(), &values, "{\"count\": 3.0}").correct,
            Some(true)
        );
        assert_eq!(
            score(&BTreeMap::new(), &values, "{\"count\": 4}").correct,
            Some(false)
        );
    }
}
