//! Where two completions first differ: character offset, the text around it, and the token index
//! when the response carried logprobs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Characters of context shown on each side of a divergence.
const CONTEXT: usize = 40;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    /// Characters both texts share before they differ.
    pub char_offset: usize,
    /// The token at which they differ, when logprobs were returned (from the first text's tokens).
    pub token_index: Option<usize>,
    /// Up to 40 characters before the divergence (shared by both).
    pub before: String,
    /// Up to 40 characters of each text from the divergence on.
    pub left: String,
    pub right: String,
}

/// None when the texts are equal.
pub fn first_divergence(
    left: &str,
    right: &str,
    left_tokens: Option<&[String]>,
) -> Option<Divergence> {
    if left == right {
        return None;
    }
    let offset = left
        .chars()
        .zip(right.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let l: Vec<char> = left.chars().collect();
    let r: Vec<char> = right.chars().collect();
    let before: String = l[offset.saturating_sub(CONTEXT)..offset].iter().collect();
    let tail = |v: &[char]| {
        v[offset.min(v.len())..(offset + CONTEXT).min(v.len())]
            .iter()
            .collect::<String>()
    };
    Some(Divergence {
        char_offset: offset,
        token_index: left_tokens.and_then(|t| token_at(t, offset)),
        before,
        left: tail(&l),
        right: tail(&r),
    })
}

/// The index of the token that contains character `offset`, when the tokens spell the text.
fn token_at(tokens: &[String], offset: usize) -> Option<usize> {
    let mut seen = 0;
    for (i, t) in tokens.iter().enumerate() {
        seen += t.chars().count();
        if seen > offset {
            return Some(i);
        }
    }
    None
}

/// One generated token with its logprob and the alternatives the server listed there.
#[derive(Debug, Clone, PartialEq)]
pub struct LogprobToken {
    pub token: String,
    pub logprob: Option<f64>,
    pub top: Vec<(String, f64)>,
}

/// The generated tokens listed in a raw response body's logprobs (chat or completions format).
pub fn logprob_tokens(raw_body: &str) -> Option<Vec<String>> {
    logprob_positions(raw_body).map(|p| p.into_iter().map(|t| t.token).collect())
}

/// Every generated token with its logprob and top-k, from a raw response body: chat format
/// (`logprobs.content[] {token, logprob, top_logprobs[] {token, logprob}}`) or completions
/// format (`logprobs {tokens[], token_logprobs[], top_logprobs[] {token: logprob}}`).
pub fn logprob_positions(raw_body: &str) -> Option<Vec<LogprobToken>> {
    let json: Value = serde_json::from_str(raw_body).ok()?;
    let lp = json.pointer("/choices/0/logprobs")?;
    let positions: Vec<LogprobToken> =
        if let Some(content) = lp.get("content").and_then(Value::as_array) {
            content
                .iter()
                .filter_map(|t| {
                    let top = t
                        .get("top_logprobs")
                        .and_then(Value::as_array)
                        .map(|alts| {
                            alts.iter()
                                .filter_map(|a| {
                                    Some((
                                        a.get("token")?.as_str()?.to_string(),
                                        a.get("logprob")?.as_f64()?,
                                    ))
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    Some(LogprobToken {
                        token: t.get("token")?.as_str()?.to_string(),
                        logprob: t.get("logprob").and_then(Value::as_f64),
                        top,
                    })
                })
                .collect()
        } else {
            let tokens = lp.get("tokens")?.as_array()?;
            let logprobs = lp.get("token_logprobs").and_then(Value::as_array);
            let tops = lp.get("top_logprobs").and_then(Value::as_array);
            tokens
                .iter()
                .enumerate()
                .filter_map(|(i, t)| {
                    let top = tops
                        .and_then(|all| all.get(i)?.as_object())
                        .map(|m| {
                            m.iter()
                                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                                .collect()
                        })
                        .unwrap_or_default();
                    Some(LogprobToken {
                        token: t.as_str()?.to_string(),
                        logprob: logprobs.and_then(|l| l.get(i)?.as_f64()),
                        top,
                    })
                })
                .collect()
        };
    (!positions.is_empty()).then_some(positions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_differing_character_with_context() {
        let d =
            first_divergence("The answer is 3 apples.", "The answer is 5 apples.", None).unwrap();
        assert_eq!(d.char_offset, 14);
        assert_eq!(d.before, "The answer is ");
        assert_eq!(d.left, "3 apples.");
        assert_eq!(d.right, "5 apples.");
        assert!(first_divergence("same", "same", None).is_none());
        let d = first_divergence("abc", "abcdef", None).unwrap();
        assert_eq!(
            (d.char_offset, d.left.as_str(), d.right.as_str()),
            (3, "", "def")
        );
    }

    #[test]
    fn maps_the_offset_to_a_token_from_logprobs() {
        let body = r#"{"choices":[{"logprobs":{"content":[{"token":"The"},{"token":" answer"},{"token":" is"},{"token":" 3"}]}}]}"#;
        let tokens = logprob_tokens(body).unwrap();
        let d = first_divergence("The answer is 3", "The answer is 5", Some(&tokens)).unwrap();
        assert_eq!(d.token_index, Some(3));
        let completions = r#"{"choices":[{"logprobs":{"tokens":["A","B"]}}]}"#;
        assert_eq!(logprob_tokens(completions).unwrap(), ["A", "B"]);
        assert!(logprob_tokens(r#"{"choices":[{}]}"#).is_none());
    }
}
