//! The probe a watch sends each check, chosen from the baseline run for sensitivity, not size:
//! border prompts (the reference's completion has a near-tie token, where a change in numerics
//! flips the text), stable prompts (every token confident, where the logprobs move without the
//! text changing), and a few graded items per family for the behaviour axis.
//!
//! Only the reference's first answer (A0) is read to choose. The identity test sets each
//! answer of the watched endpoint (B) against the baseline's own repeat (A1); choosing on A1 too
//! (say, "prompts whose two baseline answers agree") would make B look further than A1 more
//! often than not when nothing changed, and the test would alarm on a healthy deployment. A
//! choice made from A0 alone leaves A1 and B exchangeable under "nothing changed".

use std::collections::{BTreeMap, BTreeSet};

use crate::catalogue::Catalogue;
use crate::endpoint::Completion;
use crate::run::{Line, CONTROL_REPEAT};

/// Why a prompt is in the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// A graded item, for the behaviour axis (and for identity when it has a control).
    Graded,
    /// The reference's completion has a near-tie token (smallest top-2 margin first).
    Border,
    /// Every token of the reference's completion was confident (largest smallest margin first).
    Stable,
}

/// The probe: prompt ids in the baseline's order, each with why it was chosen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Probe {
    pub items: Vec<(String, Role)>,
    /// What a reader should know about the choice (no logprobs, too few controls…).
    pub notes: Vec<String>,
}

impl Probe {
    pub fn ids(&self) -> Vec<String> {
        self.items.iter().map(|(id, _)| id.clone()).collect()
    }

    pub fn count(&self, role: Role) -> usize {
        self.items.iter().filter(|(_, r)| *r == role).count()
    }
}

/// Of a probe of `size`, at most this share are graded items (the rest carry identity).
const GRADED_SHARE: f64 = 0.2;

/// Choose a probe of at most `size` prompts from the baseline's `prompts` (its scope, in
/// order), given its `records` and the name of its `reference` endpoint. Err when the baseline
/// has no prompt the reference answered twice: nothing could decide identity.
pub fn choose<L: Line>(
    records: &[L],
    reference: &str,
    prompts: &[String],
    catalogue: &Catalogue,
    size: usize,
) -> Result<Probe, String> {
    let answers = first_and_control(records, reference);
    let controlled: Vec<&String> = prompts
        .iter()
        .filter(|p| answers.get(p.as_str()).is_some_and(|(_, c)| *c))
        .collect();
    if controlled.is_empty() {
        return Err(format!(
            "the baseline's reference `{reference}` answered no prompt twice, so no check could decide identity; make the baseline with `coherence compare --control N` (or `determinism --repeats 2`)"
        ));
    }
    let mut chosen: BTreeMap<&str, Role> = BTreeMap::new();
    for id in graded_round_robin(prompts, catalogue, &answers, size) {
        chosen.insert(id, Role::Graded);
    }
    let margins: Vec<(&String, Option<f64>)> = controlled
        .iter()
        .filter(|p| !chosen.contains_key(p.as_str()))
        .map(|p| {
            (
                *p,
                answers
                    .get(p.as_str())
                    .and_then(|(a0, _)| smallest_margin(a0)),
            )
        })
        .collect();
    let mut notes = Vec::new();
    let mut ranked: Vec<(&String, f64)> = margins
        .iter()
        .filter_map(|(p, m)| m.map(|m| (*p, m)))
        .collect();
    let left = size.saturating_sub(chosen.len());
    if ranked.is_empty() {
        notes.push(
            "the baseline's answers carry no top-2 logprobs, so border prompts cannot be told: the probe takes the baseline's controlled prompts in order".to_string(),
        );
        for (p, _) in margins.iter().take(left) {
            chosen.insert(p.as_str(), Role::Stable);
        }
    } else {
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        let border = left.div_ceil(2).min(ranked.len());
        for (p, _) in &ranked[..border] {
            chosen.insert(p.as_str(), Role::Border);
        }
        for (p, _) in ranked[border..].iter().rev().take(left - border) {
            chosen.insert(p.as_str(), Role::Stable);
        }
    }
    let identity = chosen
        .keys()
        .filter(|p| answers.get(*p).is_some_and(|(_, c)| *c))
        .count();
    if chosen.len() < size {
        notes.push(format!(
            "the probe has {} prompts, not {size}: the baseline answered {} prompts twice (`compare --control N` makes a larger baseline)",
            chosen.len(),
            controlled.len()
        ));
    }
    let fewest = crate::analysis::identity::numerics::fewest_prompts_for_identical();
    if identity < fewest {
        notes.push(format!(
            "{identity} probe prompts carry the baseline's control; {fewest} at least are needed before a check can read `identical`"
        ));
    }
    let items = prompts
        .iter()
        .filter_map(|p| chosen.get(p.as_str()).map(|r| (p.clone(), *r)))
        .collect();
    Ok(Probe { items, notes })
}

/// Per prompt the reference answered: its first answer and whether it also has a control.
fn first_and_control<'a, L: Line>(
    records: &'a [L],
    reference: &str,
) -> BTreeMap<&'a str, (&'a Completion, bool)> {
    let mut first: BTreeMap<&str, &Completion> = BTreeMap::new();
    let mut control: BTreeSet<&str> = BTreeSet::new();
    for r in records {
        if r.endpoint() != reference || r.error().is_some() || r.completion().answer.is_none() {
            continue;
        }
        match r.repeat() {
            0 => {
                first.insert(r.prompt(), r.completion());
            }
            CONTROL_REPEAT => {
                control.insert(r.prompt());
            }
            _ => {}
        }
    }
    first
        .into_iter()
        .map(|(p, c)| (p, (c, control.contains(p))))
        .collect()
}

/// Up to `size × GRADED_SHARE` graded prompts the reference answered, one family after another
/// (each family's prompts in the baseline's order, those with a control first).
fn graded_round_robin<'a>(
    prompts: &'a [String],
    catalogue: &Catalogue,
    answers: &BTreeMap<&str, (&Completion, bool)>,
    size: usize,
) -> Vec<&'a str> {
    let cap = (size as f64 * GRADED_SHARE).floor() as usize;
    let mut families: BTreeMap<&str, Vec<&'a str>> = BTreeMap::new();
    for p in prompts {
        let Some(prompt) = catalogue.get(p) else {
            continue;
        };
        if !answers.contains_key(p.as_str()) || prompt.score.open_ended() {
            continue;
        }
        families
            .entry(prompt.category.as_str())
            .or_default()
            .push(p.as_str());
    }
    for items in families.values_mut() {
        items.sort_by_key(|p| !answers.get(p).is_some_and(|(_, c)| *c));
    }
    let mut out = Vec::new();
    let mut round = 0;
    while out.len() < cap {
        let before = out.len();
        for items in families.values() {
            if let Some(p) = items.get(round) {
                if out.len() < cap {
                    out.push(*p);
                }
            }
        }
        if out.len() == before {
            break;
        }
        round += 1;
    }
    out
}

/// The smallest gap between the chosen token's logprob and the best other alternative's, over
/// the completion (None without logprobs listing two alternatives anywhere).
pub fn smallest_margin(c: &Completion) -> Option<f64> {
    c.logprobs
        .as_ref()?
        .iter()
        .filter_map(|t| {
            let chosen = t.logprob?;
            let other = t
                .top
                .iter()
                .filter(|(token, _)| *token != t.token)
                .map(|(_, lp)| *lp)
                .fold(f64::NEG_INFINITY, f64::max);
            other.is_finite().then(|| (chosen - other).abs())
        })
        .min_by(f64::total_cmp)
}

#[cfg(test)]
mod tests;
