//! Token alignment: which listed positions spell the requested text (and nothing else), and
//! which distribution predicts each of its tokens once a server's position offset is applied.

use crate::endpoint::LogprobToken;

/// The tokens of a requested text that did not spell it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Character offset (in bytes of the UTF-8 text) where the tokens stopped matching.
    pub at: usize,
    pub reason: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tokens do not match the requested text at byte {}: {}",
            self.at, self.reason
        )
    }
}

/// The positions `[start, start + len)` whose tokens concatenate exactly to the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub len: usize,
}

/// A special token such as `<s>` or `<|begin_of_text|>` that a server may list before the text.
fn is_special(token: &str) -> bool {
    token.is_empty() || (token.starts_with('<') && token.ends_with('>') && token.len() > 2)
}

/// Find the positions that spell `text` exactly: leading special tokens the text does not start
/// with are skipped; anything after the text (the generated token of an echo request) is left out.
pub fn span_of(positions: &[LogprobToken], text: &str) -> Result<Span, Mismatch> {
    let start = positions
        .iter()
        .take_while(|p| is_special(&p.token) && (p.token.is_empty() || !text.starts_with(&p.token)))
        .count();
    let mut covered = 0usize;
    for (i, p) in positions[start..].iter().enumerate() {
        if covered == text.len() {
            return Ok(Span { start, len: i });
        }
        let rest = &text[covered..];
        if p.token.is_empty() {
            return Err(Mismatch {
                at: covered,
                reason: format!("token {} is empty (a partial character?)", start + i),
            });
        }
        if !rest.starts_with(&p.token) {
            return Err(Mismatch {
                at: covered,
                reason: format!(
                    "token {} is {:?}, the text continues {:?}",
                    start + i,
                    p.token,
                    rest.chars().take(12).collect::<String>()
                ),
            });
        }
        covered += p.token.len();
    }
    if covered == text.len() {
        Ok(Span {
            start,
            len: positions.len() - start,
        })
    } else {
        Err(Mismatch {
            at: covered,
            reason: format!(
                "the tokens cover only {covered} of {} bytes (the server did not echo the prompt?)",
                text.len()
            ),
        })
    }
}

/// Find the positions that spell `completion` at the end of a scored text (a prompt followed by
/// the completion): the span ends at the last position, or at the one before it when the server
/// listed an echo request's generated token. The prompt part is not matched, since servers render
/// its special tokens in different ways (as text, as "", or not at all).
pub fn suffix_span(positions: &[LogprobToken], completion: &str) -> Result<Span, Mismatch> {
    if completion.is_empty() {
        return Err(Mismatch {
            at: 0,
            reason: "the completion is empty".into(),
        });
    }
    let mut first_error = None;
    for end in [positions.len(), positions.len().saturating_sub(1)] {
        let mut remaining = completion.len();
        for i in (0..end).rev() {
            let token = &positions[i].token;
            let head = &completion[..remaining];
            if token.is_empty() || !head.ends_with(token.as_str()) {
                first_error.get_or_insert(Mismatch {
                    at: remaining,
                    reason: format!(
                        "token {i} is {token:?}, where the completion has {:?} before byte {remaining}",
                        head.chars().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect::<String>()
                    ),
                });
                break;
            }
            remaining -= token.len();
            if remaining == 0 {
                return Ok(Span {
                    start: i,
                    len: end - i,
                });
            }
        }
        if end == 0 {
            break;
        }
    }
    Err(first_error.unwrap_or(Mismatch {
        at: completion.len(),
        reason: "no tokens were listed".into(),
    }))
}

/// The distribution that predicts one token of the text, as far as the server listed it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Predicted {
    pub token: String,
    /// The token's own logprob under that distribution, when known.
    pub logprob: Option<f64>,
    /// The listed top-k of that distribution (empty when unknown).
    pub top: Vec<(String, f64)>,
}

/// Look a token up in a top-k list.
pub fn lookup(top: &[(String, f64)], token: &str) -> Option<f64> {
    top.iter().find(|(t, _)| t == token).map(|(_, v)| *v)
}

/// For every token of `span`, the distribution that predicts it. With `offset` 0 position i
/// carries token i's own distribution (vLLM, the OpenAI format). With `offset` 1 position i
/// carries the distribution of token i + 1 (llama-cpp-python's echo): token i's distribution is
/// taken from position i − 1 and its logprob read from that list (`token_logprobs` is ignored,
/// since it scores token i under the wrong distribution); the first token then has none.
pub fn predicted(positions: &[LogprobToken], span: Span, offset: usize) -> Vec<Predicted> {
    (span.start..span.start + span.len)
        .map(|i| {
            let token = positions[i].token.clone();
            if offset == 0 {
                let p = &positions[i];
                let logprob = p.logprob.or_else(|| lookup(&p.top, &token));
                return Predicted {
                    token,
                    logprob,
                    top: p.top.clone(),
                };
            }
            match i.checked_sub(offset).map(|j| &positions[j]) {
                Some(p) => Predicted {
                    logprob: lookup(&p.top, &token),
                    top: p.top.clone(),
                    token,
                },
                None => Predicted {
                    token,
                    logprob: None,
                    top: Vec::new(),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(token: &str, logprob: f64, top: &[(&str, f64)]) -> LogprobToken {
        LogprobToken {
            token: token.into(),
            logprob: Some(logprob),
            top: top.iter().map(|(t, v)| (t.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn finds_the_text_and_skips_bos_and_the_generated_token() {
        let p = vec![
            pos("<s>", 0.0, &[]),
            pos("Hi", -1.0, &[]),
            pos(" there", -2.0, &[]),
            pos("!", -3.0, &[]),
        ];
        assert_eq!(span_of(&p, "Hi there").unwrap(), Span { start: 1, len: 2 });
        assert_eq!(
            span_of(&p[1..], "Hi there!").unwrap(),
            Span { start: 0, len: 3 }
        );
    }

    #[test]
    fn tokens_that_do_not_spell_the_text_are_reported() {
        let p = vec![pos("Hi", -1.0, &[]), pos(" thar", -2.0, &[])];
        let e = span_of(&p, "Hi there").unwrap_err();
        assert_eq!(e.at, 2);
        assert!(e.to_string().contains("\" thar\""), "{e}");
        let e = span_of(&p[..1], "Hi there").unwrap_err();
        assert!(e.reason.contains("cover only 2 of 8"), "{e}");
        let e = span_of(&[pos("Hi", -1.0, &[]), pos("", -1.0, &[])], "Hi there").unwrap_err();
        assert!(e.reason.contains("empty"), "{e}");
    }

    #[test]
    fn the_completion_is_found_at_the_end_with_or_without_a_generated_token() {
        let p = vec![
            pos("", 0.0, &[]),
            pos("user", -1.0, &[]),
            pos("\n", -1.0, &[]),
            pos("It", -1.0, &[]),
            pos(" is", -2.0, &[]),
            pos(" 4", -3.0, &[]),
        ];
        assert_eq!(
            suffix_span(&p, "It is 4").unwrap(),
            Span { start: 3, len: 3 }
        );
        assert_eq!(
            suffix_span(&p[..5], "It is").unwrap(),
            Span { start: 3, len: 2 }
        );
        // vLLM lists the generated token after the echoed text.
        let mut with_generated = p.clone();
        with_generated.push(pos(".", -0.1, &[]));
        assert_eq!(
            suffix_span(&with_generated, "It is 4").unwrap(),
            Span { start: 3, len: 3 }
        );
        // A token that straddles the prompt and the completion is a mismatch, not a guess.
        let straddle = vec![
            pos("user", -1.0, &[]),
            pos("\nIt", -1.0, &[]),
            pos(" is", -1.0, &[]),
        ];
        let e = suffix_span(&straddle, "It is").unwrap_err();
        assert!(e.reason.contains("\\nIt"), "{e}");
        assert!(suffix_span(&p, "").is_err());
        assert!(suffix_span(&[], "x").is_err());
    }

    #[test]
    fn an_offset_of_one_takes_the_previous_distribution() {
        // llama-cpp-python: top[i] predicts token i+1; token_logprobs[i] is token i under it.
        let p = vec![
            pos("A", -9.0, &[(" B", -0.2), ("A", -9.0)]),
            pos(" B", -7.0, &[(" C", -0.3), (" B", -7.0)]),
            pos(" C", -5.0, &[(".", -0.1)]),
        ];
        let span = span_of(&p, "A B C").unwrap();
        let shifted = predicted(&p, span, 1);
        assert_eq!(shifted[0].logprob, None);
        assert_eq!(shifted[1].logprob, Some(-0.2));
        assert_eq!(shifted[2].logprob, Some(-0.3));
        assert_eq!(shifted[2].top[0].0, " C");
        let straight = predicted(&p, span, 0);
        assert_eq!(straight[1].logprob, Some(-7.0));
    }
}
