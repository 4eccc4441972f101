//! The types of `results.json`: the public output contract (schema in
//! `src/report/results.schema.json`): the whole run, its summary and per-category roll-ups,
//! assembled from the parts in `figures.rs` and the analyses' own types.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::analysis::answers::figures::{
    EndpointSummary, GateResult, Identity, PairStatistics, Parity, PromptResult, RunSampling,
    Stability, TokenDivergenceCounts,
};
use crate::analysis::answers::kind::DivergenceKind;
use crate::analysis::answers::verdict::Verdict;
use crate::analysis::behaviour::quality::Quality;

/// The version of the `results.json` layout (see `src/report/results.schema.json`).
pub const SCHEMA_VERSION: u32 = 4;

/// `results.json`: a public contract (`docs/src/run-folder.md`, `src/report/results.schema.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub tool: String,
    pub generated_at: DateTime<Utc>,
    /// Name of the reference endpoint (the first `--endpoint`).
    pub reference: String,
    pub sampling: RunSampling,
    pub endpoints: Vec<EndpointSummary>,
    pub summary: Summary,
    /// Prompt-endpoint pairs whose repeats gave different answers.
    pub nondeterministic: usize,
    /// Prompts where another endpoint's modal answer never occurs among the reference's repeats.
    pub deployment_differences: usize,
    /// No request failures and nothing missing.
    pub complete: bool,
    pub request_failures: usize,
    /// Planned (prompt, endpoint, repeat) slots with no record at all.
    pub missing: usize,
    pub categories: Vec<CategoryRollup>,
    /// The quality answer per (reference, other) pair: equivalent, different or inconclusive.
    #[serde(default)]
    pub quality: Vec<Quality>,
    /// Each endpoint's agreement with itself across repeats.
    #[serde(default)]
    pub stability: Vec<Stability>,
    /// Identical texts, same answer in other words, diverged: per pair.
    #[serde(default)]
    pub identity: Vec<Identity>,
    /// Prompt-token, finish-reason and reasoning-length parity per pair.
    #[serde(default)]
    pub parity: Vec<Parity>,
    /// With `--logprobs`: first divergences per pair, near-tie or substantive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_divergences: Vec<TokenDivergenceCounts>,
    /// With `compare --logprobs`: teacher-forced figures per pair (every endpoint scored the
    /// reference's completions; KL, same top token and Δp as `coherence logprobs` reports them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_agreement: Vec<crate::logprobs::run::PairFigures>,
    /// How the run was teacher-forced: modes, offsets, self-consistency and what was not scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teacher_forcing: Option<crate::analysis::identity::token_agreement::TeacherForcing>,
    /// Paired statistics of each other endpoint against the reference.
    pub statistics: Vec<PairStatistics>,
    /// Per pair, each family's (category's) accuracies, flips and Holm-adjusted exact McNemar
    /// verdict (`analysis/behaviour/families.rs`).
    #[serde(default)]
    pub families: Vec<crate::analysis::behaviour::families::PairFamilies>,
    /// Per pair, the anytime-valid decision over the generated items in item order
    /// (`analysis/behaviour/decision.rs`); empty without generated items.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequential: Vec<crate::analysis::behaviour::decision::PairSequential>,
    /// `--until-decided`: the rule, the looks taken and why the run stopped; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_decided: Option<crate::analysis::behaviour::decision::UntilDecided>,
    /// Per pair, the flips that rest on a weak read on either side (`weak_reads.rs`); absent when
    /// none does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weak_reads: Vec<crate::analysis::behaviour::weak_reads::PairWeakReads>,
    /// Each generated family's level and how it was chosen (calibrated on the reference, or
    /// fixed), its status (`measured`, `floor`, `ceiling`, `fixed`), the calibration requests
    /// and budget (`analysis/behaviour/difficulty.rs`); absent for runs of generator versions 1 and 2.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub difficulty: Vec<crate::catalogue::generator::FamilyLevel>,
    /// Tool items' calls per endpoint and per pair (`analysis/assembly/tool_calls.rs`); absent without
    /// tool items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<super::tool_calls::ToolCalls>,
    /// `--suite long`: accuracy per endpoint, length and depth, and where each pair parts
    /// (`analysis/long/long_context.rs`); absent without long items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context: Option<crate::analysis::long::long_figures::LongContext>,
    pub gate: GateResult,
    pub prompts: Vec<PromptResult>,
    /// Problems met while analysing (prompts no longer in the catalogue, unreadable lines).
    pub warnings: Vec<String>,
    /// `determinism --under-load/--cache-states/--samples`: `under_load`, `load_verdicts`,
    /// `cache_states`, `cache_verdicts`, `samples` (each absent when empty).
    #[serde(flatten)]
    pub load: crate::analysis::stability::load::LoadResults,
}

impl Results {
    /// Refuse a results.json of a later layout than this build writes: its fields may mean
    /// something this build would misreport.
    pub fn check_version(&self) -> Result<(), String> {
        if self.schema_version > SCHEMA_VERSION {
            return Err(format!(
                "schema_version {} is newer than this coherence reads ({SCHEMA_VERSION}); score the \
                 run again with `coherence score`, or use a newer coherence",
                self.schema_version
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub same: usize,
    /// Prompts whose only divergence is formatting: both sides fail the same way, rendered
    /// differently. Not a difference between the deployments, so not counted in `diff`.
    #[serde(default)]
    pub format: usize,
    /// Prompts where neither side gave an answer (both wrong, nothing read on either, the texts
    /// differing). Not a difference between answers, so not counted in `diff` or `format`.
    #[serde(default)]
    pub no_answer: usize,
    pub diff: usize,
    pub review: usize,
    pub fail: usize,
    /// The diverging prompts by kind: `flip` and `answer` make up `diff` (a prompt counts under
    /// the most severe kind of its pairs); `format` and `no_answer` count those prompts (the
    /// same numbers as above, kept where older readers look for them).
    #[serde(default)]
    pub kinds: KindCounts,
    /// The run's answer to "same model?" (`analysis/behaviour/same_model.rs`); only on the run's summary,
    /// not on a category's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_model: Option<crate::analysis::behaviour::same_model::SameModel>,
    /// The short reasons behind `same_model`, most decisive first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub same_model_because: Vec<String>,
    /// "Does B compute what A computes?" (`analysis/identity/numerics.rs`); run summary only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<crate::analysis::identity::numerics::IdentitySummary>,
    /// "Does it matter?": the quality decision (`analysis/behaviour/same_model.rs`); run summary only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<crate::analysis::behaviour::same_model::Behaviour>,
}

/// Diverging prompts per divergence kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCounts {
    pub flip: usize,
    pub answer: usize,
    pub format: usize,
    #[serde(default)]
    pub no_answer: usize,
}

impl Summary {
    /// Count one prompt: its verdict and, for a diff, its kind.
    pub fn add(&mut self, prompt: &PromptResult) {
        match prompt.verdict {
            Verdict::Same => self.same += 1,
            Verdict::Format => {
                self.format += 1;
                self.kinds.format += 1;
            }
            Verdict::NoAnswer => {
                self.no_answer += 1;
                self.kinds.no_answer += 1;
            }
            Verdict::Diff => {
                self.diff += 1;
                let diff_kinds = prompt
                    .pairs
                    .iter()
                    .filter(|p| p.verdict == Verdict::Diff)
                    .filter_map(|p| p.kind);
                match diff_kinds.min() {
                    Some(DivergenceKind::Flip) => self.kinds.flip += 1,
                    Some(
                        DivergenceKind::Answer | DivergenceKind::Format | DivergenceKind::NoAnswer,
                    )
                    | None => self.kinds.answer += 1,
                }
            }
            Verdict::Review => self.review += 1,
            Verdict::Fail => self.fail += 1,
        }
    }

    /// "80 same / 3 format / 2 no answer / 15 diff (2 flip, 13 answer) / 0 review / 0 fail".
    pub fn headline(&self) -> String {
        let kinds = if self.diff > 0 {
            format!(" ({} flip, {} answer)", self.kinds.flip, self.kinds.answer)
        } else {
            String::new()
        };
        format!(
            "{} same / {} format / {} no answer / {} diff{kinds} / {} review / {} fail",
            self.same, self.format, self.no_answer, self.diff, self.review, self.fail
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CategoryRollup {
    pub category: String,
    pub prompts: usize,
    #[serde(flatten)]
    pub summary: Summary,
    /// Correct answers per endpoint.
    pub correct: BTreeMap<String, usize>,
}
