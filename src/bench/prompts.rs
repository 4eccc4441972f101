//! Request bodies: the chat body every bench/soak/smoke request uses, prompts of an approximate
//! token count (unique per request, so a prefix cache cannot answer them), and the decode prompt.

use serde_json::{json, Map, Value};

/// Common English words that are a single token (with their leading space) in the usual BPE
/// vocabularies, so `n` of them make a prompt of about `n` tokens.
const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "had",
    "they",
    "you",
    "were",
    "their",
    "one",
    "all",
    "we",
    "can",
    "her",
    "has",
    "there",
    "been",
    "if",
    "more",
    "when",
    "will",
    "would",
    "who",
    "so",
    "no",
    "time",
    "people",
    "year",
    "way",
    "day",
    "man",
    "thing",
    "woman",
    "life",
    "child",
    "world",
    "school",
    "state",
    "family",
    "group",
    "country",
    "problem",
    "hand",
    "part",
    "place",
    "case",
    "week",
    "company",
    "system",
    "program",
    "question",
    "work",
    "number",
    "night",
    "point",
    "home",
    "water",
    "room",
    "mother",
    "area",
    "money",
    "story",
    "fact",
    "month",
    "lot",
    "right",
    "study",
    "book",
    "eye",
    "job",
    "word",
    "business",
    "issue",
    "side",
    "kind",
    "head",
    "house",
    "service",
    "friend",
    "father",
    "power",
    "hour",
    "game",
    "line",
    "end",
    "member",
    "law",
    "car",
    "city",
    "name",
    "team",
    "minute",
    "idea",
    "kid",
    "body",
    "back",
    "parent",
    "face",
    "others",
    "level",
    "office",
    "door",
    "health",
    "person",
    "art",
    "war",
    "history",
    "party",
    "result",
    "change",
    "morning",
    "reason",
    "research",
    "girl",
    "guy",
    "moment",
    "air",
    "teacher",
    "force",
    "education",
    "good",
    "new",
    "first",
    "last",
    "long",
    "great",
    "little",
    "own",
    "other",
    "old",
    "big",
    "high",
    "different",
    "small",
    "large",
    "next",
    "early",
    "young",
    "important",
    "few",
    "public",
    "bad",
    "same",
    "able",
    "make",
    "know",
    "take",
    "see",
    "come",
    "think",
    "look",
    "want",
    "give",
    "use",
    "find",
    "tell",
    "ask",
    "seem",
    "feel",
    "try",
    "leave",
    "call",
    "keep",
    "let",
    "begin",
    "show",
    "hear",
    "play",
    "run",
    "move",
    "like",
    "live",
    "believe",
    "hold",
    "bring",
    "happen",
    "write",
    "sit",
    "stand",
    "lose",
    "pay",
    "meet",
    "include",
    "continue",
    "set",
    "learn",
    "lead",
    "understand",
    "watch",
    "follow",
    "stop",
    "create",
    "speak",
    "read",
    "spend",
    "grow",
    "open",
    "walk",
    "win",
    "offer",
    "remember",
    "love",
    "consider",
    "appear",
    "buy",
    "wait",
    "serve",
    "die",
    "send",
    "expect",
    "build",
    "stay",
    "fall",
    "cut",
    "reach",
    "kill",
    "remain",
];

/// Tokens the nonce, the instruction and the chat template add around the filler. Measured with
/// SmolLM2's BPE through llama.cpp: the filler is one token a word and the rest about 48 tokens;
/// with this allowance 512 came back as 506 prompt tokens, 4096 as 4088 and 8192 as 8184, so a
/// size just under `max_model_len` stays inside it.
const TEMPLATE_ALLOWANCE: u64 = 64;

/// `n` pseudo-random common words from `seed` (the same seed gives the same text).
pub fn filler(n: usize, seed: u64) -> String {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = String::with_capacity(n * 6);
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[rng.usize(..WORDS.len())]);
    }
    out
}

/// A user message of about `tokens` tokens including the chat template. `nonce` starts the
/// message, so no two nonces share a cacheable prefix.
pub fn sized_prompt(tokens: u64, nonce: u64) -> String {
    let words = tokens.saturating_sub(TEMPLATE_ALLOWANCE).max(1) as usize;
    format!(
        "[{nonce:016x}] Read the text and reply with one word.\n{}",
        filler(words, nonce)
    )
}

const TOPICS: &[&str] = &[
    "the history of the printing press",
    "how lighthouses work",
    "the life cycle of stars",
    "the invention of the telescope",
    "how bridges carry load",
    "the story of the transatlantic telegraph",
];

/// The prompt of decode and concurrency request `i`: asks for a long text, so the budget
/// (`max_tokens`) rather than the model decides the length.
pub fn decode_prompt(i: u64) -> String {
    format!(
        "Write a very long, detailed essay about {}. Use many sections and keep writing; \
         do not summarise and do not stop early.",
        TOPICS[(i as usize) % TOPICS.len()]
    )
}

/// A `stream: false` chat request. `extra` (from `--param`) is applied last and wins.
pub fn chat_body(
    model: &str,
    messages: Value,
    max_tokens: u32,
    temperature: f64,
    extra: &Map<String, Value>,
) -> Value {
    let mut body = json!({
        "model": model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": false,
    });
    let obj = body.as_object_mut().expect("object");
    for (k, v) in extra {
        obj.insert(k.clone(), v.clone());
    }
    body
}

/// A single user message.
pub fn user(content: &str) -> Value {
    json!([{ "role": "user", "content": content }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_prompts_have_the_requested_word_count_and_unique_prefixes() {
        let p = sized_prompt(1024, 7);
        let body_words = p.lines().nth(1).unwrap().split_whitespace().count();
        assert_eq!(body_words as u64, 1024 - TEMPLATE_ALLOWANCE);
        assert_eq!(p, sized_prompt(1024, 7));
        let q = sized_prompt(1024, 8);
        assert_ne!(p[..20], q[..20]);
    }

    #[test]
    fn params_override_the_defaults() {
        let mut extra = Map::new();
        extra.insert("temperature".into(), json!(0.7));
        extra.insert("ignore_eos".into(), json!(true));
        let b = chat_body("m", user("hi"), 64, 0.0, &extra);
        assert_eq!(b["temperature"], json!(0.7));
        assert_eq!(b["ignore_eos"], json!(true));
        assert_eq!(b["stream"], json!(false));
        assert_eq!(b["max_tokens"], json!(64));
    }
}
