//! The `--fail-on` gate applied to a run: each gate metric's value, then the conditions that hold.

use super::run_figures::RunFigures;
use super::tool_calls::ToolCalls;
use crate::analysis::answers::figures::GateResult;
use crate::analysis::behaviour::families::PairFamilies;
use crate::analysis::behaviour::quality::QualityVerdict;
use crate::analysis::behaviour::same_model::{Answer, SameModel};
use crate::analysis::identity::numerics::{IdentitySummary, IdentityVerdict};
use crate::analysis::stability::load::LoadResults;
use crate::gate::{Gate, Metric};

/// The value of one gate metric for this run; None when the run did not measure it (no pair
/// for `p`, no load phase for `changes_at_load`, no cache-state phase for `cache_dependent`).
fn metric(
    m: Metric,
    figures: &RunFigures,
    load: &LoadResults,
    same: &SameModelFigures,
) -> Option<f64> {
    let summary = &figures.summary;
    let count_quality =
        |v: QualityVerdict| figures.quality.iter().filter(|q| q.verdict == v).count();
    let count = match m {
        Metric::Same => summary.same,
        Metric::Diff => summary.diff,
        Metric::Review => summary.review,
        Metric::Fail => summary.fail,
        Metric::Nondeterministic => figures.nondeterministic,
        Metric::Deployment => figures.deployment_differences,
        Metric::P => {
            return figures
                .statistics
                .iter()
                .map(|s| s.overall.counts.p_value)
                .reduce(f64::min)
        }
        Metric::Flip => summary.kinds.flip,
        Metric::Answer => summary.kinds.answer,
        Metric::Format => summary.format,
        Metric::NoAnswer => summary.no_answer,
        Metric::Different => count_quality(QualityVerdict::Different),
        Metric::Inconclusive => count_quality(QualityVerdict::Inconclusive),
        Metric::Parity => figures
            .parity
            .iter()
            .map(|p| p.prompt_tokens_mismatches)
            .sum(),
        Metric::ChangesAtLoad => return load.changes_at_load().map(|n| n as f64),
        Metric::TextChangesAtLoad => return load.text_changes_at_load().map(|n| n as f64),
        Metric::CacheDependent => return load.cache_dependent().map(|n| n as f64),
        Metric::NotSameModel => usize::from(same.answer.answer == SameModel::No),
        Metric::SameModelUndecided => usize::from(same.answer.answer == SameModel::Undecided),
        Metric::FamiliesDifferent => same
            .families
            .iter()
            .map(|f| f.verdicts.different_families.len())
            .sum(),
        Metric::DistributionP | Metric::DistributionDifferent => return None,
        Metric::ToolF1 => return same.tool_calls.map(ToolCalls::lowest_tool_f1),
        Metric::SchemaInvalid => return same.tool_calls.map(|t| t.schema_invalid() as f64),
        Metric::LongDifferent if same.long.pairs.is_empty() => return None,
        Metric::LongDifferent => same.long.different_pairs(),
        Metric::IdentityPerturbed => return same.identity_pairs(IdentityVerdict::Perturbed),
        Metric::IdentityDifferent => return same.identity_pairs(IdentityVerdict::Different),
        Metric::IdentityUndecided => return same.identity_pairs(IdentityVerdict::Undecided),
    };
    Some(count as f64)
}

/// The same-model answer and the family verdicts it was decided from.
pub struct SameModelFigures<'a> {
    pub answer: &'a Answer,
    pub families: &'a [PairFamilies],
    /// The run's tool-call figures, when it has tool items.
    pub tool_calls: Option<&'a ToolCalls>,
    /// The long items' figures (`long_different`).
    pub long: &'a crate::analysis::long::long_figures::LongContext,
    /// The identity axis (`identity_*`), when the run has a pair.
    pub identity: Option<&'a IdentitySummary>,
}

impl SameModelFigures<'_> {
    /// How many pairs have this identity verdict (None: no pair).
    fn identity_pairs(&self, verdict: IdentityVerdict) -> Option<f64> {
        self.identity
            .map(|i| i.evidence.iter().filter(|p| p.verdict == verdict).count() as f64)
    }
}

/// The gate's expression and the conditions of it that hold (none: the gate passed).
pub fn evaluate(
    gate: &Gate,
    figures: &RunFigures,
    load: &LoadResults,
    same: &SameModelFigures,
) -> GateResult {
    GateResult {
        expression: gate.to_string(),
        origin: Some(gate.origin),
        failed: gate
            .failed(|m| metric(m, figures, load, same))
            .iter()
            .map(|c| c.to_string())
            .collect(),
    }
}
