//! Where the answer is in a reply that carries its reasoning inline, and the markup that is never
//! part of it.
//!
//! - A `<think>…</think>` block is reasoning (DeepSeek-R1, Qwen3). A lone `</think>` (the chat
//!   template opened the block) makes everything before it reasoning; an unclosed `<think>` makes
//!   everything after it reasoning.
//! - Harmony channels (gpt-oss), when the server leaves them in the text:
//!   `<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…<|return|>`.
//!   Only the last `final` message is the answer; `analysis` and `commentary` messages are
//!   reasoning. Text with channels but no final message (cut off while reasoning) has no answer.
//! - Control tokens left in the text (`<|return|>`, `<|im_end|>`, `<|eot_id|>`, `<eos>`,
//!   `<end_of_turn>`, a Llama 3 role header: vllm#7811, omlx#1087) are removed from the answer.
//!
//! The client splits each reply once as it arrives (`endpoint::response`); scoring reads every
//! answer through [`answer_of`] again, so an answer journalled before a form was known (markup
//! kept in `answer`) scores as one journalled now. Both are the same split.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";

/// A control token: `<|name|>`, or one of the few written without bars.
static CONTROL_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"<\|start_header_id\|>[^<]*<\|end_header_id\|>",
        r"|<\|[A-Za-z_][A-Za-z0-9_ ]*\|>|</?s>|<eos>|<bos>|<(?:start|end)_of_turn>",
    ))
    .unwrap()
});
/// What ends a harmony message.
static MESSAGE_END: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<\|(?:end|return|call|start|channel)\|>").unwrap());

/// Split a reply's text into its answer and its reasoning (None when it holds none).
pub fn split(content: &str) -> (String, Option<String>) {
    let (outside, think) = split_think(content);
    let (answer, channels) = match harmony(&outside) {
        Some((final_message, reasoning)) => (final_message, reasoning),
        None => (outside, None),
    };
    let reasoning = match (think, channels) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    };
    (strip_control_tokens(&answer), reasoning)
}

/// The answer of a text as [`split`] finds it; the text itself (borrowed) when it holds no
/// reasoning block, channel or control token.
pub fn answer_of(text: &str) -> Cow<'_, str> {
    if text.contains(THINK_CLOSE)
        || text.contains(THINK_OPEN)
        || text.contains(CHANNEL)
        || CONTROL_TOKEN.is_match(text)
    {
        Cow::Owned(split(text).0)
    } else {
        Cow::Borrowed(text)
    }
}

/// `<think>…</think>` out of content: (the rest, trimmed; the block's text).
fn split_think(content: &str) -> (String, Option<String>) {
    match (content.find(THINK_OPEN), content.find(THINK_CLOSE)) {
        (Some(o), Some(c)) if o < c => {
            let think = content[o + THINK_OPEN.len()..c].trim().to_string();
            let answer = format!("{}{}", &content[..o], &content[c + THINK_CLOSE.len()..]);
            (answer.trim().to_string(), Some(think))
        }
        (None, Some(c)) => (
            content[c + THINK_CLOSE.len()..].trim().to_string(),
            Some(content[..c].trim().to_string()),
        ),
        (Some(o), None) => (
            content[..o].trim().to_string(),
            Some(content[o + THINK_OPEN.len()..].trim().to_string()),
        ),
        _ => (content.trim().to_string(), None),
    }
}

/// Harmony messages in `text`: (the last final message, or nothing; the other channels'
/// messages joined), or None when the text has no channel.
fn harmony(text: &str) -> Option<(String, Option<String>)> {
    if !text.contains(CHANNEL) {
        return None;
    }
    let mut final_message = None;
    let mut reasoning = Vec::new();
    for (i, _) in text.match_indices(CHANNEL) {
        let header_start = i + CHANNEL.len();
        let rest = &text[header_start..];
        let Some(body_at) = rest.find(MESSAGE) else {
            continue;
        };
        // The header names the channel first ("final", "analysis", "commentary to=functions.f").
        let name = rest[..body_at].split_whitespace().next().unwrap_or("");
        let body = &rest[body_at + MESSAGE.len()..];
        let body = MESSAGE_END.find(body).map_or(body, |m| &body[..m.start()]);
        if name.split('<').next() == Some("final") {
            final_message = Some(body.trim().to_string());
        } else if !body.trim().is_empty() {
            reasoning.push(body.trim().to_string());
        }
    }
    let reasoning = (!reasoning.is_empty()).then(|| reasoning.join("\n"));
    Some((final_message.unwrap_or_default(), reasoning))
}

/// The text without control tokens, trimmed.
fn strip_control_tokens(text: &str) -> String {
    if CONTROL_TOKEN.is_match(text) {
        CONTROL_TOKEN.replace_all(text, "").trim().to_string()
    } else {
        text.trim().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_blocks_are_kept_apart_from_the_answer() {
        assert_eq!(
            split("<think>hmm</think>\n3"),
            ("3".into(), Some("hmm".into()))
        );
        assert_eq!(split("hmm</think>3"), ("3".into(), Some("hmm".into())));
        assert_eq!(
            split("<think>still going"),
            ("".into(), Some("still going".into()))
        );
        assert_eq!(split(" 3 "), ("3".into(), None));
    }

    /// The leak of issue 48: the analysis channel says 2, the final channel 3.
    const LEAKED: &str =
        "<|channel|>analysis<|message|>Count r in strawberry: s-t-r-a-w-b-e-r-r-y. \
        I first thought the answer is 2, but there are r at 3, 8, 9.<|end|><|start|>assistant\
        <|channel|>final<|message|>There are 3 r's in \"strawberry\".<|return|>";

    #[test]
    fn only_the_final_channel_is_the_answer() {
        let (answer, reasoning) = split(LEAKED);
        assert_eq!(answer, "There are 3 r's in \"strawberry\".");
        assert!(reasoning.unwrap().contains("the answer is 2"));
        // A tool preamble in commentary, then the final answer.
        let tools =
            "<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{\"q\":1}\
            <|call|><|start|>assistant<|channel|>final<|message|>Canberra<|end|>";
        assert_eq!(split(tools).0, "Canberra");
        // Cut off while reasoning: no final message, no answer.
        let cut = "<|channel|>analysis<|message|>We need the capital. It is Canberra, not Sydney";
        let (answer, reasoning) = split(cut);
        assert_eq!(answer, "");
        assert!(reasoning.unwrap().ends_with("not Sydney"));
        // The start token before the first channel is no part of anything.
        assert_eq!(
            split("<|start|>assistant<|channel|>final<|message|>**4**<|end|>").0,
            "**4**"
        );
    }

    #[test]
    fn control_tokens_never_reach_the_answer() {
        assert_eq!(split("apple<eos>").0, "apple");
        assert_eq!(split("The answer is 18.<|im_end|>").0, "The answer is 18.");
        assert_eq!(
            split("<|start_header_id|>assistant<|end_header_id|>\n\nParis<|eot_id|>").0,
            "Paris"
        );
        assert_eq!(answer_of("plain 3"), Cow::Borrowed("plain 3"));
        assert_eq!(answer_of(LEAKED), "There are 3 r's in \"strawberry\".");
        // Already split: reading it again changes nothing.
        let once = split(LEAKED).0;
        assert_eq!(answer_of(&once), once.as_str());
    }
}
