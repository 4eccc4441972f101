//! The built-in prompt set of `coherence distribution`, and what each sample of a prompt is
//! compared on.
//!
//! Two kinds, mixed half and half:
//! - **graded** prompts from the core catalogue whose single answer small and mid-sized models
//!   get wrong part of the time (letter counts, a probability, a rate, state tracking): at a
//!   served temperature their answers spread over a few values, and a sampler that keeps more or
//!   less of the tail (top_k, top_p, temperature applied late) moves that spread and the
//!   accuracy. Compared on the scored answer (exact match of the scorer's key), so two wordings
//!   of one answer count as the same sample;
//! - **open** prompts written for this test: a one-word or one-sentence reply with many right
//!   answers, where the sampler's tail is visible at once and the reply is short, so N samples
//!   stay cheap. Compared as text (character trigram cosine).

use std::sync::Arc;

use crate::catalogue::embedded::load_built_in;
use crate::catalogue::{Message, Prompt, PromptRequest, Role, SourceLocation};
use crate::score::{self, ScoreContext, ScorerSpec, TextChecks};

use super::kernel::{clip_sample, Kernel};

/// The graded prompts, by core catalogue id.
pub const GRADED: [&str; 8] = [
    "count_letters",
    "cnt_mississippi",
    "cnt_supercali_i",
    "cnt_words",
    "math_prob_dice",
    "math_word_work",
    "state_track",
    "logic_scheduling",
];

/// The open prompts: id and question.
pub const OPEN: [(&str, &str); 8] = [
    ("open_fruit", "Name one fruit. Answer with the word only."),
    (
        "open_number",
        "Pick a whole number between 1 and 20. Answer with the number only.",
    ),
    ("open_colour", "Name a colour. Answer with one word."),
    (
        "open_cat_name",
        "Suggest a name for a pet cat. Answer with the name only.",
    ),
    (
        "open_city",
        "Name a city in Europe. Answer with the city only.",
    ),
    (
        "open_autumn",
        "Give one adjective that describes autumn. Answer with one word.",
    ),
    ("open_sea", "Write one short sentence about the sea."),
    (
        "open_lighthouse",
        "Write the first sentence of a story about a lighthouse keeper.",
    ),
];

/// The budget of a graded prompt that sets none (room to reason before answering).
pub const GRADED_MAX_TOKENS: u32 = 512;

/// The budget of an open prompt: one sentence.
pub const OPEN_MAX_TOKENS: u32 = 64;

/// One sample as the test compares it: its kernel input (at most `kernel::SAMPLE_CHARS` characters)
/// and, for a graded prompt, whether it is right.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub key: String,
    pub correct: Option<bool>,
    /// The key was cut to `kernel::SAMPLE_CHARS` characters.
    pub clipped: bool,
}

impl Reading {
    /// A sample compared on `key`, cut to `kernel::SAMPLE_CHARS` characters.
    fn of(key: &str, correct: Option<bool>) -> Reading {
        let (key, clipped) = clip_sample(key);
        Reading {
            key: key.to_string(),
            correct,
            clipped,
        }
    }
}

/// The key of a graded answer the scorer read nothing from.
pub const NO_ANSWER: &str = "(no answer)";

/// Where the open prompts are defined, for messages.
const OPEN_SOURCE: &str = "src/distribution/prompts.rs";

/// A graded prompt has a right answer; an open one (scored `open`) has none.
pub fn is_graded(prompt: &Prompt) -> bool {
    !prompt.score.open_ended()
}

/// The kernel a prompt's samples are compared with.
pub fn kernel(prompt: &Prompt) -> Kernel {
    if is_graded(prompt) {
        Kernel::ExactMatch
    } else {
        Kernel::CharTrigram
    }
}

/// How one answer (reasoning removed) is compared and graded: a graded prompt's answer by its
/// scored key, an open prompt's by its text.
pub fn read(prompt: &Prompt, answer: &str, ctx: &ScoreContext) -> Reading {
    if is_graded(prompt) {
        let s = score::score(&prompt.score, answer, ctx);
        let key = s.extracted.as_deref().unwrap_or(NO_ANSWER);
        Reading::of(key, Some(s.correct == Some(true)))
    } else {
        Reading::of(answer.trim(), None)
    }
}

/// How one sample that was too long to keep whole (a reply part past
/// `endpoint::REPLY_PART_BYTES`, kept cut) is compared: a graded prompt's as no answer, unscored
/// (its answer was cut away, and grading megabytes would cost more than the rest of the run), an
/// open prompt's by the start of its text, as any. Said to be cut either way.
pub fn read_too_long(prompt: &Prompt, kept: &str, ctx: &ScoreContext) -> Reading {
    let reading = if is_graded(prompt) {
        Reading::of(NO_ANSWER, Some(false))
    } else {
        read(prompt, kept, ctx)
    };
    Reading {
        clipped: true,
        ..reading
    }
}

/// The built-in set: the graded prompts from the built-in catalogue, then the open ones.
pub fn built_in() -> anyhow::Result<Vec<Arc<Prompt>>> {
    let catalogue = load_built_in()?;
    let mut prompts = Vec::new();
    for id in GRADED {
        let prompt = catalogue
            .get(id)
            .ok_or_else(|| anyhow::anyhow!("the built-in catalogue has no prompt `{id}`"))?;
        prompts.push(Arc::new(Prompt {
            max_tokens: Some(prompt.max_tokens.unwrap_or(GRADED_MAX_TOKENS)),
            ..prompt.clone()
        }));
    }
    for (line, (id, question)) in OPEN.iter().enumerate() {
        prompts.push(Arc::new(Prompt {
            id: id.to_string(),
            category: "open".into(),
            suite: crate::catalogue::Suite::Core,
            request: PromptRequest::Chat {
                messages: vec![Message {
                    role: Role::User,
                    content: question.to_string(),
                }],
            },
            max_tokens: Some(OPEN_MAX_TOKENS),
            tags: Vec::new(),
            reference: String::new(),
            wrong: String::new(),
            score: ScorerSpec::Open(TextChecks::default()),
            tool_use: None,
            source: SourceLocation {
                file: OPEN_SOURCE.into(),
                line: line + 1,
            },
        }));
    }
    Ok(prompts)
}

/// The scoring context of the built-in catalogue.
pub fn score_context() -> ScoreContext {
    ScoreContext::for_catalogue(std::path::Path::new(
        crate::catalogue::embedded::BUILT_IN_DIR,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribution::kernel::SAMPLE_CHARS;

    #[test]
    fn the_set_holds_graded_chat_prompts_that_score_and_open_ones() {
        let prompts = built_in().unwrap();
        assert_eq!(prompts.len(), GRADED.len() + OPEN.len());
        let ctx = score_context();
        let graded: Vec<&Arc<Prompt>> = prompts.iter().filter(|p| is_graded(p)).collect();
        assert_eq!(graded.len(), GRADED.len());
        for p in graded {
            assert!(matches!(p.request, PromptRequest::Chat { .. }), "{}", p.id);
            let right = read(p, &p.reference, &ctx);
            let wrong = read(p, &p.wrong, &ctx);
            assert_eq!(right.correct, Some(true), "{}", p.id);
            assert_eq!(wrong.correct, Some(false), "{}", p.id);
            assert_ne!(right.key, wrong.key, "{}", p.id);
            assert_eq!(kernel(p), Kernel::ExactMatch);
        }
        let open = prompts.iter().find(|p| p.id == "open_sea").unwrap();
        assert_eq!(kernel(open), Kernel::CharTrigram);
        assert_eq!(open.question(), "Write one short sentence about the sea.");
        assert_eq!(open.max_tokens, Some(OPEN_MAX_TOKENS));
        let r = read(open, "  Waves crash.\n", &ctx);
        assert_eq!(
            r,
            Reading {
                key: "Waves crash.".into(),
                correct: None,
                clipped: false,
            }
        );
        let long = format!("{} end", "wave ".repeat(1000));
        let r = read(open, &long, &ctx);
        assert!(r.clipped && r.key.chars().count() == SAMPLE_CHARS);
    }

    #[test]
    fn a_graded_answer_with_nothing_to_read_has_the_no_answer_key() {
        let prompts = built_in().unwrap();
        let dice = prompts.iter().find(|p| p.id == "math_prob_dice").unwrap();
        let r = read(dice, "", &score_context());
        assert_eq!(r.key, NO_ANSWER);
        assert_eq!(r.correct, Some(false));
    }
}
