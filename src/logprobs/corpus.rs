//! The text corpus teacher forcing scores: the one shipped in the repository (compiled in) or a
//! user's own, as TOML (`[[passage]]` tables) or JSON Lines (one object per line).

use std::path::Path;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

/// The shipped corpus, `prompts/logprobs/corpus.toml`.
pub const SHIPPED: &str = include_str!("../../prompts/logprobs/corpus.toml");

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Passage {
    pub id: String,
    #[serde(default = "default_category")]
    pub category: String,
    pub text: String,
}

fn default_category() -> String {
    "uncategorised".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlCorpus {
    passage: Vec<Passage>,
}

/// Parse a corpus; `jsonl` selects JSON Lines, else TOML. Ids must be unique, texts non-empty.
pub fn parse(source: &str, jsonl: bool) -> anyhow::Result<Vec<Passage>> {
    let passages: Vec<Passage> = if jsonl {
        source
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("line {}", i + 1)))
            .collect::<anyhow::Result<_>>()?
    } else {
        toml::from_str::<TomlCorpus>(source)?.passage
    };
    if passages.is_empty() {
        bail!("the corpus has no passages");
    }
    let mut seen = std::collections::HashSet::new();
    for p in &passages {
        if p.id.trim().is_empty() {
            bail!("a passage has an empty id");
        }
        if p.text.trim().is_empty() {
            bail!("passage `{}` has no text", p.id);
        }
        if !seen.insert(p.id.as_str()) {
            bail!("passage id `{}` is used twice", p.id);
        }
    }
    Ok(passages)
}

/// The shipped corpus, or the file given (`.jsonl` is JSON Lines, anything else TOML).
pub fn load(path: Option<&Path>) -> anyhow::Result<Vec<Passage>> {
    match path {
        None => parse(SHIPPED, false).context("the shipped corpus"),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("--corpus {}: cannot read it", p.display()))?;
            let jsonl = p.extension().is_some_and(|e| e == "jsonl");
            parse(&text, jsonl).with_context(|| format!("--corpus {}", p.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_corpus_is_large_and_varied() {
        let c = parse(SHIPPED, false).unwrap();
        assert!(c.len() >= 50, "{} passages", c.len());
        let cats: std::collections::BTreeSet<_> = c.iter().map(|p| p.category.as_str()).collect();
        for want in ["prose", "code", "numbers", "dialogue", "multilingual"] {
            assert!(cats.contains(want), "no {want} passages: {cats:?}");
        }
    }

    #[test]
    fn both_formats_parse_and_bad_corpora_are_refused() {
        let j = parse(
            "{\"id\":\"a\",\"text\":\"x\"}\n\n{\"id\":\"b\",\"category\":\"c\",\"text\":\"y\"}\n",
            true,
        )
        .unwrap();
        assert_eq!(j[0].category, "uncategorised");
        assert_eq!(j[1].category, "c");
        assert!(parse(
            "{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"a\",\"text\":\"y\"}",
            true
        )
        .is_err());
        assert!(parse("[[passage]]\nid = \"a\"\ntext = \"  \"\n", false).is_err());
        assert!(parse("", false).is_err());
        assert!(parse("{not json", true).is_err());
    }
}
