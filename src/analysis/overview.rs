//! The headline's second and third answers: how stable each endpoint is against itself across
//! repeats, and how often two endpoints' texts are identical, the same answer in other words, or
//! diverged.

use super::determinism::Class;
use super::results::{Identity, PromptResult, Stability};
use super::verdict::Verdict;

pub fn stability(prompts: &[PromptResult], endpoint: &str, repeats: u32) -> Stability {
    let mut s = Stability {
        endpoint: endpoint.to_string(),
        repeats,
        measured: 0,
        stable: 0,
        unstable: 0,
    };
    for d in prompts
        .iter()
        .filter_map(|p| p.answers.get(endpoint)?.determinism.as_ref())
    {
        let usable = d.repeats - d.histogram.get(super::FAILED_KEY).copied().unwrap_or(0);
        if usable < 2 {
            continue;
        }
        s.measured += 1;
        if d.class == Class::Nondeterministic {
            s.unstable += 1;
        } else {
            s.stable += 1;
        }
    }
    s
}

pub fn identity(prompts: &[PromptResult], reference: &str, other: &str) -> Identity {
    let mut i = Identity {
        reference: reference.to_string(),
        other: other.to_string(),
        identical: 0,
        same_answer: 0,
        diverged: 0,
        failed: 0,
    };
    for p in prompts {
        let Some(pair) = p.pairs.iter().find(|x| x.other == other) else {
            continue;
        };
        let text = |name: &str| p.answers.get(name).and_then(|a| a.answer.as_deref());
        match pair.verdict {
            Verdict::Fail => i.failed += 1,
            Verdict::Diff | Verdict::Review => i.diverged += 1,
            Verdict::Same if text(reference) == text(other) => i.identical += 1,
            Verdict::Same | Verdict::Format => i.same_answer += 1,
        }
    }
    i
}
