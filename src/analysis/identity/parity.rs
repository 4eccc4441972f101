//! Parity before verdicts: the same request must cost the same `usage.prompt_tokens` on every
//! deployment of one model. A mismatch means a different chat template or tokenizer, which
//! explains everything downstream. Also `finish_reason` parity and reasoning-length deltas (a
//! degraded deployment often thinks longer).

use crate::analysis::answers::figures::{Parity, PromptResult};

const EXAMPLES: usize = 10;

pub fn parity(prompts: &[PromptResult], reference: &str, other: &str) -> Parity {
    let mut p = Parity {
        reference: reference.to_string(),
        other: other.to_string(),
        prompt_tokens_compared: 0,
        prompt_tokens_mismatches: 0,
        prompt_tokens_examples: Vec::new(),
        finish_reason_mismatches: 0,
        finish_reason_examples: Vec::new(),
        mean_reasoning_chars_delta: None,
    };
    let mut deltas = Vec::new();
    for prompt in prompts {
        let (Some(a), Some(b)) = (prompt.answers.get(reference), prompt.answers.get(other)) else {
            continue;
        };
        if a.error.is_some() || b.error.is_some() {
            continue;
        }
        if let (Some(x), Some(y)) = (a.prompt_tokens, b.prompt_tokens) {
            p.prompt_tokens_compared += 1;
            if x != y {
                p.prompt_tokens_mismatches += 1;
                if p.prompt_tokens_examples.len() < EXAMPLES {
                    p.prompt_tokens_examples
                        .push(format!("{} ({reference} {x}, {other} {y})", prompt.id));
                }
            }
        }
        if a.finish_reason != b.finish_reason {
            p.finish_reason_mismatches += 1;
            if p.finish_reason_examples.len() < EXAMPLES {
                let show = |f: &Option<String>| f.clone().unwrap_or_else(|| "none".into());
                p.finish_reason_examples.push(format!(
                    "{} ({reference} {}, {other} {})",
                    prompt.id,
                    show(&a.finish_reason),
                    show(&b.finish_reason)
                ));
            }
        }
        if a.reasoning_chars + b.reasoning_chars > 0 {
            deltas.push(b.reasoning_chars as f64 - a.reasoning_chars as f64);
        }
    }
    p.mean_reasoning_chars_delta =
        (!deltas.is_empty()).then(|| deltas.iter().sum::<f64>() / deltas.len() as f64);
    p
}
