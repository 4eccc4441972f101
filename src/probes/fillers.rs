//! The filler requests that keep a server busy while a probe runs: long, varied generations,
//! each send numbered so that no two fillers are the same prompt (a prompt cache cannot
//! shortcut them), plus the short unrelated prompts and the shared preamble of the cache-state
//! phase.

use serde_json::{json, Value};

use super::Target;
use crate::run::Sampling;

/// Prompts that make a model write at length.
const FILLERS: &[&str] = &[
    "Write a long, detailed story about a lighthouse keeper who finds a message in a bottle. Describe the weather, the sea, the keeper's past and every step of the search that follows.",
    "Explain step by step, in great detail, how a compiler turns source code into machine code: lexing, parsing, semantic analysis, optimisation passes, register allocation and code generation.",
    "List one hundred different kinds of trees. For each, give its Latin name, where it grows and one sentence about its wood.",
    "Write a thorough travel guide to an imaginary island city: its districts, food, festivals, transport, history and the customs a visitor should know.",
    "Describe the water cycle as a long lecture for first-year students, with examples from deserts, rainforests, mountains and oceans.",
    "Write the minutes of a long and argumentative village council meeting about building a new bridge, with every speaker's full remarks.",
    "Teach a beginner to play chess: the board, every piece and how it moves, special moves, the opening principles and three sample games with commentary.",
    "Write a long letter from a sailor in 1850 to his family, describing a voyage around Cape Horn day by day.",
];

/// Short prompts with nothing in common with the catalogue, sent before a cold probe.
const UNRELATED: &[&str] = &[
    "Name three colours of the rainbow.",
    "What sound does a cow make?",
    "Say hello in French.",
    "Name a planet in the solar system.",
];

/// The question asked behind the shared preamble to cache it before the probe.
pub const PRIMER: &str = "In one sentence: what are these notes about?";

/// Token budget of an unrelated or primer request.
pub const SHORT_TOKENS: u32 = 16;

/// The filler prompt of send number `n`.
pub fn filler_text(n: usize) -> String {
    format!("{} (Filler request {n}.)", FILLERS[n % FILLERS.len()])
}

/// An unrelated short prompt, by index.
pub fn unrelated_text(n: usize) -> &'static str {
    UNRELATED[n % UNRELATED.len()]
}

/// A long preamble (several hundred tokens) shared by every prefix-state request.
pub fn preamble() -> String {
    let notes = [
        "These are general reference notes for the assistant.",
        "Answers should be accurate, brief and to the point.",
        "When a question asks for a number, give the number.",
        "When a question asks for a word, give the word.",
        "The notes below are background only and do not change any question.",
        "Weather reports describe temperature, wind, rain and cloud cover over a day.",
        "A library lends books, journals and recordings to its members for a few weeks.",
        "Trains run on rails between stations; buses run on roads between stops.",
        "Gardens need water, light and soil; some plants prefer shade, others full sun.",
        "A recipe lists ingredients first and then the steps to prepare a dish.",
    ];
    let mut out = String::from("Reference notes.\n");
    for round in 1..=4 {
        for (i, n) in notes.iter().enumerate() {
            out.push_str(&format!("{round}.{}. {n}\n", i + 1));
        }
    }
    out.push_str("End of notes.\n\n");
    out
}

/// The body of a one-message chat request, with the run's sampling and the endpoint's overrides.
pub fn chat_body(target: &Target, text: &str, max_tokens: u32, sampling: &Sampling) -> Value {
    let mut body = json!({
        "model": target.model,
        "messages": [{"role": "user", "content": text}],
        "temperature": sampling.temperature,
        "max_tokens": max_tokens,
        "stream": false,
    });
    for (k, v) in sampling.params.iter().chain(&target.sampling_override) {
        body[k.as_str()] = v.clone();
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fillers_are_varied_and_the_preamble_is_long() {
        assert_ne!(filler_text(0), filler_text(FILLERS.len()));
        assert!(filler_text(3).contains(FILLERS[3]));
        assert!(preamble().split_whitespace().count() > 300);
        assert_ne!(unrelated_text(0), unrelated_text(1));
    }
}
