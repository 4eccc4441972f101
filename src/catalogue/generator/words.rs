//! The word list of the generated suites (`generator/words.txt`, compiled into the binary).

use std::sync::OnceLock;

use fastrand::Rng;

/// Used only if the built-in list were missing or empty, so generation never fails.
const FALLBACK: &[&str] = &["strawberry", "mississippi", "bookkeeper", "committee"];

/// Every word of the list, in file order.
pub fn all() -> &'static [&'static str] {
    static WORDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let words: Vec<&'static str> = crate::builtin::generator_text("words.txt")
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        if words.is_empty() {
            FALLBACK.to_vec()
        } else {
            words
        }
    })
}

/// One word, chosen by `rng`.
pub fn any(rng: &mut Rng) -> &'static str {
    let words = all();
    words[rng.usize(..words.len())]
}

/// `n` different words, chosen by `rng`, in the order drawn.
pub fn distinct(rng: &mut Rng, n: usize) -> Vec<&'static str> {
    let words = all();
    let n = n.min(words.len());
    let mut chosen: Vec<&'static str> = Vec::with_capacity(n);
    while chosen.len() < n {
        let w = any(rng);
        if !chosen.contains(&w) {
            chosen.push(w);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_built_in_list_is_lowercase_words() {
        let words = super::all();
        assert!(words.len() >= 200, "{}", words.len());
        for w in words {
            assert!(
                w.len() >= 5 && w.chars().all(|c| c.is_ascii_lowercase()),
                "{w}"
            );
        }
    }
}
