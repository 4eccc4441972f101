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

    /// Replace every occurrence of the key in `text` (a server may echo it back).
    pub fn redact(&self, text: &str) -> String {
        if text.contains(&self.0) {
            text.replace(&self.0, "[REDACTED]")
        } else {
            text.to_string()
        }
    }
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
}
