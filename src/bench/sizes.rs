//! Token counts as people write them: `512`, `8k` (8 × 1024), `1m` (1024 × 1024). Used by the
//! `--prefill`/`--long-context` flags and by the `prefill.<SIZE>` keys of a baseline.

/// A token count: `512`, `8k` (8 × 1024) or `1m` (1024 × 1024).
pub fn token_count(raw: &str) -> Option<u64> {
    let raw = raw.trim().to_ascii_lowercase();
    let (digits, unit) = match raw.strip_suffix('k') {
        Some(d) => (d, 1024),
        None => match raw.strip_suffix('m') {
            Some(d) => (d, 1024 * 1024),
            None => (raw.as_str(), 1),
        },
    };
    let n: f64 = digits.parse().ok()?;
    let tokens = (n * unit as f64).round();
    (n.is_finite() && tokens >= 1.0).then_some(tokens as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_k_and_m_as_powers_of_two() {
        assert_eq!(token_count("8k"), Some(8192));
        assert_eq!(token_count("100K"), Some(102_400));
        assert_eq!(token_count("1m"), Some(1_048_576));
        assert_eq!(token_count("512"), Some(512));
        assert_eq!(token_count("0.5k"), Some(512));
        assert_eq!(token_count("k"), None);
        assert_eq!(token_count("0"), None);
    }
}
