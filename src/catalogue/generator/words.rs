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

/// Three-letter words, for the easiest levels (the list's words have five letters or more).
const SHORT: &[&str] = &[
    "cat", "dog", "sun", "box", "red", "map", "pen", "cup", "hat", "bus", "fox", "egg", "jam",
    "owl", "pig", "rug", "van", "web", "zip", "bag", "bed", "cow", "ant", "ice", "kit", "leg",
    "mud", "net", "oak", "pot", "ray", "sky", "toy", "wax", "yak", "art", "bee", "dad", "eye",
    "mom", "pop", "see", "too", "add", "odd", "all", "off", "bib", "tot", "pup",
];

/// One three-letter word, chosen by `rng`.
pub fn short(rng: &mut Rng) -> &'static str {
    SHORT[rng.usize(..SHORT.len())]
}

/// One word of `min` to `max` letters (the list holds words of five to fifteen or so), or any
/// word when none fits.
pub fn of_length(rng: &mut Rng, min: usize, max: usize) -> &'static str {
    for _ in 0..1_000 {
        let w = any(rng);
        if (min..=max).contains(&w.len()) {
            return w;
        }
    }
    any(rng)
}

/// `n` random lowercase letters: a string no word list helps with.
pub fn random_letters(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| rng.lowercase()).collect()
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
