//! The headline's second and third answers: how stable each endpoint is against itself across
//! repeats (and whether its instability follows the prompt-cache state), and how often two
//! endpoints' texts are identical, the same answer in other words, or diverged.

use crate::analysis::answers::determinism::Class;
use std::collections::BTreeSet;

use crate::analysis::answers::figures::{AnswerResult, Identity, PromptResult, Stability};
use crate::analysis::answers::verdict::Verdict;

pub fn stability(prompts: &[PromptResult], endpoint: &str, repeats: u32) -> Stability {
    let mut s = Stability {
        endpoint: endpoint.to_string(),
        repeats,
        measured: 0,
        stable: 0,
        unstable: 0,
        cache_split: 0,
        back_to_back: false,
    };
    let (mut later, mut after_self) = (0usize, 0usize);
    for (p, a, d) in prompts.iter().filter_map(|p| {
        let a = p.answers.get(endpoint)?;
        Some((p, a, a.determinism.as_ref()?))
    }) {
        for r in a.repeats.iter().filter(|r| r.repeat > 0) {
            later += 1;
            after_self += usize::from(r.after.as_deref() == Some(p.id.as_str()));
        }
        let usable = d.repeats
            - d.histogram
                .get(crate::analysis::answers::determinism::FAILED_KEY)
                .copied()
                .unwrap_or(0);
        if usable < 2 {
            continue;
        }
        s.measured += 1;
        if d.class == Class::Nondeterministic {
            s.unstable += 1;
            s.cache_split += usize::from(splits_by_cache_state(&p.id, a));
        } else {
            s.stable += 1;
        }
    }
    s.back_to_back = later > 0 && after_self * 2 > later;
    s
}

/// The repeats sent right after the same prompt all gave one answer and those sent after another
/// prompt (or first) all gave another.
fn splits_by_cache_state(id: &str, a: &AnswerResult) -> bool {
    let answers = |warm: bool| -> BTreeSet<&str> {
        a.repeats
            .iter()
            .filter(|r| (r.after.as_deref() == Some(id)) == warm)
            .filter_map(|r| r.answer.as_deref())
            .collect()
    };
    let (warm, cold) = (answers(true), answers(false));
    warm.len() == 1 && cold.len() == 1 && warm != cold
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
            Verdict::Diff | Verdict::Review | Verdict::NoAnswer => i.diverged += 1,
            Verdict::Same if text(reference) == text(other) => i.identical += 1,
            Verdict::Same | Verdict::Format => i.same_answer += 1,
        }
    }
    i
}
