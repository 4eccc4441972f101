//! A key a server echoes split across logprob tokens (`"sk-te"`, `"st-12"`): each token alone
//! is not the key, so the body's redaction misses it, and the record would keep it whole in its
//! token list. Found in the tokens joined, it is redacted in every token (and its `bytes` and
//! its own entry among the alternatives) that holds a piece of it.

use serde_json::Value;

use super::secret::REDACTED;

/// `body` with every occurrence of `key` across the logprob tokens of its choices (chat or
/// completions format) redacted; None when there is none (the body is left as sent then).
pub fn redact_tokens(key: &str, body: &str) -> Option<String> {
    // Cheap first: a body without logprobs is most bodies.
    if key.is_empty() || !body.contains("logprobs") {
        return None;
    }
    let mut json: Value = serde_json::from_str(body).ok()?;
    let mut changed = false;
    for choice in json.get_mut("choices")?.as_array_mut()? {
        let Some(lp) = choice.get_mut("logprobs").filter(|v| v.is_object()) else {
            continue;
        };
        changed |= match lp.get("content").is_some() {
            true => redact_chat(key, lp.get_mut("content")),
            false => redact_completions(key, lp),
        };
    }
    changed.then(|| serde_json::to_string(&json).ok()).flatten()
}

/// `content[] {token, bytes, top_logprobs[] {token, bytes}}`.
fn redact_chat(key: &str, content: Option<&mut Value>) -> bool {
    let Some(entries) = content.and_then(Value::as_array_mut) else {
        return false;
    };
    let tokens: Vec<String> = entries
        .iter()
        .map(|e| {
            e.get("token")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let Some(redacted) = redacted_tokens(key, &tokens) else {
        return false;
    };
    for ((entry, old), new) in entries.iter_mut().zip(&tokens).zip(redacted) {
        if *old == new {
            continue;
        }
        set_token(entry, &new);
        let alternatives = entry.get_mut("top_logprobs").and_then(Value::as_array_mut);
        for alt in alternatives.into_iter().flatten() {
            if alt.get("token").and_then(Value::as_str) == Some(old) {
                set_token(alt, &new);
            }
        }
    }
    true
}

/// An entry's `token` (and its `bytes`, when listed) set to `text`.
fn set_token(entry: &mut Value, text: &str) {
    if let Some(fields) = entry.as_object_mut() {
        fields.insert("token".into(), text.into());
        if fields.contains_key("bytes") {
            fields.insert("bytes".into(), text.as_bytes().to_vec().into());
        }
    }
}

/// `tokens[]` and `top_logprobs[] {token: logprob}`.
fn redact_completions(key: &str, lp: &mut Value) -> bool {
    let Some(list) = lp.get_mut("tokens").and_then(Value::as_array_mut) else {
        return false;
    };
    let tokens: Vec<String> = list
        .iter()
        .map(|t| t.as_str().unwrap_or("").to_string())
        .collect();
    let Some(redacted) = redacted_tokens(key, &tokens) else {
        return false;
    };
    for (slot, new) in list.iter_mut().zip(&redacted) {
        *slot = new.as_str().into();
    }
    let tops = lp.get_mut("top_logprobs").and_then(Value::as_array_mut);
    for ((top, old), new) in tops.into_iter().flatten().zip(&tokens).zip(&redacted) {
        if old == new {
            continue;
        }
        if let Some(alternatives) = top.as_object_mut() {
            if let Some(value) = alternatives.shift_remove(old) {
                alternatives.insert(new.clone(), value);
            }
        }
    }
    true
}

/// Each token with the pieces of every occurrence of `key` in the tokens joined taken out, the
/// token where an occurrence starts holding `[REDACTED]` in its place; None when the joined
/// tokens do not hold the key.
fn redacted_tokens(key: &str, tokens: &[String]) -> Option<Vec<String>> {
    let joined: String = tokens.concat();
    let found: Vec<(usize, usize)> = joined
        .match_indices(key)
        .map(|(at, _)| (at, at + key.len()))
        .collect();
    if found.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut start = 0;
    for token in tokens {
        let end = start + token.len();
        let mut text = String::new();
        let mut at = start;
        for &(from, to) in found.iter().filter(|(f, t)| *f < end && *t > start) {
            if from >= at {
                text.push_str(&joined[at..from]);
            }
            if from >= start {
                text.push_str(REDACTED);
            }
            at = to.min(end).max(at);
        }
        text.push_str(&joined[at.min(end)..end]);
        out.push(text);
        start = end;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-split-key-123";

    #[test]
    fn a_key_split_across_chat_tokens_is_redacted_in_each_piece() {
        let body = r#"{"choices":[{"message":{"content":"x"},"logprobs":{"content":[
            {"token":"key: sk-sp","logprob":-0.1,"bytes":[1],"top_logprobs":[{"token":"key: sk-sp","logprob":-0.1},{"token":"other","logprob":-3}]},
            {"token":"lit-key","logprob":-0.2},
            {"token":"-123 ok","logprob":-0.3}]}}]}"#;
        let out = redact_tokens(KEY, body).unwrap();
        assert!(!out.contains("sk-sp") && !out.contains("lit-key"), "{out}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let content = &v["choices"][0]["logprobs"]["content"];
        let tokens: Vec<&str> = (0..3)
            .map(|i| content[i]["token"].as_str().unwrap())
            .collect();
        assert_eq!(tokens, ["key: [REDACTED]", "", " ok"]);
        assert_eq!(
            content[0]["bytes"],
            serde_json::json!(b"key: [REDACTED]".to_vec())
        );
        assert_eq!(content[0]["top_logprobs"][0]["token"], "key: [REDACTED]");
        assert_eq!(content[0]["top_logprobs"][1]["token"], "other");
        assert_eq!(content[2]["logprob"], -0.3);
    }

    #[test]
    fn a_key_split_across_completion_tokens_is_redacted_with_its_alternatives() {
        let body = r#"{"choices":[{"text":"x","logprobs":{"tokens":["a sk-split","-key-","123","sk-split-key-123"],
            "token_logprobs":[-1,-1,-1,-1],"top_logprobs":[{"a sk-split":-1},null,{"123":-1,"9":-2},null]}}]}"#;
        let out = redact_tokens(KEY, body).unwrap();
        assert!(!out.contains("sk-split"), "{out}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let lp = &v["choices"][0]["logprobs"];
        assert_eq!(
            lp["tokens"],
            serde_json::json!(["a [REDACTED]", "", "", "[REDACTED]"])
        );
        assert_eq!(
            lp["top_logprobs"][0],
            serde_json::json!({"a [REDACTED]": -1})
        );
        assert_eq!(lp["top_logprobs"][2], serde_json::json!({"9": -2, "": -1}));
    }

    #[test]
    fn bodies_without_the_key_in_their_tokens_are_left_as_sent() {
        assert_eq!(redact_tokens(KEY, "not json, logprobs"), None);
        let body = r#"{"choices":[{"logprobs":{"content":[{"token":"sk-sp"},{"token":"x"}]}}]}"#;
        assert_eq!(redact_tokens(KEY, body), None);
        assert_eq!(
            redacted_tokens("ab", &["xa".into(), "by".into()]).unwrap(),
            ["x[REDACTED]", "y"]
        );
        assert_eq!(
            redacted_tokens("ab", &["abab".into()]).unwrap(),
            ["[REDACTED][REDACTED]"]
        );
    }
}
