//! The identity axis: does B compute what A computes? Decided against an A-vs-A control in the
//! same run (the reference answering some prompts a second time), never against zero.
//!
//! Per prompt answered three times (A's first answer A0, A's control answer A1, B's answer B0),
//! the pair's distance d(A0, B0) is set against the control's d(A0, A1). With decode logprobs
//! on every answer, a distance is the mean |Δ logprob| of the chosen token over the two
//! completions' shared token prefix, and whether they part; without logprobs, whether the texts
//! differ (and the prompt is then compared by text alone, which the evidence says).
//!
//! The test: a prompt where the pair is further apart than the control is a *win*, the reverse a
//! *loss*, anything else a tie. When B is the same deployment as A, A0, A1 and B0 are
//! exchangeable, so a win and a loss are equally likely whatever A's own nondeterminism. The
//! evidence against that (θ = P(win | not a tie) = ½) is a test martingale, the mixture of
//! likelihood ratios over θ uniform on [½, 1]; by Ville's inequality it ever reaches 1/α with
//! probability at most α, so it may be read after every prompt (anytime-valid). `perturbed`
//! when it does; `identical` when it does not, at least [`MIN_PROMPTS`] prompts were compared
//! and B is further from A than A's own repeat on no more than [`IDENTICAL_SHARE`] of the
//! prompts that are not ties (one-sided 95% Wilson bound), or on none at all; `different` when
//! the artifact differs (prompt token counts: another chat template or tokenizer); else
//! `undecided`, saying what would decide it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::figures::Parity;
use super::stats::wilson_at;
use crate::endpoint::{Completion, LogprobToken};
use crate::run::{Line, CONTROL_REPEAT};

/// The test's level by default: the share of runs of a same-deployment pair read `perturbed`,
/// at most. A run may set its own (`identity_alpha` in the manifest; `watch --alpha`).
pub const ALPHA: f64 = 0.05;
/// Prompts compared with a control before `identical` can be said.
pub const MIN_PROMPTS: usize = 20;
/// `identical` needs the one-sided 95% upper bound of P(win | not a tie) at or under this.
pub const IDENTICAL_SHARE: f64 = 0.75;

/// The identity verdict of a pair, and of the run (the worst pair's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentityVerdict {
    Identical,
    Undecided,
    Perturbed,
    Different,
}

impl IdentityVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            IdentityVerdict::Identical => "identical",
            IdentityVerdict::Undecided => "undecided",
            IdentityVerdict::Perturbed => "perturbed",
            IdentityVerdict::Different => "different",
        }
    }
}

/// Which evidence the pair's comparison rests on, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Every compared answer carried decode logprobs.
    DecodeLogprobs,
    /// No prompt had logprobs on all three answers: texts alone.
    Text,
    /// Logprobs where all three answers of a prompt carried them, the texts elsewhere.
    Mixed,
}

/// How close two answer sets are, over the prompts compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Closeness {
    pub prompts: usize,
    /// Prompts whose two answers are the same text.
    pub exact_text: usize,
    /// Tokens in the shared prefixes (logprob level), with a logprob on both sides.
    pub tokens_compared: usize,
    /// Of those, tokens whose two logprobs are equal.
    pub equal_logprob_tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_abs_delta_logprob: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_abs_delta_logprob: Option<f64>,
    /// The median index (tokens, or characters at the text level) where the answers part, over
    /// the prompts where they do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_first_divergence: Option<usize>,
}

/// The sequential test's state when it stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdentityTest {
    pub alpha: f64,
    /// Prompts where B was further from A than A's control.
    pub pair_further: usize,
    /// Prompts where A's control was further from A than B.
    pub control_further: usize,
    pub ties: usize,
    /// The test martingale's value (evidence against "B is A"; `perturbed` at 1/alpha).
    pub e_value: f64,
    /// The prompt count (and shared-prefix tokens) at which it reached 1/alpha.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at_prompt: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at_tokens: Option<usize>,
    /// One-sided 95% upper bound of P(pair further | not a tie).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_further_upper: Option<f64>,
}

/// The identity verdict of one (reference, other) pair with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairIdentity {
    pub reference: String,
    pub other: String,
    pub verdict: IdentityVerdict,
    pub because: Vec<String>,
    pub level: Level,
    /// Prompts the reference answered twice (the control).
    pub control_prompts: usize,
    /// B against A (on the prompts with a control).
    pub pair: Closeness,
    /// A against its own second answer.
    pub control: Closeness,
    pub test: IdentityTest,
}

/// `summary.identity`: the worst pair's verdict, its reasons and every pair's evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdentitySummary {
    pub verdict: IdentityVerdict,
    pub because: Vec<String>,
    pub evidence: Vec<PairIdentity>,
}

/// One answer's distance from A0: how far apart, and whether they part.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Distance {
    /// Mean |Δ logprob| over the shared prefix (0 at the text level).
    mean_abs: f64,
    max_abs: f64,
    parted_at: Option<usize>,
    exact: bool,
    tokens: usize,
    equal_tokens: usize,
}

/// Decide every pair of the run (the reference against each other endpoint).
pub fn decide<L: Line>(
    records: &[L],
    names: &[String],
    prompts: &[String],
    parity: &[Parity],
    alpha: f64,
) -> Option<IdentitySummary> {
    let (reference, others) = names.split_first()?;
    let latest = latest_answers(records);
    let pairs: Vec<PairIdentity> = others
        .iter()
        .map(|other| {
            let artifact = parity
                .iter()
                .find(|p| &p.reference == reference && &p.other == other);
            decide_pair(&latest, prompts, reference, other, artifact, alpha)
        })
        .collect();
    let verdict = pairs.iter().map(|p| p.verdict).max()?;
    let several = pairs.len() > 1;
    let because = pairs
        .iter()
        .flat_map(|p| {
            p.because.iter().map(move |b| {
                if several {
                    format!("{}: {b}", p.other)
                } else {
                    b.clone()
                }
            })
        })
        .collect();
    Some(IdentitySummary {
        verdict,
        because,
        evidence: pairs,
    })
}

/// The newest answered completion per (prompt, endpoint, repeat).
fn latest_answers<L: Line>(records: &[L]) -> BTreeMap<(&str, &str, u32), &Completion> {
    let mut latest = BTreeMap::new();
    for r in records {
        if r.error().is_none() && r.completion().answer.is_some() {
            latest.insert((r.prompt(), r.endpoint(), r.repeat()), r.completion());
        }
    }
    latest
}

fn decide_pair(
    latest: &BTreeMap<(&str, &str, u32), &Completion>,
    prompts: &[String],
    reference: &str,
    other: &str,
    artifact: Option<&Parity>,
    alpha: f64,
) -> PairIdentity {
    let triples: Vec<[&Completion; 3]> = prompts
        .iter()
        .filter_map(|p| {
            let get = |e: &str, r: u32| latest.get(&(p.as_str(), e, r)).copied();
            Some([
                get(reference, 0)?,
                get(reference, CONTROL_REPEAT)?,
                get(other, 0)?,
            ])
        })
        .collect();
    let mut pair = Vec::with_capacity(triples.len());
    let mut control = Vec::with_capacity(triples.len());
    let mut test = Sequential::at(alpha);
    let mut with_logprobs = 0;
    for triple in &triples {
        // A prompt is compared by logprobs when all three answers carry them, else by text.
        let level = if triple.iter().all(|c| has_logprobs(c)) {
            with_logprobs += 1;
            Level::DecodeLogprobs
        } else {
            Level::Text
        };
        let [a0, a1, b0] = triple;
        let (d_pair, d_control) = (distance(a0, b0, level), distance(a0, a1, level));
        test.push(compare(&d_pair, &d_control), d_pair.tokens);
        pair.push(d_pair);
        control.push(d_control);
    }
    let level = match with_logprobs {
        0 => Level::Text,
        n if n == triples.len() => Level::DecodeLogprobs,
        _ => Level::Mixed,
    };
    let test = test.finish();
    let (verdict, because) = verdict_of(&test, triples.len(), level, artifact);
    PairIdentity {
        reference: reference.to_string(),
        other: other.to_string(),
        verdict,
        because,
        level,
        control_prompts: triples.len(),
        pair: closeness(&pair),
        control: closeness(&control),
        test,
    }
}

fn has_logprobs(c: &Completion) -> bool {
    c.logprobs.as_ref().is_some_and(|t| !t.is_empty())
        || c.answer.as_deref().is_some_and(str::is_empty)
}

/// How far `y` is from `x`.
fn distance(x: &Completion, y: &Completion, level: Level) -> Distance {
    let (tx, ty) = (x.answer.as_deref(), y.answer.as_deref());
    let exact = tx == ty;
    match level {
        Level::DecodeLogprobs => {
            let empty: Vec<LogprobToken> = Vec::new();
            let a = x.logprobs.as_ref().unwrap_or(&empty);
            let b = y.logprobs.as_ref().unwrap_or(&empty);
            logprob_distance(a, b, exact)
        }
        Level::Text | Level::Mixed => {
            let (a, b) = (tx.unwrap_or_default(), ty.unwrap_or_default());
            let parted_at = (!exact).then(|| {
                a.chars()
                    .zip(b.chars())
                    .position(|(p, q)| p != q)
                    .unwrap_or_else(|| a.chars().count().min(b.chars().count()))
            });
            Distance {
                mean_abs: 0.0,
                max_abs: 0.0,
                parted_at,
                exact,
                tokens: 0,
                equal_tokens: 0,
            }
        }
    }
}

fn logprob_distance(a: &[LogprobToken], b: &[LogprobToken], exact: bool) -> Distance {
    let shared = a
        .iter()
        .zip(b)
        .position(|(x, y)| x.token != y.token)
        .unwrap_or_else(|| a.len().min(b.len()));
    let deltas: Vec<f64> = a[..shared]
        .iter()
        .zip(&b[..shared])
        .filter_map(|(x, y)| Some((x.logprob? - y.logprob?).abs()))
        .collect();
    let parted = shared < a.len().max(b.len());
    Distance {
        mean_abs: if deltas.is_empty() {
            0.0
        } else {
            deltas.iter().sum::<f64>() / deltas.len() as f64
        },
        max_abs: deltas.iter().copied().fold(0.0, f64::max),
        parted_at: parted.then_some(shared),
        exact,
        tokens: deltas.len(),
        equal_tokens: deltas.iter().filter(|d| **d == 0.0).count(),
    }
}

/// Which of the two is further from A0: the pair (`Greater`), the control (`Less`) or neither.
/// Symmetric in its arguments, as exchangeability needs.
fn compare(pair: &Distance, control: &Distance) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    let further = |x: &Distance, y: &Distance| {
        let parts = |d: &Distance| d.parted_at.is_some() || !d.exact;
        ((parts(x) || !parts(y)) && x.mean_abs > y.mean_abs)
            || (x.mean_abs == y.mean_abs && parts(x) && !parts(y))
    };
    if further(pair, control) {
        Greater
    } else if further(control, pair) {
        Less
    } else {
        Equal
    }
}

/// The sequential sign test as prompts come.
#[derive(Debug)]
struct Sequential {
    alpha: f64,
    wins: usize,
    losses: usize,
    ties: usize,
    tokens: usize,
    decided: Option<(usize, usize)>,
}

impl Sequential {
    fn at(alpha: f64) -> Sequential {
        Sequential {
            alpha,
            wins: 0,
            losses: 0,
            ties: 0,
            tokens: 0,
            decided: None,
        }
    }

    fn push(&mut self, outcome: std::cmp::Ordering, tokens: usize) {
        match outcome {
            std::cmp::Ordering::Greater => self.wins += 1,
            std::cmp::Ordering::Less => self.losses += 1,
            std::cmp::Ordering::Equal => self.ties += 1,
        }
        self.tokens += tokens;
        if self.decided.is_none() && e_value(self.wins, self.losses) >= 1.0 / self.alpha {
            self.decided = Some((self.wins + self.losses + self.ties, self.tokens));
        }
    }

    fn finish(self) -> IdentityTest {
        let discordant = (self.wins + self.losses) as u64;
        IdentityTest {
            alpha: self.alpha,
            pair_further: self.wins,
            control_further: self.losses,
            ties: self.ties,
            e_value: e_value(self.wins, self.losses),
            decided_at_prompt: self.decided.map(|d| d.0),
            decided_at_tokens: self.decided.map(|d| d.1),
            pair_further_upper: (discordant > 0)
                .then(|| wilson_at(self.wins as u64, discordant, 1.645).high),
        }
    }
}

/// The mixture martingale ∫ 2·(2θ)^w·(2(1−θ))^l dθ over θ in [½, 1] (the uniform prior on the
/// alternative "the pair is further apart more often than not"), in closed form: with n = w + l,
/// Σ_{k ≤ w} C(n+1, k) / ((n+1)·C(n, w)). 1 with no discordant prompt.
pub fn e_value(wins: usize, losses: usize) -> f64 {
    let n = wins + losses;
    let mut ln_factorial = vec![0.0f64; n + 2];
    for i in 1..ln_factorial.len() {
        ln_factorial[i] = ln_factorial[i - 1] + (i as f64).ln();
    }
    let ln_choose = |a: usize, b: usize| ln_factorial[a] - ln_factorial[b] - ln_factorial[a - b];
    let denominator = ((n + 1) as f64).ln() + ln_choose(n, wins);
    let terms: Vec<f64> = (0..=wins)
        .map(|k| ln_choose(n + 1, k) - denominator)
        .collect();
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()).exp()
}

fn verdict_of(
    test: &IdentityTest,
    compared: usize,
    level: Level,
    artifact: Option<&Parity>,
) -> (IdentityVerdict, Vec<String>) {
    let by = match level {
        Level::DecodeLogprobs => "decode logprobs",
        Level::Text => "greedy text only (the answers carried no logprobs)",
        Level::Mixed => "decode logprobs where all three answers carried them, text elsewhere",
    };
    if let Some(p) = artifact.filter(|p| p.prompt_tokens_mismatches > 0) {
        return (
            IdentityVerdict::Different,
            vec![format!(
                "another chat template or tokenizer: prompt token counts differ on {} of {} prompts",
                p.prompt_tokens_mismatches, p.prompt_tokens_compared
            )],
        );
    }
    let same_template = artifact
        .filter(|p| p.prompt_tokens_compared > 0)
        .map(|_| "same chat template and tokenizer (prompt tokens agree)".to_string());
    let mut because: Vec<String> = same_template.into_iter().collect();
    if let (Some(at), Some(tokens)) = (test.decided_at_prompt, test.decided_at_tokens) {
        because.insert(
            0,
            format!(
                "further from the reference than its own repeat on {} of {} prompts, closer on {} (anytime-valid sign test, e = {} ≥ {:.0}; decided on {at} prompts, {tokens} tokens, by {by})",
                test.pair_further,
                compared,
                test.control_further,
                e_text(test.e_value),
                1.0 / test.alpha
            ),
        );
        return (IdentityVerdict::Perturbed, because);
    }
    if compared < MIN_PROMPTS {
        because.insert(
            0,
            format!(
                "{compared} prompts have the reference's control answer (A answering twice); {MIN_PROMPTS} decide `identical` (`compare --control N`, or `--repeats 2`)"
            ),
        );
        return (IdentityVerdict::Undecided, because);
    }
    let discordant = test.pair_further + test.control_further;
    let upper = test.pair_further_upper.unwrap_or(0.0);
    if discordant == 0 || upper <= IDENTICAL_SHARE {
        let how = if discordant == 0 {
            format!("as close to the reference as its own repeat on all {compared} prompts")
        } else {
            format!(
                "no further from the reference than its own repeat: further on {} of {compared} prompts, closer on {} (95% bound {:.0}% ≤ {:.0}%)",
                test.pair_further,
                test.control_further,
                100.0 * upper,
                100.0 * IDENTICAL_SHARE
            )
        };
        because.insert(0, format!("{how}, by {by}"));
        return (IdentityVerdict::Identical, because);
    }
    because.insert(
        0,
        format!(
            "further from the reference than its own repeat on {} of {compared} prompts, closer on {} (e = {}, {:.0} decides); more prompts with a control would decide",
            test.pair_further,
            test.control_further,
            e_text(test.e_value),
            1.0 / test.alpha
        ),
    );
    (IdentityVerdict::Undecided, because)
}

/// An e-value as a reader takes it in: 37.5, or 3.8e16.
fn e_text(e: f64) -> String {
    if e < 1e4 {
        format!("{e:.1}")
    } else {
        format!("{e:.1e}")
    }
}

fn closeness(distances: &[Distance]) -> Closeness {
    let tokens: usize = distances.iter().map(|d| d.tokens).sum();
    let weighted: f64 = distances.iter().map(|d| d.mean_abs * d.tokens as f64).sum();
    let mut parted: Vec<usize> = distances.iter().filter_map(|d| d.parted_at).collect();
    parted.sort_unstable();
    let logprobs = tokens > 0;
    Closeness {
        prompts: distances.len(),
        exact_text: distances.iter().filter(|d| d.exact).count(),
        tokens_compared: tokens,
        equal_logprob_tokens: distances.iter().map(|d| d.equal_tokens).sum(),
        mean_abs_delta_logprob: logprobs.then(|| weighted / tokens as f64),
        max_abs_delta_logprob: logprobs
            .then(|| distances.iter().map(|d| d.max_abs).fold(0.0, f64::max)),
        median_first_divergence: parted.get(parted.len() / 2).copied(),
    }
}

#[cfg(test)]
mod tests;
