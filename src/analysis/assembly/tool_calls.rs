//! results.json `tool_calls`: for the run's `tool_call` items, each endpoint's faults by bucket
//! (invalid JSON, unknown function, schema mismatch, missed and unexpected calls, wrong
//! arguments) and, per pair, the other endpoint's trigger F1 against the reference (`tool_f1`)
//! and the items one side got right and the other not, with the exact McNemar p-value.

use serde::{Deserialize, Serialize};

use crate::analysis::answers::per_prompt::ToolItem;
use crate::analysis::answers::quote::Quoter;
use crate::analysis::answers::stats::mcnemar_exact;
use crate::score::tool_call::ToolCallFound;
use crate::score::Detail;

/// The `tool_calls` section; absent when the run holds no `tool_call` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCalls {
    pub endpoints: Vec<EndpointToolCalls>,
    pub pairs: Vec<PairToolCalls>,
}

impl ToolCalls {
    /// Failing items quoted clipped.
    pub fn clipped_texts(&self) -> usize {
        self.endpoints
            .iter()
            .flat_map(|e| &e.failing)
            .filter(|f| f.clipped)
            .count()
    }
}

/// One endpoint's replies to the tool items (each item's first repeat).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointToolCalls {
    pub endpoint: String,
    /// Items with a usable reply.
    pub items: usize,
    /// Calls made, over all items.
    pub calls: usize,
    /// Calls whose arguments are not a JSON object.
    pub invalid_json: usize,
    /// Calls to a function that was not offered.
    pub unknown_name: usize,
    /// Calls whose arguments break the function's schema.
    pub schema_mismatch: usize,
    /// Items that expected a call and got none.
    pub missed_calls: usize,
    /// Items that expected no call and got one.
    pub unexpected_calls: usize,
    /// Items whose calls are other functions or carry other arguments than expected.
    pub argument_mismatch: usize,
    /// Items with a call whose `finish_reason` is not `tool_calls`.
    pub finish_reason_mismatch: usize,
    /// Items whose text holds a call the reply did not make.
    pub hidden_calls: usize,
    /// Well-formed calls over calls made (1 when none was made).
    pub schema_accuracy: f64,
    /// Items passing every check over items.
    pub match_rate: f64,
    /// The failing items, for the report.
    pub failing: Vec<FailingItem>,
}

/// An item an endpoint failed: what it was sent back and why it fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailingItem {
    pub prompt: String,
    pub reply: String,
    pub evidence: String,
    /// The reply or the evidence is longer than `quote::QUOTE_BYTES` and quoted clipped.
    #[serde(default, skip_serializing_if = "is_false")]
    pub clipped: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The other endpoint against the reference on the tool items both answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairToolCalls {
    pub reference: String,
    pub other: String,
    pub items: usize,
    /// Items where both called a function.
    pub both_called: usize,
    /// The reference called, the other did not (the other's false negatives).
    pub reference_only_called: usize,
    /// The other called, the reference did not (the other's false positives).
    pub other_only_called: usize,
    /// F1 of the other's call / no-call decisions, with the reference's as the truth (1 when
    /// neither ever called).
    pub tool_f1: f64,
    /// Items the reference got right and the other wrong.
    pub reference_only_correct: usize,
    /// Items the other got right and the reference wrong.
    pub other_only_correct: usize,
    /// Exact McNemar p-value of the two flip counts.
    pub mcnemar_p: f64,
}

/// One endpoint's checked reply to one item.
struct Checked {
    prompt: String,
    found: ToolCallFound,
    /// The reply and the evidence, as quoted.
    reply: String,
    evidence: String,
    clipped: bool,
}

/// The section for the run's tool items, from each one's first-repeat score on every endpoint
/// (`per_prompt` scored them), or `None` when the run has none.
pub fn analyze(items: &[ToolItem], names: &[String]) -> Option<ToolCalls> {
    if items.is_empty() {
        return None;
    }
    let per_endpoint: Vec<Vec<Option<Checked>>> = (0..names.len())
        .map(|e| {
            items
                .iter()
                .map(|item| {
                    let scored = item.first_repeat.get(e)?.as_deref()?;
                    let Detail::ToolCall(found) = &scored.detail else {
                        return None;
                    };
                    let (mut reply, mut evidence) = (
                        scored.as_written.clone().unwrap_or_default(),
                        scored.evidence.clone(),
                    );
                    let mut quoter = Quoter::default();
                    let clipped = quoter.string(&mut reply) | quoter.string(&mut evidence);
                    Some(Checked {
                        prompt: item.prompt.clone(),
                        found: found.clone(),
                        reply,
                        evidence,
                        clipped,
                    })
                })
                .collect()
        })
        .collect();
    let endpoints = names
        .iter()
        .zip(&per_endpoint)
        .map(|(name, checked)| endpoint(name, checked))
        .collect();
    let pairs = match (names.first(), per_endpoint.first()) {
        (Some(reference), Some(ref_checked)) => names
            .iter()
            .zip(&per_endpoint)
            .skip(1)
            .map(|(other, checked)| pair(reference, other, ref_checked, checked))
            .collect(),
        _ => Vec::new(),
    };
    Some(ToolCalls { endpoints, pairs })
}

fn endpoint(name: &str, checked: &[Option<Checked>]) -> EndpointToolCalls {
    let answered: Vec<&Checked> = checked.iter().flatten().collect();
    let count =
        |f: &dyn Fn(&ToolCallFound) -> bool| answered.iter().filter(|c| f(&c.found)).count();
    let bucket = |label: &str| answered.iter().map(|c| c.found.count(label)).sum::<usize>();
    let calls: usize = answered.iter().map(|c| c.found.made).sum();
    let (invalid_json, unknown_name, schema_mismatch) = (
        bucket("invalid_json"),
        bucket("unknown_name"),
        bucket("schema_mismatch"),
    );
    let passed = count(&ToolCallFound::passed);
    EndpointToolCalls {
        endpoint: name.to_string(),
        items: answered.len(),
        calls,
        invalid_json,
        unknown_name,
        schema_mismatch,
        missed_calls: count(&ToolCallFound::missed),
        unexpected_calls: count(&ToolCallFound::unexpected),
        argument_mismatch: count(&|f| f.argument_mismatch),
        finish_reason_mismatch: count(&|f| f.finish_reason_mismatch),
        hidden_calls: count(&|f| f.hidden_call),
        schema_accuracy: ratio(calls - invalid_json - unknown_name - schema_mismatch, calls),
        match_rate: ratio(passed, answered.len()),
        failing: answered
            .iter()
            .filter(|c| !c.found.passed())
            .map(|c| FailingItem {
                prompt: c.prompt.clone(),
                reply: c.reply.clone(),
                evidence: c.evidence.clone(),
                clipped: c.clipped,
            })
            .collect(),
    }
}

fn pair(
    reference: &str,
    other: &str,
    ref_checked: &[Option<Checked>],
    checked: &[Option<Checked>],
) -> PairToolCalls {
    let both: Vec<(&Checked, &Checked)> = ref_checked
        .iter()
        .zip(checked)
        .filter_map(|(a, b)| Some((a.as_ref()?, b.as_ref()?)))
        .collect();
    let count = |f: &dyn Fn(&ToolCallFound, &ToolCallFound) -> bool| {
        both.iter().filter(|(a, b)| f(&a.found, &b.found)).count()
    };
    let both_called = count(&|a, b| a.made > 0 && b.made > 0);
    let reference_only_called = count(&|a, b| a.made > 0 && b.made == 0);
    let other_only_called = count(&|a, b| a.made == 0 && b.made > 0);
    let reference_only_correct = count(&|a, b| a.passed() && !b.passed());
    let other_only_correct = count(&|a, b| !a.passed() && b.passed());
    PairToolCalls {
        reference: reference.to_string(),
        other: other.to_string(),
        items: both.len(),
        both_called,
        reference_only_called,
        other_only_called,
        tool_f1: f1(both_called, other_only_called, reference_only_called),
        reference_only_correct,
        other_only_correct,
        mcnemar_p: mcnemar_exact(reference_only_correct as u64, other_only_correct as u64),
    }
}

/// F1 from true positives, false positives and false negatives (1 when there is no positive).
fn f1(tp: usize, fp: usize, fn_: usize) -> f64 {
    let denominator = 2 * tp + fp + fn_;
    if denominator == 0 {
        1.0
    } else {
        (2 * tp) as f64 / denominator as f64
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

impl ToolCalls {
    /// Why a pair's tool calling shows another model or deployment, if it does: trigger F1
    /// under 0.98 (the bar tool-call vendor verifiers set), flips with McNemar p < 0.05, or the
    /// other's schema accuracy under 0.98 and under the reference's.
    pub fn differences(&self, reference: &str, other: &str) -> Vec<String> {
        let mut out = Vec::new();
        let Some(p) = self
            .pairs
            .iter()
            .find(|p| p.reference == reference && p.other == other)
        else {
            return out;
        };
        if p.tool_f1 < TOOL_F1_BAR {
            out.push(format!(
                "tool-call trigger F1 {:.3} against the reference (calls missed on {}, made unasked on {} of {} tool items)",
                p.tool_f1, p.reference_only_called, p.other_only_called, p.items
            ));
        }
        if p.mcnemar_p < 0.05 {
            out.push(format!(
                "tool items right on one side only: {} reference, {} other (exact McNemar p = {:.3})",
                p.reference_only_correct, p.other_only_correct, p.mcnemar_p
            ));
        }
        let accuracy = |name: &str| {
            self.endpoints
                .iter()
                .find(|e| e.endpoint == name)
                .map(|e| e.schema_accuracy)
        };
        if let (Some(a), Some(b)) = (accuracy(reference), accuracy(other)) {
            if b < TOOL_F1_BAR && b < a {
                out.push(format!(
                    "tool-call schema accuracy {:.0}% vs {:.0}% on the reference",
                    100.0 * b,
                    100.0 * a
                ));
            }
        }
        out
    }

    /// Calls outside the schema (invalid JSON, unknown function, schema mismatch), summed
    /// over every endpoint.
    pub fn schema_invalid(&self) -> usize {
        self.endpoints
            .iter()
            .map(|e| e.invalid_json + e.unknown_name + e.schema_mismatch)
            .sum()
    }

    /// Every pair's [`differences`](Self::differences), each named by its other endpoint when
    /// there are several: reasons for `summary.same_model` to say `no`.
    pub fn reasons(&self) -> Vec<String> {
        let several = self.pairs.len() > 1;
        let mut reasons = Vec::new();
        for p in &self.pairs {
            for r in self.differences(&p.reference, &p.other) {
                reasons.push(if several {
                    format!("{}: {r}", p.other)
                } else {
                    r
                });
            }
        }
        reasons
    }

    /// The lowest `tool_f1` of any pair (1 without pairs).
    pub fn lowest_tool_f1(&self) -> f64 {
        self.pairs.iter().map(|p| p.tool_f1).fold(1.0, f64::min)
    }
}

/// Trigger F1 and schema accuracy below this read as a difference (MiniMax's provider verifier
/// asks ≥ 98% of both).
pub const TOOL_F1_BAR: f64 = 0.98;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f1_counts_the_others_calls_against_the_references() {
        assert_eq!(f1(0, 0, 0), 1.0);
        assert_eq!(f1(8, 1, 1), 16.0 / 18.0);
        assert_eq!(ratio(3, 4), 0.75);
        assert_eq!(ratio(0, 0), 1.0);
    }
}
