//! JSON scoring: find the JSON value in an answer, check validity, required keys, types and values.

use std::collections::BTreeMap;

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Detail, JsonFound, JsonPlace, ReadAt, Score};

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

/// Find the JSON value in an answer: the whole text, a fenced block (in JSON or no language), or
/// the first balanced `{...}` / `[...]` span that parses, outside code; with the value's text as
/// written and its place.
///
/// Code is not JSON: nothing inside a fenced block in another language (```python, ```js, also
/// one left open at the end) is taken, unless the block is that JSON value whole (a printed
/// output labelled with the program's language); nor a value glued to code around it: a subscript
/// (`order_data["items"]`), a call's argument (`json.dumps({...})`), an assignment's or a
/// `return`'s value. A `{` or `[` that never closes (a value cut off mid-way) ends the search:
/// what lies inside it is a fragment, not an answer.
fn extract_json(answer: &str) -> Option<(Value, &str, JsonPlace)> {
    let trimmed = answer.trim();
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        if v.is_object() || v.is_array() {
            return Some((v, trimmed, JsonPlace::Whole));
        }
    }
    let fences = fences(answer);
    for f in &fences {
        let body = answer[f.body.0..f.body.1].trim();
        match serde_json::from_str::<Value>(body) {
            Ok(v) if f.json || v.is_object() || v.is_array() => {
                return Some((v, body, JsonPlace::CodeFence))
            }
            _ => {}
        }
    }
    let in_code = |i: usize| {
        fences
            .iter()
            .any(|f| !f.json && f.whole.0 <= i && i < f.whole.1)
    };
    let mut i = 0;
    while let Some(at) = OPENER.find_at(answer, i).map(|m| m.start()) {
        i = at + 1;
        if in_code(at) || glued_to_code(&answer[..at]) {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&answer[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) if v.is_object() || v.is_array() => {
                let written = &answer[at..at + stream.byte_offset()];
                return Some((v, written, JsonPlace::Embedded));
            }
            _ => match closing(&answer[at..]) {
                Some(len) => i = at + len,
                None => return None,
            },
        }
    }
    None
}

/// A fenced block: its whole range (fences included; an open one runs to the end), its body's
/// range, and whether it holds JSON (its language is `json` or none).
struct Fence {
    whole: (usize, usize),
    body: (usize, usize),
    json: bool,
}

fn fences(answer: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = answer[from..].find("```").map(|i| from + i) {
        let after = open + 3;
        let line_end = answer[after..]
            .find('\n')
            .map_or(answer.len(), |i| after + i);
        let lang = answer[after..line_end].trim().to_lowercase();
        let body_start = (line_end + 1).min(answer.len());
        let close = answer[body_start..].find("```").map(|i| body_start + i);
        let (body_end, whole_end) = close.map_or((answer.len(), answer.len()), |c| (c, c + 3));
        out.push(Fence {
            whole: (open, whole_end),
            body: (body_start, body_end),
            json: lang.is_empty() || lang == "json",
        });
        from = whole_end;
    }
    out
}

/// What comes right before a `{` or `[` makes it part of code: a name or a closing bracket (a
/// subscript), an opening bracket of a call, `=`, `:` after a name in code, or `return`.
fn glued_to_code(before: &str) -> bool {
    // Only the value's own line says whether it is code.
    let before = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let last = before.trim_end_matches([' ', '\t']);
    let glued = before.len() == last.len();
    match last.chars().last() {
        Some(c) if glued && (c.is_alphanumeric() || c == '_' || c == ']' || c == ')') => true,
        Some('(' | '=' | ',') => CODE_LINE.is_match(last),
        _ => RETURN.is_match(last),
    }
}

/// Where a JSON array or object may open.
static OPENER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[{\[]").unwrap());
/// A line of code before a value: an identifier call or assignment on it (`print(`,
/// `data = `, `f(a, `).
static CODE_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\w\]\)]\s*(?:\(|=|\([^\n]*,)$").unwrap());
static RETURN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b(?:return|yield|=>)$").unwrap());

/// The length of the bracketed span opening `s` (through its matching bracket, strings
/// skipped), or None when it never closes.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
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
        let evidence = if fences(answer).iter().any(|f| !f.json) {
            "no JSON answer: the reply is code (JSON inside code is not an answer)"
        } else {
            "no valid JSON found"
        };
        return Score::new(Some(false), Detail::NotFound, evidence);
    };
    let how = match place {
        JsonPlace::Whole => "valid JSON",
        JsonPlace::CodeFence => "valid JSON (extracted from a code fence)",
        JsonPlace::Embedded => "valid JSON (extracted from surrounding prose)",
    };
    let detail = Detail::Json(JsonFound {
        place,
        object: value.is_object(),
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
    let start = super::text::offset_in(answer, written);
    let at = ReadAt {
        closed: true,
        ..ReadAt::new(start, start + written.len(), true)
    };
    Score::new(Some(problems.is_empty()), detail, evidence)
        .read(canonical, written)
        .at(at)
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
