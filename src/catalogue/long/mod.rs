//! The long suite (`--suite long`): a retrieval ladder. Each item hides a key → value needle
//! (with distractor keys) at a chosen depth of a generated haystack of a chosen length, and asks
//! for the needle's value, scored by the `exact` scorer (a distractor's value is wrong).
//!
//! Item (length, depth, n) depends only on the seed, [`LONG_VERSION`] and those three, so a
//! longer ladder or more depths never change the items already made. Lengths are planned from
//! [`CHARS_PER_TOKEN`]; the measured length is each record's `usage.prompt_tokens`.

mod haystack;
mod ladder;

use fastrand::Rng;

use ladder::ANSWER_TOKENS;
pub use ladder::{
    parse_context, parse_depth, parse_length, sorted, LongChoice, Skipped, CHARS_PER_TOKEN,
    MAX_CONTEXT, MAX_PER_CELL, MIN_FITTING_CONTEXT,
};

use super::generator::splitmix;
use super::spec::{Message, Prompt, PromptRequest, Role, SourceLocation};
use crate::score::ScorerSpec;

/// Bumped whenever an item's text changes for a given seed, length, depth and index.
pub const LONG_VERSION: u32 = 1;
/// Every long item's id starts with this; catalogue ids cannot (they hold no `.`).
pub const ID_PREFIX: &str = "long.";
/// The category of every long item.
pub const CATEGORY: &str = "long_context";
/// Keys hidden beside the needle, each with its own value.
const DISTRACTORS: usize = 4;

const KEY_ADJECTIVES: &[&str] = &[
    "amber", "azure", "crimson", "golden", "ivory", "jade", "scarlet", "violet", "emerald",
    "cobalt", "silver", "bronze", "coral", "indigo", "olive", "saffron",
];
const KEY_NOUNS: &[&str] = &[
    "vault",
    "locker",
    "cabinet",
    "gate",
    "safe",
    "archive",
    "depot",
    "hangar",
    "cellar",
    "tower",
    "garage",
    "office",
    "studio",
    "warehouse",
    "terminal",
    "workshop",
];

/// Where an item sits in the ladder, read back from its id (`long.1024.d050.00`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LongId {
    /// Planned prompt length in tokens.
    pub tokens: u32,
    /// Needle depth in percent.
    pub depth: u8,
    pub index: usize,
}

impl LongId {
    pub fn id(&self) -> String {
        format!(
            "{ID_PREFIX}{}.d{:03}.{:02}",
            self.tokens, self.depth, self.index
        )
    }

    pub fn parse(id: &str) -> Option<LongId> {
        let mut parts = id.strip_prefix(ID_PREFIX)?.split('.');
        let tokens = parts.next()?.parse().ok()?;
        let depth = parts.next()?.strip_prefix('d')?.parse().ok()?;
        let index = parts.next()?.parse().ok()?;
        parts.next().is_none().then_some(LongId {
            tokens,
            depth,
            index,
        })
    }
}

/// A prompt's planned length in tokens: a long item's planned length (its id says it, so an
/// item made without its text counts the same), else the characters of what is tokenized
/// (every message, or the raw prompt) over [`CHARS_PER_TOKEN`], rounded up.
pub fn planned_prompt_tokens(p: &Prompt) -> u64 {
    if let Some(at) = LongId::parse(&p.id) {
        return u64::from(at.tokens);
    }
    let chars = match &p.request {
        PromptRequest::Chat { messages } => messages.iter().map(|m| m.content.len()).sum(),
        PromptRequest::Completion { prompt } => prompt.len(),
    };
    chars.div_ceil(CHARS_PER_TOKEN) as u64
}

/// Whether long items are made with their text (to send, list or score) or without it: a dry
/// run counts each item's planned tokens from its id and never builds a haystack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Texts {
    Built,
    Planned,
}

/// Every item of the choice that fits its context, by length, then depth, then index; and the
/// lengths skipped because they do not fit (never sent).
pub fn generate(seed: u64, choice: &LongChoice) -> (Vec<Prompt>, Vec<Skipped>) {
    generate_as(seed, choice, Texts::Built)
}

/// [`generate`], the items with their text or only their plan.
pub fn generate_as(seed: u64, choice: &LongChoice, texts: Texts) -> (Vec<Prompt>, Vec<Skipped>) {
    let (lengths, skipped) = choice.fitting();
    let items = lengths
        .iter()
        .flat_map(|&tokens| {
            choice.depths.iter().flat_map(move |&depth| {
                (0..choice.per_cell).map(move |index| LongId {
                    tokens,
                    depth,
                    index,
                })
            })
        })
        .map(|at| make(seed, at, texts))
        .collect();
    (items, skipped)
}

/// The item at `at` for `seed`: the same whatever else is generated.
pub fn item(seed: u64, at: LongId) -> Prompt {
    make(seed, at, Texts::Built)
}

/// The item at `at` for `seed`, its message empty when only its plan is asked for.
fn make(seed: u64, at: LongId, texts: Texts) -> Prompt {
    let mut rng = Rng::with_seed(mix(&[
        seed,
        u64::from(LONG_VERSION),
        u64::from(at.tokens),
        u64::from(at.depth),
        at.index as u64,
    ]));
    let keys = distinct_keys(&mut rng, DISTRACTORS + 1);
    let values = distinct_codes(&mut rng, keys.len());
    let (key, value) = (&keys[0], &values[0]);
    let frame = |document: &str| {
        format!(
            "Read the document below, then answer the question after it.\n\n<document>\n{document}\n</document>\n\nQuestion: what is the access code for {key}? Reply with the six-digit code only."
        )
    };
    let content = match texts {
        Texts::Built => frame(&document(&mut rng, at, &keys, &values, frame("").len())),
        Texts::Planned => String::new(),
    };
    Prompt {
        id: at.id(),
        category: CATEGORY.to_string(),
        suite: crate::catalogue::Suite::Long,
        request: PromptRequest::Chat {
            messages: vec![Message {
                role: Role::User,
                content,
            }],
        },
        max_tokens: Some(ANSWER_TOKENS),
        tags: vec![
            "long".to_string(),
            format!("context_tokens={}", at.tokens),
            format!("depth={}", at.depth),
        ],
        reference: value.clone(),
        wrong: values[1].clone(),
        score: ScorerSpec::Exact {
            expected: value.clone(),
            aliases: Vec::new(),
            distractors: values[1..].to_vec(),
            closed: false,
        },
        tool_use: None,
        source: SourceLocation {
            file: format!("(long, seed {seed}, version {LONG_VERSION})"),
            line: at.index + 1,
        },
    }
}

/// The haystack with the needle at its depth and the distractors at random places, filling the
/// planned length less the frame's `frame_len` characters.
fn document(
    rng: &mut Rng,
    at: LongId,
    keys: &[String],
    values: &[String],
    frame_len: usize,
) -> String {
    let budget = (at.tokens as usize * CHARS_PER_TOKEN).saturating_sub(frame_len);
    let needle_lines: Vec<String> = keys
        .iter()
        .zip(values)
        .map(|(k, v)| format!("The access code for {k} is {v}."))
        .collect();
    let needles_len: usize = needle_lines.iter().map(|l| l.len() + 1).sum();
    let mut sentences = haystack::sentences(rng, budget.saturating_sub(needles_len));
    // Distractors first, at random places; then the needle at its depth, so it lands exactly there.
    for line in needle_lines.iter().skip(1) {
        let at = rng.usize(..=sentences.len());
        sentences.insert(at, line.clone());
    }
    let needle_at = (sentences.len() * usize::from(at.depth.min(100))).div_ceil(100);
    sentences.insert(needle_at.min(sentences.len()), needle_lines[0].clone());
    sentences.join(" ")
}

/// `n` different keys such as "the amber vault".
fn distinct_keys(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut keys: Vec<String> = Vec::with_capacity(n);
    while keys.len() < n {
        let key = format!(
            "the {} {}",
            KEY_ADJECTIVES[rng.usize(..KEY_ADJECTIVES.len())],
            KEY_NOUNS[rng.usize(..KEY_NOUNS.len())]
        );
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// `n` different six-digit codes.
fn distinct_codes(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut codes: Vec<String> = Vec::with_capacity(n);
    while codes.len() < n {
        let code = rng.u32(100_000..1_000_000).to_string();
        if !codes.contains(&code) {
            codes.push(code);
        }
    }
    codes
}

/// splitmix64 chained over the parts, so neighbouring cells and seeds give unrelated streams.
fn mix(parts: &[u64]) -> u64 {
    parts.iter().fold(0x5EED_u64, |h, &p| splitmix(h ^ p))
}

#[cfg(test)]
mod tests;
