//! Response bodies to scored token positions: the OpenAI completions `logprobs` object (echo and
//! decode) and vLLM's `prompt_logprobs`. Anything malformed is an error message, never a panic.

use serde_json::{Map, Value};

/// One token of a response as the server listed it, with whatever it said about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    /// The token's text as the server rendered it.
    pub token: String,
    /// `token_logprobs[i]` (echo/decode) or the token's own entry (prompt_logprobs).
    pub logprob: Option<f64>,
    /// `top_logprobs[i]`, best first (empty when the server sent null).
    pub top: Vec<(String, f64)>,
}

/// Logprobs above this are not log-probabilities (allows for rounding of a certain token).
const MAX_LOGPROB: f64 = 1e-3;

fn choice0(json: &Value) -> Result<&Value, String> {
    if let Some(e) = json.get("error") {
        return Err(format!("error object: {}", short(e)));
    }
    json.pointer("/choices/0")
        .ok_or_else(|| "no choices[0] in the response".to_string())
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        format!("{}…", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

fn parse_json(body: &str) -> Result<Value, String> {
    serde_json::from_str(body).map_err(|e| format!("response is not JSON: {e}"))
}

fn logprob_value(v: &Value, what: &str) -> Result<f64, String> {
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
    Ok(top)
}

fn sort_best_first(top: &mut [(String, f64)]) {
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
}

/// `choices[0].logprobs` in the completions format (`tokens`, `token_logprobs`, `top_logprobs`),
/// as echo and decode return it. Every listed token is a position.
pub fn parse_completion_logprobs(body: &str) -> Result<Vec<Position>, String> {
    let json = parse_json(body)?;
    let lp = choice0(&json)?
        .get("logprobs")
        .filter(|v| !v.is_null())
        .ok_or_else(|| "the response carries no logprobs".to_string())?;
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
        out.push(Position {
            token,
            logprob,
            top,
        });
    }
    Ok(out)
}

/// vLLM's `choices[0].prompt_logprobs`: one entry per prompt token, the first null, each a map
/// of token id to `{logprob, rank, decoded_token}` holding the top-k and the prompt token. The
/// prompt token is picked by `prompt_token_ids` when the server sends them, else by walking the
/// text backwards (only an unambiguous match is accepted); the first token is what is left.
pub fn parse_prompt_logprobs(body: &str, text: &str) -> Result<Vec<Position>, String> {
    let json = parse_json(body)?;
    let choice = choice0(&json)?;
    let entries = choice
        .get("prompt_logprobs")
        .or_else(|| json.get("prompt_logprobs"))
        .and_then(Value::as_array)
        .ok_or_else(|| "the response carries no prompt_logprobs".to_string())?;
    let ids: Option<Vec<String>> = choice
        .get("prompt_token_ids")
        .or_else(|| json.get("prompt_token_ids"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_u64().map(|n| n.to_string()).unwrap_or_default())
                .collect()
        });
    if ids.as_ref().is_some_and(|ids| ids.len() != entries.len()) {
        return Err("prompt_token_ids and prompt_logprobs differ in length".into());
    }
    let mut remaining = text;
    let mut reversed = Vec::with_capacity(entries.len());
    for i in (0..entries.len()).rev() {
        let map = match &entries[i] {
            Value::Object(m) => m,
            Value::Null if i == 0 => break,
            other => {
                return Err(format!(
                    "prompt_logprobs[{i}] is not an object: {}",
                    short(other)
                ))
            }
        };
        let mut top = Vec::with_capacity(map.len());
        let mut by_id = Vec::with_capacity(map.len());
        for (id, e) in map {
            let what = format!("prompt_logprobs[{i}][{id}]");
            let lp = logprob_value(
                e.get("logprob")
                    .ok_or_else(|| format!("{what} has no logprob"))?,
                &what,
            )?;
            let decoded = e
                .get("decoded_token")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{what} has no decoded_token"))?
                .to_string();
            top.push((decoded.clone(), lp));
            by_id.push((id.clone(), decoded, lp));
        }
        let actual = match &ids {
            Some(ids) => by_id
                .iter()
                .find(|(id, _, _)| *id == ids[i])
                .ok_or_else(|| {
                    format!(
                        "prompt_logprobs[{i}] does not list the prompt token {}",
                        ids[i]
                    )
                })?,
            None => {
                let fits: Vec<_> = by_id
                    .iter()
                    .filter(|(_, d, _)| !d.is_empty() && remaining.ends_with(d.as_str()))
                    .collect();
                let first = fits.first().ok_or_else(|| {
                    format!("prompt_logprobs[{i}] lists no token that ends the remaining text")
                })?;
                if fits.iter().any(|(_, d, _)| d != &first.1) {
                    return Err(format!(
                        "prompt_logprobs[{i}]: several listed tokens end the remaining text and the server sent no prompt_token_ids"
                    ));
                }
                *first
            }
        };
        remaining = remaining
            .strip_suffix(actual.1.as_str())
            .ok_or_else(|| format!("prompt token {i} {:?} is not in the text", actual.1))?;
        sort_best_first(&mut top);
        reversed.push(Position {
            token: actual.1.clone(),
            logprob: Some(actual.2),
            top,
        });
    }
    if !entries.is_empty() && entries[0].is_null() {
        reversed.push(Position {
            token: remaining.to_string(),
            logprob: None,
            top: Vec::new(),
        });
    }
    reversed.reverse();
    Ok(reversed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_completions_format() {
        let body = r#"{"choices":[{"text":"ab","logprobs":{"tokens":["a","b"],"token_logprobs":[null,-0.5],"top_logprobs":[null,{"b":-0.5,"c":-1.5}]}}]}"#;
        let p = parse_completion_logprobs(body).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].logprob, None);
        assert!(p[0].top.is_empty());
        assert_eq!(p[1].top, vec![("b".into(), -0.5), ("c".into(), -1.5)]);
    }

    #[test]
    fn malformed_logprobs_are_errors() {
        for body in [
            "not json",
            r#"{"choices":[]}"#,
            r#"{"choices":[{"text":"a"}]}"#,
            r#"{"choices":[{"logprobs":{"tokens":["a"],"token_logprobs":[]}}]}"#,
            r#"{"choices":[{"logprobs":{"tokens":["a"],"token_logprobs":["x"]}}]}"#,
            r#"{"choices":[{"logprobs":{"tokens":["a"],"token_logprobs":[2.0]}}]}"#,
            r#"{"choices":[{"logprobs":{"tokens":[1],"token_logprobs":[-1]}}]}"#,
            r#"{"choices":[{"logprobs":{"tokens":["a"],"token_logprobs":[-1],"top_logprobs":[[1]]}}]}"#,
            r#"{"error":{"message":"nope"}}"#,
        ] {
            assert!(parse_completion_logprobs(body).is_err(), "{body}");
        }
    }

    #[test]
    fn reads_prompt_logprobs_by_id_and_by_text() {
        let body = r#"{"choices":[{"text":"x","prompt_token_ids":[1,2,3],"prompt_logprobs":[null,
            {"2":{"logprob":-0.2,"rank":1,"decoded_token":" b"}},
            {"9":{"logprob":-0.1,"rank":1,"decoded_token":" d"},"3":{"logprob":-2.0,"rank":2,"decoded_token":" c"}}]}]}"#;
        let p = parse_prompt_logprobs(body, "a b c").unwrap();
        let tokens: Vec<_> = p.iter().map(|p| p.token.as_str()).collect();
        assert_eq!(tokens, ["a", " b", " c"]);
        assert_eq!(p[2].logprob, Some(-2.0));
        assert_eq!(p[2].top[0], (" d".into(), -0.1));
        let no_ids = body.replace("\"prompt_token_ids\":[1,2,3],", "");
        assert_eq!(parse_prompt_logprobs(&no_ids, "a b c").unwrap(), p);
        assert!(parse_prompt_logprobs(&no_ids, "a b e").is_err());
    }
}
