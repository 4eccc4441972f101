//! The identity axis: does B compute what A computes? Decided against an A-vs-A control in the
//! same run (the reference answering some prompts a second time), never against zero.
//!
//! Per prompt answered three times (A's first answer A0, A's control answer A1, B's answer B0),
//! the answers' distances are compared (`distance.rs`): where two answers first part is the
//! primary distance (the token index with decode logprobs, the character offset with text
//! alone), parting earlier being further and an empty shared prefix the furthest; at the same
//! parting point the mean |Δ logprob| over the shared prefix refines it. The prompt's score is
//! +1 when B0 is further from each of A's answers than A's answers are from each other, −1 when
//! it is closer to each, in between otherwise (the mean over A0 and A1 taken in turn as the
//! reference). When B is the same deployment as A, A0, A1 and B0 are exchangeable and the
//! score's mean is 0 whatever A's own nondeterminism; when a share s of B's answers come from
//! something else that parts from A's answers earlier than they part from each other, the mean
//! (the *excess*) is about s.
//!
//! Two tests by betting read the scores prompt by prompt (`betting.rs`), each a test martingale
//! that, by Ville's inequality, ever reaches 1/α with probability at most α when its hypothesis
//! holds, so either may be read after every prompt and the control may grow until one decides:
//! - `perturbed` when the martingale against "the excess is at most 0" (B is A) reaches 1/α, at
//!   the run's level (`ALPHA`, or `watch --alpha`). A same-deployment pair reads `perturbed` on at
//!   most α of runs.
//! - `identical` otherwise, when the martingale against "the excess is at least [`MARGIN`]"
//!   reaches 1/[`IDENTICAL_ALPHA`]: positive evidence that B is as close to A as A's own repeat,
//!   within the margin (an equivalence bound, not the absence of a large effect). A pair whose
//!   excess is at least the margin (a fifth of answers from another model, say) reads `identical`
//!   on at most 5% of runs.
//! - `different` when the artifact differs (prompt token counts: another chat template or
//!   tokenizer), whatever the tests say;
//! - `undecided` otherwise, saying what would decide it.
//!
//! Assumptions: each prompt's three answers come from their own requests, so a score's
//! conditional mean given the prompts before it is that prompt's own. `perturbed`'s error rate
//! needs nothing more: under its hypothesis every prompt's three answers are exchangeable, so
//! every score has mean 0. `identical`'s holds as stated when every prompt's excess is at least
//! the margin; for an excess that varies from prompt to prompt it holds for the average over the
//! prompts when their order is unrelated to which of them part (the scope's order is fixed before
//! anything is sent). `perturbed` is read first: a pair that reaches both reads `perturbed`.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::answers::figures::Parity;
use crate::endpoint::Completion;
use crate::run::{Line, Manifest, CONTROL_REPEAT};

mod betting;
mod distance;

use betting::Betting;
use distance::{Comparison, Distance, Evidence};

/// The `perturbed` test's level by default: the share of runs of a same-deployment pair read
/// `perturbed`, at most. A run may set its own (`identity_alpha` in the manifest; `watch --alpha`).
pub const ALPHA: f64 = 0.05;
/// The `identical` test's level: the share of runs of a pair whose excess is at least [`MARGIN`]
/// read `identical`, at most.
pub const IDENTICAL_ALPHA: f64 = 0.05;
/// The equivalence margin of `identical`: the excess (about the share of B's answers that part
/// from A's earlier than A's own answers part from each other) must be shown below it.
pub const MARGIN: f64 = 0.15;
/// The method, as results.json names it.
pub const METHOD: &str = "first divergence (token index, else character offset; earlier is further), refined by the mean |Δ logprob| over the shared prefix; per prompt +1/−1 when the candidate is further from/closer to each of the reference's two answers than they are from each other; two tests by betting (aGRAPA bets capped for the planned control, Waudby-Smith & Ramdas 2023): against excess ≤ 0 (perturbed) and against excess ≥ margin (identical), each anytime-valid by Ville's inequality";

/// What the test is run at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    /// The `perturbed` test's level.
    pub alpha: f64,
    /// The prompts with a control the run plans to compare (its control cap): the bets are
    /// tuned to decide within it. Fixed before the run, so they stay predictable.
    pub horizon: usize,
}

/// The fewest prompts with a control that can read `identical`: every one of them a tie, each
/// bet at its largest.
pub fn fewest_prompts_for_identical() -> usize {
    let per_prompt = (betting::MAX_BET * MARGIN / (1.0 - MARGIN)).ln_1p();
    ((1.0 / IDENTICAL_ALPHA).ln() / per_prompt).ceil() as usize
}

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

    /// The control has done its work: more prompts with a control would not change the verdict.
    pub fn is_decided(self) -> bool {
        self != IdentityVerdict::Undecided
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
    /// Prompts whose two answers part (at a token, or a character at the text level).
    #[serde(default)]
    pub parted: usize,
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

/// The two sequential tests' state when they stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdentityTest {
    /// The `perturbed` test's level.
    pub alpha: f64,
    /// Prompts where B0 was further from A0 than A's control A1 was.
    pub pair_further: usize,
    /// Prompts where A1 was further from A0 than B0 was.
    pub control_further: usize,
    pub ties: usize,
    /// The mean per-prompt score so far (about the share of B's answers that part from A's
    /// earlier than A's own answers part from each other); None before any prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excess: Option<f64>,
    /// The largest value the martingale against "B is A" reached (`perturbed` at 1/alpha).
    pub e_value: f64,
    /// The prompt count (and shared-prefix tokens) at which it reached 1/alpha.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at_prompt: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at_tokens: Option<usize>,
    /// The equivalence margin on the excess.
    #[serde(default)]
    pub margin: f64,
    /// The `identical` test's level.
    #[serde(default)]
    pub identical_alpha: f64,
    /// The largest value the martingale against "the excess is at least the margin" reached
    /// (`identical` at 1/identical_alpha).
    #[serde(default)]
    pub identical_e_value: f64,
    /// The prompt count at which it reached 1/identical_alpha.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identical_at_prompt: Option<usize>,
    /// The prompts the bets were tuned for (the run's control cap).
    #[serde(default)]
    pub horizon: usize,
    #[serde(default)]
    pub method: String,
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
    /// `--control auto`: how the control grew (absent for a fixed control).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_growth: Option<ControlGrowth>,
}

/// How a growing control grew: its cap and its size at each look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlGrowth {
    /// `--control-max`.
    pub max: usize,
    /// The prompts the reference had answered twice at each look, in order.
    pub looks: Vec<usize>,
}

/// The test's setting for a run: its level, and the bets tuned to its control's cap
/// (`--control-max` for a growing control, else the fixed control, else every prompt: with
/// `--repeats 2` or a replayed reference each prompt may have a control).
pub fn setting_of(manifest: &Manifest) -> Setting {
    let horizon = match (manifest.control_max, manifest.control) {
        (Some(max), _) => max,
        (None, n) if n > 0 => n,
        _ => manifest.prompts.len(),
    };
    Setting {
        alpha: manifest.identity_alpha.unwrap_or(ALPHA),
        horizon,
    }
}

/// A growing control's cap and looks, from the run's manifest.
pub fn growth_of(manifest: &Manifest) -> Option<ControlGrowth> {
    manifest.control_max.map(|max| ControlGrowth {
        max,
        looks: manifest.control_looks.clone(),
    })
}

/// Decide every pair of the run (the reference against each other endpoint).
pub fn decide<L: Line>(
    records: &[L],
    names: &[String],
    prompts: &[String],
    parity: &[Parity],
    setting: Setting,
) -> Option<IdentitySummary> {
    let (reference, others) = names.split_first()?;
    let latest = latest_answers(records);
    let pairs: Vec<PairIdentity> = others
        .iter()
        .map(|other| {
            let artifact = parity
                .iter()
                .find(|p| &p.reference == reference && &p.other == other);
            decide_pair(&latest, prompts, reference, other, artifact, setting)
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
        control_growth: None,
    })
}

/// The A-vs-A control's requests whose newest record is a request failure, and those with no
/// record at all: the reference's second answer to each of the first `manifest.control` prompts
/// of the scope (none when every prompt is repeated anyway or the reference is replayed).
pub fn control_gaps<L: Line>(records: &[L], manifest: &Manifest) -> (usize, usize) {
    let Some(reference) = manifest.endpoints.first() else {
        return (0, 0);
    };
    if manifest.control == 0 || manifest.repeats != 1 || reference.is_replayed() {
        return (0, 0);
    }
    let mut newest: BTreeMap<&str, bool> = BTreeMap::new();
    for r in records {
        if r.endpoint() == reference.spec.name && r.repeat() == CONTROL_REPEAT {
            newest.insert(r.prompt(), r.is_request_failure());
        }
    }
    manifest
        .prompts
        .iter()
        .take(manifest.control)
        .fold((0, 0), |(failed, missing), p| {
            match newest.get(p.as_str()) {
                Some(true) => (failed + 1, missing),
                Some(false) => (failed, missing),
                None => (failed, missing + 1),
            }
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
    setting: Setting,
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
    let mut test = Tests::at(setting);
    let mut with_logprobs = 0;
    for [a0, a1, b0] in &triples {
        // A prompt is compared by logprobs when all three answers carry them, else by text.
        let evidence = if [a0, a1, b0].iter().all(|c| has_logprobs(c)) {
            with_logprobs += 1;
            Evidence::Logprobs
        } else {
            Evidence::Text
        };
        let comparison = Comparison::of(a0, a1, b0, evidence);
        test.push(&comparison);
        pair.push(comparison.pair);
        control.push(comparison.control);
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

/// Both sequential tests as prompts come.
#[derive(Debug)]
struct Tests {
    setting: Setting,
    wins: usize,
    losses: usize,
    ties: usize,
    scores: f64,
    tokens: usize,
    perturbed: Betting,
    identical: Betting,
    decided_at_tokens: Option<usize>,
}

impl Tests {
    fn at(setting: Setting) -> Tests {
        Tests {
            setting,
            wins: 0,
            losses: 0,
            ties: 0,
            scores: 0.0,
            tokens: 0,
            // Scores in [−1, 1] against "their mean is at most 0".
            perturbed: Betting::new(setting.alpha, 1.0, setting.horizon, 0.0),
            // MARGIN − score in [MARGIN − 1, MARGIN + 1] against "its mean is at most 0".
            identical: Betting::new(IDENTICAL_ALPHA, 1.0 - MARGIN, setting.horizon, MARGIN),
            decided_at_tokens: None,
        }
    }

    fn push(&mut self, c: &Comparison) {
        match c.against_first {
            Ordering::Greater => self.wins += 1,
            Ordering::Less => self.losses += 1,
            Ordering::Equal => self.ties += 1,
        }
        self.scores += c.score;
        self.tokens += c.pair.tokens;
        self.perturbed.push(c.score);
        self.identical.push(MARGIN - c.score);
        if self.decided_at_tokens.is_none() && self.perturbed.crossed_at().is_some() {
            self.decided_at_tokens = Some(self.tokens);
        }
    }

    fn finish(self) -> IdentityTest {
        let n = self.wins + self.losses + self.ties;
        IdentityTest {
            alpha: self.setting.alpha,
            pair_further: self.wins,
            control_further: self.losses,
            ties: self.ties,
            excess: (n > 0).then(|| self.scores / n as f64),
            e_value: self.perturbed.e_value(),
            decided_at_prompt: self.perturbed.crossed_at(),
            decided_at_tokens: self.decided_at_tokens,
            margin: MARGIN,
            identical_alpha: IDENTICAL_ALPHA,
            identical_e_value: self.identical.e_value(),
            identical_at_prompt: self.identical.crossed_at(),
            horizon: self.setting.horizon,
            method: METHOD.to_string(),
        }
    }
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
    let counts = format!(
        "further from the reference's first answer than its repeat on {} of {compared} prompts, closer on {}",
        test.pair_further, test.control_further
    );
    let excess = test.excess.unwrap_or(0.0);
    let (verdict, first) = if let Some(at) = test.decided_at_prompt {
        (
            IdentityVerdict::Perturbed,
            format!(
                "{counts}; excess {} (anytime-valid test by betting, e = {} ≥ {:.0}; decided on {at} prompts{}, by {by})",
                percent(excess),
                e_text(test.e_value),
                1.0 / test.alpha,
                test.decided_at_tokens
                    .filter(|t| *t > 0)
                    .map_or(String::new(), |t| format!(", {t} tokens"))
            ),
        )
    } else if let Some(at) = test.identical_at_prompt {
        (
            IdentityVerdict::Identical,
            format!(
                "as close to the reference as its own repeat: {counts}; excess {}, shown below {} (anytime-valid equivalence test by betting, e = {} ≥ {:.0}; decided on {at} prompts, by {by})",
                percent(excess),
                percent(test.margin),
                e_text(test.identical_e_value),
                1.0 / test.identical_alpha
            ),
        )
    } else {
        let fewest = fewest_prompts_for_identical();
        let why = if compared < fewest {
            format!(
                "{compared} prompts have the reference's control answer (A answering twice); `identical` needs {fewest} at least (`compare --control auto` grows the control until decided, or `--repeats 2`)"
            )
        } else {
            format!(
                "{counts}; excess {}: neither shown above 0 (e = {} of {:.0}) nor below {} (e = {} of {:.0}); more prompts with a control would decide (`compare --control-max N`)",
                percent(excess),
                e_text(test.e_value),
                1.0 / test.alpha,
                percent(test.margin),
                e_text(test.identical_e_value),
                1.0 / test.identical_alpha
            )
        };
        (IdentityVerdict::Undecided, why)
    };
    because.insert(0, first);
    (verdict, because)
}

/// A share as a reader takes it in: 12.5%, −3.3%.
fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// An e-value as a reader takes it in: 37.5, or 3.8e16.
pub fn e_text(e: f64) -> String {
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
        parted: parted.len(),
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
