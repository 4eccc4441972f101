//! Response bodies to scored token positions: the OpenAI completions `logprobs` object (echo and
//! decode, read by the one logprobs parser of `endpoint`) and vLLM's `prompt_logprobs`. Anything
//! malformed is an error message, never a panic.

use serde_json::Value;

use crate::endpoint::{logprob_value, parse_logprobs, short, sort_best_first, LogprobToken};

fn choice0(json: &Value) -> Result<&Value, String> {
    if let Some(e) = json.get("error") {
        return Err(format!("error object: {}", short(e)));
    }
    json.pointer("/choices/0")
        .ok_or_else(|| "no choices[0] in the response".to_string())
}

fn parse_json(body: &str) -> Result<Value, String> {
    serde_json::from_str(body).map_err(|e| format!("response is not JSON: {e}"))
}

/// `choices[0].logprobs` of a completions response, as echo and decode return it. Every listed
/// token is a position.
pub fn parse_completion_logprobs(body: &str) -> Result<Vec<LogprobToken>, String> {
    parse_logprobs(choice0(&parse_json(body)?)?)
}

/// One listed token of a `prompt_logprobs` entry: its id, decoded text and logprob.
type Listed = (String, String, f64);

/// `prompt_token_ids`, in the choice or at the top level, when the server sends them.
fn prompt_token_ids(json: &Value, choice: &Value) -> Option<Vec<String>> {
    choice
        .get("prompt_token_ids")
        .or_else(|| json.get("prompt_token_ids"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_u64().map(|n| n.to_string()).unwrap_or_default())
                .collect()
        })
}

/// Every token listed in entry `i` (a map of token id to `{logprob, decoded_token}`).
fn listed_tokens(map: &serde_json::Map<String, Value>, i: usize) -> Result<Vec<Listed>, String> {
    let mut listed = Vec::with_capacity(map.len());
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
        listed.push((id.clone(), decoded, lp));
    }
    Ok(listed)
}

/// The prompt token of entry `i`: by its id when the server sent `prompt_token_ids`, else the
/// one listed token that ends the text not yet matched (several different ones are an error).
fn prompt_token<'a>(
    listed: &'a [Listed],
    ids: Option<&[String]>,
    i: usize,
    remaining: &str,
) -> Result<&'a Listed, String> {
    if let Some(ids) = ids {
        return listed
            .iter()
            .find(|(id, _, _)| *id == ids[i])
            .ok_or_else(|| {
                format!(
                    "prompt_logprobs[{i}] does not list the prompt token {}",
                    ids[i]
                )
            });
    }
    let fits: Vec<&Listed> = listed
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
    Ok(first)
}

/// vLLM's `choices[0].prompt_logprobs`: one entry per prompt token, the first null, each a map
/// of token id to `{logprob, rank, decoded_token}` holding the top-k and the prompt token. The
/// prompt token is picked by `prompt_token_ids` when the server sends them, else by walking the
/// text backwards (only an unambiguous match is accepted); the first token is what is left.
pub fn parse_prompt_logprobs(body: &str, text: &str) -> Result<Vec<LogprobToken>, String> {
    let json = parse_json(body)?;
    let choice = choice0(&json)?;
    let entries = choice
        .get("prompt_logprobs")
        .or_else(|| json.get("prompt_logprobs"))
        .and_then(Value::as_array)
        .ok_or_else(|| "the response carries no prompt_logprobs".to_string())?;
    let ids = prompt_token_ids(&json, choice);
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
        let listed = listed_tokens(map, i)?;
        let actual = prompt_token(&listed, ids.as_deref(), i, remaining)?;
        remaining = remaining
            .strip_suffix(actual.1.as_str())
            .ok_or_else(|| format!("prompt token {i} {:?} is not in the text", actual.1))?;
        let mut top: Vec<(String, f64)> =
            listed.iter().map(|(_, d, lp)| (d.clone(), *lp)).collect();
        sort_best_first(&mut top);
        reversed.push(LogprobToken {
            token: actual.1.clone(),
            logprob: Some(actual.2),
            top,
        });
    }
    if !entries.is_empty() && entries[0].is_null() {
        reversed.push(LogprobToken {
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
    fn reads_the_logprobs_of_a_completions_body() {
        let body = r#"{"choices":[{"text":"ab","logprobs":{"tokens":["a","b"],"token_logprobs":[null,-0.5],"top_logprobs":[null,{"b":-0.5,"c":-1.5}]}}]}"#;
        let p = parse_completion_logprobs(body).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].top, vec![("b".into(), -0.5), ("c".into(), -1.5)]);
    }

    #[test]
    fn bodies_without_a_choice_are_errors() {
        for body in [
            "not json",
            r#"{"choices":[]}"#,
            r#"{"choices":[{"text":"a"}]}"#,
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
