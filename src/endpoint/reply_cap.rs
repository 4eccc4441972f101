//! What one reply may keep: a text (content, answer, reasoning) or a tool call's arguments past
//! [`REPLY_PART_BYTES`] makes the reply too long, kept cut to that with the cut said in its
//! failure, and scored as no answer; so a hostile or runaway reply costs a bounded record.

use super::response::{Completion, Failure, FailureKind};
use crate::text::head_bytes;

/// The most bytes one text or one tool call's arguments of a reply may hold: 1 MiB, several
/// times the longest real answer (a few hundred KB of code or reasoning), far below the 16 MiB
/// body `--max-response-bytes` allows.
pub const REPLY_PART_BYTES: usize = 1024 * 1024;

/// The start of a too-long reply's raw body its record keeps, as evidence.
pub const CUT_BODY_BYTES: usize = 64 * 1024;

/// The start of a too-long reply's `body` its record keeps.
pub fn cut_body(body: &str) -> &str {
    head_bytes(body, CUT_BODY_BYTES)
}

/// Cuts every part of `c` longer than [`REPLY_PART_BYTES`] to that (dropping its token
/// logprobs, which the cut body no longer holds) and says so; None, untouched, when every part fits.
pub fn cut_too_long(c: &mut Completion) -> Option<Failure> {
    let mut over: Vec<String> = Vec::new();
    let mut cut_text = |name: &str, text: &mut Option<super::Text>| {
        if let Some(t) = text.as_ref().filter(|t| t.len() > REPLY_PART_BYTES) {
            over.push(format!("{name} ({} bytes)", t.len()));
            *text = Some(head_bytes(t, REPLY_PART_BYTES).into());
        }
    };
    let answer_is_content =
        matches!((&c.content, &c.answer), (Some(a), Some(b)) if std::sync::Arc::ptr_eq(a, b));
    cut_text("content", &mut c.content);
    if answer_is_content {
        // One copy for both, as the parser keeps them.
        c.answer = c.content.clone();
    } else {
        cut_text("answer", &mut c.answer);
    }
    cut_text("reasoning", &mut c.reasoning);
    for (i, call) in c.tool_calls.iter_mut().enumerate() {
        if let Some(args) = call
            .arguments
            .as_mut()
            .filter(|a| a.len() > REPLY_PART_BYTES)
        {
            over.push(format!(
                "tool call {}'s arguments ({} bytes)",
                i + 1,
                args.len()
            ));
            args.truncate(head_bytes(args, REPLY_PART_BYTES).len());
        }
    }
    if over.is_empty() {
        return None;
    }
    c.logprobs = None;
    Some(Failure::new(
        FailureKind::ReplyTooLong,
        format!(
            "{} over the {REPLY_PART_BYTES} bytes one part of a reply may hold: kept cut to \
             that, with the first {CUT_BODY_BYTES} bytes of the body, and scored as no answer",
            over.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::ToolCall;

    #[test]
    fn a_part_over_the_cap_is_cut_on_a_character_boundary_and_said() {
        let long = "é".repeat(REPLY_PART_BYTES); // 2 MiB
        let mut c = Completion {
            content: Some("ok".into()),
            answer: Some("ok".into()),
            tool_calls: vec![ToolCall {
                arguments: Some(long.clone()),
                ..ToolCall::default()
            }],
            ..Completion::default()
        };
        let f = cut_too_long(&mut c).unwrap();
        assert_eq!(f.kind, FailureKind::ReplyTooLong);
        assert!(
            f.message.starts_with(&format!(
                "tool call 1's arguments ({} bytes) over the",
                long.len()
            )),
            "{}",
            f.message
        );
        let kept = c.tool_calls[0].arguments.as_deref().unwrap();
        assert_eq!(kept.len(), REPLY_PART_BYTES);
        assert!(long.starts_with(kept));
        assert_eq!(c.answer.as_deref(), Some("ok"));
    }

    #[test]
    fn a_long_answer_under_the_cap_is_kept_whole() {
        let answer: crate::endpoint::Text = "x".repeat(REPLY_PART_BYTES).into();
        let mut c = Completion {
            content: Some(answer.clone()),
            answer: Some(answer.clone()),
            ..Completion::default()
        };
        let before = c.clone();
        assert_eq!(cut_too_long(&mut c), None);
        assert_eq!(c, before);
    }
}
