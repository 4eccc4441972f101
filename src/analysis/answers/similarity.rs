//! Text similarity between two endpoints' open-ended answers.

use similar::TextDiff;

/// Two open-ended answers at least this similar (word-level diff ratio) are `same`;
/// below it the prompt needs human `review`.
pub const SAME_SIMILARITY: f64 = 0.8;

/// Word-level similarity in [0, 1]: 1 for identical texts.
pub fn similarity(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    let a: Vec<&str> = a.split_whitespace().collect();
    let b: Vec<&str> = b.split_whitespace().collect();
    f64::from(TextDiff::from_slices(&a, &b).ratio())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_and_different_texts() {
        assert_eq!(similarity("the cat sat", "the cat sat"), 1.0);
        assert!(similarity("the cat sat on the mat", "the cat sat on a mat") > SAME_SIMILARITY);
        assert!(similarity("the cat sat on the mat", "dogs bark loudly at night") < 0.3);
    }
}
