//! The kernels the two-sample test compares completions with, each positive definite and
//! normalised so that k(x, x) = 1: exact match on a graded answer's scored key, and the cosine
//! of character n-gram counts for open text.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// The length of the character n-grams of the open-text kernel.
pub const NGRAM: usize = 3;

/// The characters of each sample the test compares: an open prompt's reply is a word or a
/// sentence (64 tokens), so a longer one differs already in its first 2000 characters, and the
/// kernel's cost (a profile per sample, a cosine per pair) stays bounded whatever a server sends.
/// Longer samples are cut here (`clip_sample`) and counted in results.json.
pub const SAMPLE_CHARS: usize = 2000;

/// The first [`SAMPLE_CHARS`] characters of `text`, and whether it was longer.
pub fn clip_sample(text: &str) -> (&str, bool) {
    match text.char_indices().nth(SAMPLE_CHARS) {
        Some((cut, _)) => (&text[..cut], true),
        None => (text, false),
    }
}

/// How two samples of one prompt are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    /// 1 when the two scored answer keys are equal, else 0 (a sample with no answer has the key
    /// of no answer, equal only to another such sample).
    ExactMatch,
    /// The cosine of the two texts' character trigram counts (lower-cased, whitespace
    /// collapsed, with start and end marks so that even a one-letter text has a trigram).
    CharTrigram,
}

impl Kernel {
    /// The Gram matrix of `samples` (row-major, `samples.len()` squared).
    pub fn gram(self, samples: &[&str]) -> Vec<f64> {
        let n = samples.len();
        let mut gram = vec![0.0; n * n];
        match self {
            Kernel::ExactMatch => {
                for i in 0..n {
                    for j in 0..n {
                        gram[i * n + j] = f64::from(u8::from(samples[i] == samples[j]));
                    }
                }
            }
            Kernel::CharTrigram => {
                let profiles: Vec<Profile> = samples.iter().map(|s| Profile::of(s)).collect();
                for i in 0..n {
                    gram[i * n + i] = 1.0;
                    for j in (i + 1)..n {
                        let k = profiles[i].cosine(&profiles[j]);
                        gram[i * n + j] = k;
                        gram[j * n + i] = k;
                    }
                }
            }
        }
        gram
    }
}

/// A text's character n-gram counts and their Euclidean norm.
struct Profile {
    counts: HashMap<String, u32>,
    norm: f64,
}

impl Profile {
    fn of(text: &str) -> Profile {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        let chars: Vec<char> = std::iter::once('\u{2}')
            .chain(words.join(" ").chars())
            .chain(std::iter::once('\u{3}'))
            .collect();
        let mut counts: HashMap<String, u32> = HashMap::new();
        if chars.len() < NGRAM {
            counts.insert(chars.iter().collect(), 1);
        } else {
            for w in chars.windows(NGRAM) {
                *counts.entry(w.iter().collect()).or_insert(0) += 1;
            }
        }
        let norm = counts
            .values()
            .map(|c| f64::from(*c) * f64::from(*c))
            .sum::<f64>()
            .sqrt();
        Profile { counts, norm }
    }

    fn cosine(&self, other: &Profile) -> f64 {
        let (small, large) = if self.counts.len() <= other.counts.len() {
            (self, other)
        } else {
            (other, self)
        };
        let dot: f64 = small
            .counts
            .iter()
            .filter_map(|(g, c)| large.counts.get(g).map(|d| f64::from(*c) * f64::from(*d)))
            .sum();
        // Every profile holds at least one n-gram, so neither norm is 0.
        dot / (self.norm * other.norm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_cut_at_its_first_characters() {
        assert_eq!(clip_sample("short"), ("short", false));
        let long = "é".repeat(SAMPLE_CHARS + 5);
        let (cut, clipped) = clip_sample(&long);
        assert!(clipped);
        assert_eq!(cut.chars().count(), SAMPLE_CHARS);
    }

    #[test]
    fn exact_match_is_one_on_equal_keys_only() {
        let g = Kernel::ExactMatch.gram(&["18", "18", "26"]);
        assert_eq!(g, vec![1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn trigram_cosine_is_one_on_itself_symmetric_and_graded() {
        let texts = [
            "The sea is calm.",
            "the  SEA is calm.",
            "The sea is wild.",
            "",
            "x",
        ];
        let g = Kernel::CharTrigram.gram(&texts);
        let n = texts.len();
        for i in 0..n {
            assert!(
                (g[i * n + i] - 1.0).abs() < 1e-12,
                "k(x,x) = 1 for {:?}",
                texts[i]
            );
            for j in 0..n {
                assert_eq!(g[i * n + j], g[j * n + i]);
                assert!((0.0..=1.0 + 1e-12).contains(&g[i * n + j]));
            }
        }
        // Case and spacing do not count; a changed word lowers the kernel, an unrelated text more.
        assert!((g[1] - 1.0).abs() < 1e-12);
        assert!(g[2] > 0.4 && g[2] < 0.9, "{}", g[2]);
        assert!(g[4] < g[2]);
        assert_eq!(g[3 * n + 4], 0.0, "the empty text shares nothing with `x`");
    }
}
