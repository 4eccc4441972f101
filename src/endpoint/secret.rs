//! An API key that cannot be printed, serialised or logged by accident, and the one redaction
//! that scrubs it from whatever a server sends back, however escaped.

use std::fmt;

/// A bearer token. `Debug` and `Display` never show it; `redact` scrubs it from text.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// None when the value is empty.
    pub fn new(value: String) -> Option<Self> {
        let trimmed = value.trim().to_string();
        (!trimmed.is_empty()).then_some(ApiKey(trimmed))
    }

    /// The key itself, only for building the `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Replace every occurrence of the key in `text` (a server may echo it back) with
    /// `[REDACTED]`: as written, or behind up to [`MAX_LAYERS`] layers of escaping, each layer
    /// JSON escapes (`sk\u002d...`) or percent escapes (`sk%2D...`) over the one below. Tool-call
    /// arguments are JSON text inside a JSON string, so a key there arrives escaped twice
    /// (`sk\\u002d...`); every text decoded from the result, however many times, is free of
    /// the key. The whole spelling of each occurrence is replaced, so escapes stay well formed.
    ///
    /// Time and memory are linear in the text: each layer is decoded once, whole, until one
    /// holds no escape; a layer that holds the key is decoded again, from the text, to find
    /// where it came from, and those spellings are replaced before going deeper.
    pub fn redact(&self, text: &str) -> String {
        let key = self.0.as_str();
        let mut raw = text.replace(key, REDACTED);
        let mut layer = raw.clone();
        for depth in 1..=MAX_LAYERS {
            if !layer.contains(['\\', '%']) {
                break;
            }
            let below = unescape(&layer, None);
            if below.len() == layer.len() {
                break; // No escape was well formed: the layers below are all this one.
            }
            layer = if below.contains(key) {
                raw = replace_spans(&raw, self.spans_at(&raw, depth));
                (0..depth).fold(raw.clone(), |t, _| unescape(&t, None))
            } else {
                below
            };
        }
        raw
    }

    /// Where in `raw` each occurrence of the key spelt `depth` layers down is written.
    fn spans_at(&self, raw: &str, depth: usize) -> Vec<(usize, usize)> {
        let mut text = raw.to_string();
        let mut to_raw: Vec<usize> = (0..=raw.len()).collect();
        for _ in 0..depth {
            let mut starts = Vec::with_capacity(text.len() + 1);
            text = unescape(&text, Some(&mut starts));
            to_raw = starts.into_iter().map(|s| to_raw[s]).collect();
        }
        let key = self.0.as_str();
        text.match_indices(key)
            .map(|(at, _)| (to_raw[at], to_raw[at + key.len()]))
            .collect()
    }
}

pub(super) const REDACTED: &str = "[REDACTED]";

/// How many layers of escaping [`ApiKey::redact`] looks through: far more than any server
/// nests (tool-call arguments are two), and a bound on the work a hostile body can cause.
pub const MAX_LAYERS: usize = 16;

/// `text` with each span (byte ranges, in order, not overlapping) replaced by `[REDACTED]`.
fn replace_spans(text: &str, spans: Vec<(usize, usize)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in spans {
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

/// One layer of escaping decoded: each JSON escape and each percent escape read as the character
/// it stands for, anything else (a broken escape included) as itself. With `starts`, also where
/// each character of the result starts in `text` (an entry per byte: those inside a character
/// are never read), and one more entry for the end of `text`.
fn unescape(text: &str, mut starts: Option<&mut Vec<usize>>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        // The text up to the next escape is itself.
        let plain = text[at..].find(['\\', '%']).map_or(text.len(), |i| at + i);
        out.push_str(&text[at..plain]);
        if let Some(starts) = starts.as_deref_mut() {
            starts.extend(at..plain);
        }
        at = plain;
        let Some(literal) = text[at..].chars().next() else {
            break;
        };
        let (c, end) = match literal {
            '\\' => json_escape(text, at + 1),
            _ => percent_escape(text, at + 1),
        }
        .unwrap_or((literal, at + 1));
        out.push(c);
        if let Some(starts) = starts.as_deref_mut() {
            starts.extend(std::iter::repeat_n(at, c.len_utf8()));
        }
        at = end;
    }
    if let Some(starts) = starts {
        starts.push(text.len());
    }
    out
}

/// The rest of a JSON escape after its `\` (at byte `at`): a one-letter escape or `\uXXXX` (a
/// surrogate pair spans two of them); the character and where its spelling ends.
fn json_escape(text: &str, at: usize) -> Option<(char, usize)> {
    let letter = text.get(at..)?.chars().next()?;
    let simple = match letter {
        'u' => return unicode_escape(text, at + 1),
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'b' => '\u{8}',
        'f' => '\u{c}',
        other => other,
    };
    Some((simple, at + letter.len_utf8()))
}

/// `XXXX` (or `XXXX\uXXXX`, a surrogate pair) after a `\u`, from byte `at`.
fn unicode_escape(text: &str, at: usize) -> Option<(char, usize)> {
    let high = hex(text, at, 4)?;
    if !(0xD800..0xDC00).contains(&high) {
        return Some((char::from_u32(high)?, at + 4));
    }
    if text.get(at + 4..at + 6)? != "\\u" {
        return None;
    }
    let low = hex(text, at + 6, 4)?;
    let code = 0x10000 + ((high - 0xD800) << 10) + low.checked_sub(0xDC00)?;
    Some((char::from_u32(code)?, at + 10))
}

/// `XX` after a `%` (at byte `at`), with the `%XX` escapes that complete a UTF-8 sequence.
fn percent_escape(text: &str, at: usize) -> Option<(char, usize)> {
    let lead = hex(text, at, 2)?;
    let len = match lead {
        0x00..=0x7F => return Some((char::from_u32(lead)?, at + 2)),
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    let mut bytes = vec![lead as u8];
    let mut end = at + 2;
    for _ in 1..len {
        if text.get(end..end + 1)? != "%" {
            return None;
        }
        bytes.push(hex(text, end + 1, 2)? as u8);
        end += 3;
    }
    let c = std::str::from_utf8(&bytes).ok()?.chars().next()?;
    Some((c, end))
}

/// The value of the `n` hexadecimal digits at byte `at`.
fn hex(text: &str, at: usize, n: usize) -> Option<u32> {
    let digits = text.get(at..at + n)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// `name` as a message may show the name of the variable said to hold a key (`--api-key-env`,
/// `api_key_env`): itself when it reads as an environment variable's name, else `None`, for a
/// key pasted where its variable's name goes must not be printed back. A name reads as one when
/// it is letters, digits and `_`, not starting with a digit, and not a long run that mixes
/// lower-case letters and digits as keys do.
pub fn shown_var_name(name: &str) -> Option<&str> {
    let mut chars = name.chars();
    let well_formed = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    let key_like = name.len() >= 20
        && name.chars().any(|c| c.is_ascii_lowercase())
        && name.chars().any(|c| c.is_ascii_digit());
    (well_formed && !key_like).then_some(name)
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([REDACTED])")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_variable_name_is_shown_back() {
        for name in ["OPENAI_API_KEY", "B_KEY", "_x", "spark_key_2"] {
            assert_eq!(shown_var_name(name), Some(name));
        }
        let keys = [
            "sk-coherence-test-7f3a9c1e5b",
            "a3f9c1e5b7d24e6f8a0b1c2d3e4f5a6b",
            "",
            "2KEY",
            "KEY NAME",
        ];
        for value in keys {
            assert_eq!(shown_var_name(value), None, "{value}");
        }
    }

    #[test]
    fn never_prints_and_redacts_echoes() {
        let key = ApiKey::new("sk-secret-123".into()).unwrap();
        assert_eq!(format!("{key:?} {key}"), "ApiKey([REDACTED]) [REDACTED]");
        assert_eq!(key.redact("bad key sk-secret-123!"), "bad key [REDACTED]!");
        assert!(ApiKey::new("  ".into()).is_none());
    }

    #[test]
    fn redacts_a_key_echoed_with_json_escapes() {
        let key = ApiKey::new("sk-secret/123".into()).unwrap();
        let body =
            r#"{"content": "your key is sk\u002dsecret\/12\u0033, twice: \u0073k-secret/123"}"#;
        let redacted = key.redact(body);
        assert_eq!(
            redacted,
            r#"{"content": "your key is [REDACTED], twice: [REDACTED]"}"#
        );
        let decoded: serde_json::Value = serde_json::from_str(&redacted).unwrap();
        assert!(!decoded.to_string().contains("secret"));
        // Escapes that spell something else, or are cut short, are left as they are.
        let other = r#"sk\u002dsecret/124 sk\u002 \ud83d\ude00 \"#;
        assert_eq!(key.redact(other), other);
        let emoji = ApiKey::new("k\u{1F600}".into()).unwrap();
        assert_eq!(emoji.redact(r"k\ud83d\ude00!"), "[REDACTED]!");
    }

    /// `text` as a JSON string literal, without its quotes: one layer of escaping, every `-`
    /// written `\u002d` as a hostile server may.
    fn escaped(text: &str) -> String {
        let quoted = serde_json::to_string(text).unwrap();
        quoted[1..quoted.len() - 1].replace('-', r"\u002d")
    }

    #[test]
    fn redacts_a_key_behind_any_layers_of_escaping_up_to_the_bound() {
        let key = ApiKey::new("sk-secret-123".into()).unwrap();
        // Tool-call arguments: JSON text in a JSON string in the body, the key in it escaped.
        let mut text = r#"{"arguments": "{\"k\": \"sk-secret-123\"}"}"#.to_string();
        for layer in 1..=MAX_LAYERS {
            text = escaped(&text);
            let redacted = key.redact(&format!("say {text}!"));
            assert_eq!(
                redacted.matches("[REDACTED]").count(),
                1,
                "{layer}: {redacted}"
            );
            assert!(redacted.starts_with("say ") && redacted.ends_with('!'));
            // Every decoding of the redacted text is free of the key.
            let mut decoded = redacted[4..redacted.len() - 1].to_string();
            for _ in 0..layer {
                decoded = serde_json::from_str(&format!("\"{decoded}\"")).unwrap();
                assert!(!decoded.contains("secret"), "{layer}: {decoded}");
            }
        }
        let twice = r#""{\"city\": \"sk\\u002dsecret\\u002d123\"}""#;
        assert_eq!(key.redact(twice), r#""{\"city\": \"[REDACTED]\"}""#);
    }

    #[test]
    fn redacts_a_percent_encoded_key() {
        let key = ApiKey::new("sk-secret/é".into()).unwrap();
        assert_eq!(
            key.redact("?k=sk%2Dsecret%2f%C3%A9&x=1"),
            "?k=[REDACTED]&x=1"
        );
        assert_eq!(key.redact("sk\\u002dsecret%2F\\u00e9"), "[REDACTED]");
        // A `%` that escapes nothing stands for itself.
        let percent = ApiKey::new("sk%zz".into()).unwrap();
        assert_eq!(percent.redact("a sk%zz b %4"), "a [REDACTED] b %4");
        assert_eq!(
            key.redact("100% sk%2Dsecret%2F%C3"),
            "100% sk%2Dsecret%2F%C3"
        );
    }

    #[test]
    fn a_body_of_escapes_is_redacted_in_linear_time() {
        let key = ApiKey::new("sk-secret-123".into()).unwrap();
        let run = |c: &str| c.repeat(1 << 17);
        let body = run("\\") + " " + r"sk\\u002dsecret\\u002d123 " + &run("%");
        let started = std::time::Instant::now();
        let redacted = key.redact(&body);
        assert_eq!(redacted, run("\\") + " [REDACTED] " + &run("%"));
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }
}
