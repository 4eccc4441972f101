//! Where two completions first differ: character offset, the text around it, and the token index
//! when the response carried logprobs.

use serde::{Deserialize, Serialize};

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
        let tokens = ["The", " answer", " is", " 3"].map(String::from);
        let d = first_divergence("The answer is 3", "The answer is 5", Some(&tokens)).unwrap();
        assert_eq!(d.token_index, Some(3));
        let d = first_divergence("The answer is 3", "The answer is 3.", Some(&tokens)).unwrap();
        assert_eq!(d.token_index, None, "past the last token");
    }
}
