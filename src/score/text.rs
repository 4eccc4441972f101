//! Text normalisation shared by the string scorers.

/// Lowercase, drop markdown, quotes and punctuation, and collapse whitespace.
pub fn normalize(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_lowercase().next().unwrap_or(c)
            } else {
                ' '
            }
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `needle` occurs in `haystack` as whole words (both already normalised).
pub fn contains_phrase(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let padded = format!(" {haystack} ");
    padded.contains(&format!(" {needle} "))
}

/// The first `max` characters of `s` on one line, with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_drops_case_punctuation_and_markdown() {
        assert_eq!(normalize("  **George  Orwell**. "), "george orwell");
        assert_eq!(normalize("“Yes,” she said!"), "yes she said");
    }

    #[test]
    fn phrase_match_respects_word_boundaries() {
        assert!(contains_phrase(
            "the author is george orwell",
            "george orwell"
        ));
        assert!(!contains_phrase("paris hilton", "paris hilt"));
    }

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text() {
        assert_eq!(clip("a\nb", 10), "a b");
        assert_eq!(clip("abcdefghij", 5), "abcd…");
    }
}
