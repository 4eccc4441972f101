//! The catalogue's self-test (`coherence prompts check`): every reference answer scores correct,
//! every known-wrong answer scores wrong, and each category holds the number of prompts the spec
//! (`CATEGORIES`) says.

use super::spec::{Prompt, CATEGORIES};
use crate::score::{score, ScoreContext};

/// One category's prompt count against the spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryCount {
    pub category: &'static str,
    pub have: usize,
    pub want: usize,
}

impl CategoryCount {
    pub fn matches(&self) -> bool {
        self.have == self.want
    }
}

/// Every spec category with how many prompts it holds, in the spec's order.
pub fn category_counts(prompts: &[Prompt]) -> Vec<CategoryCount> {
    CATEGORIES
        .iter()
        .map(|&(category, want)| CategoryCount {
            category,
            have: prompts.iter().filter(|p| p.category == category).count(),
            want,
        })
        .collect()
}

/// Problems with one prompt's reference and wrong answers, each prefixed with `file:line:`.
///
/// A reference must score correct (`Some(true)`), or, for an open-ended scorer, pass its checks
/// (`None`). A wrong answer must score `Some(false)`: for an open-ended prompt it must fail a
/// check, otherwise it proves nothing.
pub fn self_test(p: &Prompt, ctx: &ScoreContext) -> Vec<String> {
    let mut problems = Vec::new();
    let open = p.score.open_ended();
    let r = score(&p.score, &p.reference, ctx);
    let reference_ok = if open {
        r.correct.is_none()
    } else {
        r.correct == Some(true)
    };
    if !reference_ok {
        problems.push(format!(
            "{}: prompt `{}`: the reference answer does not score correct: {}",
            p.source, p.id, r.evidence
        ));
    }
    let w = score(&p.score, &p.wrong, ctx);
    if w.correct != Some(false) {
        let how = if w.correct == Some(true) {
            "scores correct"
        } else {
            "passes the open-ended checks"
        };
        problems.push(format!(
            "{}: prompt `{}`: the wrong answer {how}: {}",
            p.source, p.id, w.evidence
        ));
    }
    problems
}

/// The self-test problems of every prompt, in catalogue order.
pub fn self_test_all(prompts: &[Prompt], ctx: &ScoreContext) -> Vec<String> {
    prompts.iter().flat_map(|p| self_test(p, ctx)).collect()
}
