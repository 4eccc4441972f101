//! An API key that cannot be printed, serialised or logged by accident.

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

    /// Replace every occurrence of the key in `text` (a server may echo it back), as written or
    /// with any of its characters JSON-escaped (`sk\u002d...`), so the key is gone from a raw
    /// body and from every text decoded from it.
    pub fn redact(&self, text: &str) -> String {
        if !text.contains('\\') {
            return text.replace(&self.0, REDACTED);
        }
        let mut out = String::with_capacity(text.len());
        let (mut copied, mut at) = (0, 0);
        while let Some(c) = text[at..].chars().next() {
            match self.written_at(text, at) {
                Some(end) => {
                    out.push_str(&text[copied..at]);
                    out.push_str(REDACTED);
                    (copied, at) = (end, end);
                }
                None => at += c.len_utf8(),
            }
        }
        out.push_str(&text[copied..]);
        out
    }

    /// Where the key ends when `text` spells it from `start`, each character as itself or as a
    /// JSON escape.
    fn written_at(&self, text: &str, start: usize) -> Option<usize> {
        let mut at = start;
        for want in self.0.chars() {
            let (got, len) = json_char(&text[at..])?;
            if got != want {
                return None;
            }
            at += len;
        }
        Some(at)
    }
}

const REDACTED: &str = "[REDACTED]";

/// The first character of `s` as a JSON string decodes it, and how many bytes it spans:
/// itself, a one-letter escape or a `\uXXXX` escape (a surrogate pair spans two of them).
fn json_char(s: &str) -> Option<(char, usize)> {
    let mut chars = s.chars();
    let c = chars.next()?;
    if c != '\\' {
        return Some((c, c.len_utf8()));
    }
    let simple = match chars.next()? {
        'u' => return unicode_escape(s),
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'b' => '\u{8}',
        'f' => '\u{c}',
        other => other,
    };
    Some((simple, 2))
}

/// `\uXXXX` (or a `\uD8xx\uDCxx` surrogate pair) at the start of `s`.
fn unicode_escape(s: &str) -> Option<(char, usize)> {
    let unit = |from: usize| {
        let hex = s.get(from..from + 4)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(hex, 16).ok()
    };
    let high = unit(2)?;
    if !(0xD800..0xDC00).contains(&high) {
        return Some((char::from_u32(high)?, 6));
    }
    if s.get(6..8)? != "\\u" {
        return None;
    }
    let low = unit(8)?;
    let code = 0x10000 + ((high - 0xD800) << 10) + low.checked_sub(0xDC00)?;
    Some((char::from_u32(code)?, 12))
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
}
