//! The one parser of a choice's `logprobs` object, in either format a server answers with:
//! chat (`content[] {token, logprob, top_logprobs[] {token, logprob}}`) or completions
//! (`tokens[]`, `token_logprobs[]`, `top_logprobs[] {token: logprob}`). Anything malformed is an
//! error message, never a panic.

use serde_json::{Map, Value};

/// One token as the server listed it, with whatever it said about it.
#[derive(Debug, Clone, PartialEq)]
pub struct LogprobToken {
    /// The token's text as the server rendered it.
    pub token: String,
    /// The token's own logprob (None when the server sent null, as for an echoed first token).
    pub logprob: Option<f64>,
    /// The alternatives listed at this position, best first (empty when the server sent none).
    pub top: Vec<(String, f64)>,
}

/// The most alternatives read per token, the best kept: the most any command asks (`logprobs
/// --top-k` up to 100; a compare asks `run::request::TOP_LOGPROBS`), so a server that lists
/// 10^5 per token costs no more memory once read than one that lists 100.
pub const MAX_TOP_LOGPROBS: usize = 100;

/// Logprobs above this are not log-probabilities (allows for rounding of a certain token).
const MAX_LOGPROB: f64 = 1e-3;

/// `choice.logprobs` as tokens, in the chat or the completions format.
pub fn parse_logprobs(choice: &Value) -> Result<Vec<LogprobToken>, String> {
    let lp = choice
        .get("logprobs")
        .filter(|v| !v.is_null())
        .ok_or_else(|| "the response carries no logprobs".to_string())?;
    match lp.get("content") {
        Some(content) => chat_format(content),
        None => completions_format(lp),
    }
}

/// `logprobs.content[]`: one object per token.
fn chat_format(content: &Value) -> Result<Vec<LogprobToken>, String> {
    let entries = content
        .as_array()
        .ok_or_else(|| "logprobs.content is not a list".to_string())?;
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let token = e
            .get("token")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("logprobs.content[{i}].token is missing or not a string"))?
            .to_string();
        let logprob = match e.get("logprob") {
            None | Some(Value::Null) => None,
            Some(v) => Some(logprob_value(v, &format!("logprobs.content[{i}].logprob"))?),
        };
        let top = match e.get("top_logprobs") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(alts)) => {
                let mut top = Vec::with_capacity(alts.len());
                for (j, alt) in alts.iter().enumerate() {
                    let what = format!("logprobs.content[{i}].top_logprobs[{j}]");
                    let alt_token = alt
                        .get("token")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("{what}.token is missing or not a string"))?;
                    let alt_logprob = alt
                        .get("logprob")
                        .ok_or_else(|| format!("{what} has no logprob"))?;
                    top.push((alt_token.to_string(), logprob_value(alt_logprob, &what)?));
                }
                sort_best_first(&mut top);
                top.truncate(MAX_TOP_LOGPROBS);
                top
            }
            Some(other) => {
                return Err(format!(
                    "logprobs.content[{i}].top_logprobs is not a list: {}",
                    short(other)
                ))
            }
        };
        out.push(LogprobToken {
            token,
            logprob,
            top,
        });
    }
    Ok(out)
}

/// `logprobs {tokens, token_logprobs, top_logprobs}`: parallel lists, one entry per token.
fn completions_format(lp: &Value) -> Result<Vec<LogprobToken>, String> {
    let tokens = lp
        .get("tokens")
        .and_then(Value::as_array)
        .ok_or_else(|| "logprobs.tokens is missing or not a list".to_string())?;
    let values = lp
        .get("token_logprobs")
        .and_then(Value::as_array)
        .ok_or_else(|| "logprobs.token_logprobs is missing or not a list".to_string())?;
    let tops = lp.get("top_logprobs").and_then(Value::as_array);
    if values.len() != tokens.len() || tops.is_some_and(|t| t.len() != tokens.len()) {
        return Err(format!(
            "logprobs lists differ in length: {} tokens, {} token_logprobs, {} top_logprobs",
            tokens.len(),
            values.len(),
            tops.map_or(0, Vec::len)
        ));
    }
    let mut out = Vec::with_capacity(tokens.len());
    for (i, t) in tokens.iter().enumerate() {
        let token = t
            .as_str()
            .ok_or_else(|| format!("logprobs.tokens[{i}] is not a string"))?
            .to_string();
        let logprob = match &values[i] {
            Value::Null => None,
            v => Some(logprob_value(v, &format!("token_logprobs[{i}]"))?),
        };
        let top = match tops.map(|t| &t[i]) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(m)) => top_map(m, &format!("top_logprobs[{i}]"))?,
            Some(other) => {
                return Err(format!(
                    "top_logprobs[{i}] is not an object: {}",
                    short(other)
                ))
            }
        };
        out.push(LogprobToken {
            token,
            logprob,
            top,
        });
    }
    Ok(out)
}

/// A log-probability: a finite number not above zero (beyond rounding), clamped to zero.
pub(crate) fn logprob_value(v: &Value, what: &str) -> Result<f64, String> {
    let x = v
        .as_f64()
        .ok_or_else(|| format!("{what} is not a number: {}", short(v)))?;
    if !x.is_finite() || x > MAX_LOGPROB {
        return Err(format!("{what} is not a log-probability: {x}"));
    }
    Ok(x.min(0.0))
}

fn top_map(map: &Map<String, Value>, what: &str) -> Result<Vec<(String, f64)>, String> {
    let mut top = map
        .iter()
        .map(|(k, v)| Ok((k.clone(), logprob_value(v, what)?)))
        .collect::<Result<Vec<_>, String>>()?;
    sort_best_first(&mut top);
    top.truncate(MAX_TOP_LOGPROBS);
    Ok(top)
}

/// Alternatives ordered most likely first.
pub(crate) fn sort_best_first(top: &mut [(String, f64)]) {
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
}

/// A JSON value for an error message, cut at 200 characters.
pub(crate) fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        format!("{}…", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(choice: &str) -> Result<Vec<LogprobToken>, String> {
        parse_logprobs(&serde_json::from_str(choice).unwrap())
    }

    #[test]
    fn reads_the_completions_format() {
        let p = parse(r#"{"text":"ab","logprobs":{"tokens":["a","b"],"token_logprobs":[null,-0.5],"top_logprobs":[null,{"c":-1.5,"b":-0.5}]}}"#)
            .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].logprob, None);
        assert!(p[0].top.is_empty());
        assert_eq!(p[1].top, vec![("b".into(), -0.5), ("c".into(), -1.5)]);
    }

    #[test]
    fn reads_the_chat_format() {
        let p = parse(r#"{"logprobs":{"content":[{"token":"The","logprob":-0.1,"bytes":[84],"top_logprobs":[{"token":"A","logprob":-2.5},{"token":"The","logprob":-0.1}]},{"token":" end","logprob":null}]}}"#)
            .unwrap();
        let tokens: Vec<&str> = p.iter().map(|t| t.token.as_str()).collect();
        assert_eq!(tokens, ["The", " end"]);
        assert_eq!(p[0].logprob, Some(-0.1));
        assert_eq!(p[0].top, vec![("The".into(), -0.1), ("A".into(), -2.5)]);
        assert_eq!((p[1].logprob, p[1].top.len()), (None, 0));
    }

    #[test]
    fn at_most_the_best_hundred_alternatives_are_kept_in_either_format() {
        let alts: Vec<serde_json::Value> = (0..1000)
            .map(|k| serde_json::json!({"token": format!("t{k}"), "logprob": -(k as f64) / 10.0}))
            .collect();
        let chat = serde_json::json!({"logprobs": {"content": [{"token": "t0", "logprob": 0.0, "top_logprobs": alts}]}});
        let map: serde_json::Map<String, Value> = (0..1000)
            .map(|k| (format!("t{k}"), serde_json::json!(-(k as f64) / 10.0)))
            .collect();
        let completions = serde_json::json!({"logprobs": {"tokens": ["t0"], "token_logprobs": [0.0], "top_logprobs": [map]}});
        for choice in [chat, completions] {
            let top = &parse_logprobs(&choice).unwrap()[0].top;
            assert_eq!(top.len(), MAX_TOP_LOGPROBS);
            assert_eq!((top[0].0.as_str(), top[99].0.as_str()), ("t0", "t99"));
        }
    }

    #[test]
    fn malformed_logprobs_are_errors() {
        for choice in [
            r#"{"text":"a"}"#,
            r#"{"logprobs":null}"#,
            r#"{"logprobs":{"tokens":["a"],"token_logprobs":[]}}"#,
            r#"{"logprobs":{"tokens":["a"],"token_logprobs":["x"]}}"#,
            r#"{"logprobs":{"tokens":["a"],"token_logprobs":[2.0]}}"#,
            r#"{"logprobs":{"tokens":[1],"token_logprobs":[-1]}}"#,
            r#"{"logprobs":{"tokens":["a"],"token_logprobs":[-1],"top_logprobs":[[1]]}}"#,
            r#"{"logprobs":{"content":{"token":"a"}}}"#,
            r#"{"logprobs":{"content":[{"logprob":-1}]}}"#,
            r#"{"logprobs":{"content":[{"token":"a","logprob":3}]}}"#,
            r#"{"logprobs":{"content":[{"token":"a","top_logprobs":[{"token":"b"}]}]}}"#,
            r#"{"logprobs":{"content":[{"token":"a","top_logprobs":{"b":-1}}]}}"#,
        ] {
            assert!(parse(choice).is_err(), "{choice}");
        }
    }
}
