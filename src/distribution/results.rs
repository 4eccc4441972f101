//! results.json of a `coherence distribution` run (its own schema, not compare's): the sampling
//! parameters, the two-sample test per prompt and pooled, the A-vs-A controls, accuracy at
//! temperature, the same-model answer with its reasons and the gate.

use serde::{Deserialize, Serialize};

use super::kernel::Kernel;
use crate::analysis::SameModel;
use crate::gate::GateOrigin;

/// What every request of the run carried, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingParams {
    pub temperature: f64,
    #[serde(default)]
    pub top_p: Option<f64>,
    #[serde(default)]
    pub top_k: Option<u32>,
    /// Samples per prompt and endpoint.
    pub samples: u32,
    /// `--max-tokens`: overrides every prompt's own budget.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Extra request fields from `--param`, sent identically to both endpoints.
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DistributionResults {
    pub tool: String,
    /// Every planned sample arrived and the run was not interrupted.
    pub complete: bool,
    pub sampling: SamplingParams,
    /// The reference (A) first.
    pub endpoints: Vec<EndpointModel>,
    pub distribution: Distribution,
    pub summary: Summary,
    pub gate: GateOutcome,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndpointModel {
    pub name: String,
    pub model: String,
}

/// The test and its controls.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Distribution {
    /// `mmd_permutation`: the unbiased MMD² per prompt, summed over prompts, labels permuted
    /// within each prompt.
    pub method: String,
    /// The method in one sentence, as the report states it.
    pub method_statement: String,
    /// The characters of each sample the kernel compares (longer samples are cut).
    #[serde(default)]
    pub sample_chars: usize,
    /// Samples longer than `sample_chars`, cut before the kernel.
    #[serde(default)]
    pub clipped_samples: usize,
    pub alpha: f64,
    pub permutations: u32,
    pub seed: u64,
    /// The pooled statistic: the sum of the tested prompts' MMD².
    pub statistic: f64,
    /// The pooled permutation p-value (`null`: no prompt had two samples a side).
    pub p: Option<f64>,
    pub prompts_tested: usize,
    pub verdict: Verdict,
    pub prompts: Vec<PromptTest>,
    /// Each endpoint against itself: its samples split in halves (even and odd sample numbers)
    /// and tested the same way.
    pub control: Vec<Control>,
    /// Accuracy at temperature on the graded prompts, per endpoint.
    pub accuracy: Vec<Accuracy>,
    /// A's accuracy minus B's, paired by prompt (`null` without a graded prompt on both sides).
    pub accuracy_difference: Option<AccuracyDifference>,
}

/// What the pooled test reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// p at or above alpha: no difference detected.
    Same,
    /// p below alpha.
    Different,
    /// No prompt had two usable samples on each side.
    Untested,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Different => "different",
            Verdict::Untested => "untested",
        }
    }
}

/// One prompt's test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PromptTest {
    pub id: String,
    /// `graded` or `open`.
    pub kind: String,
    pub kernel: Kernel,
    pub question: String,
    /// Usable samples per endpoint, in endpoint order.
    pub samples: Vec<usize>,
    pub mmd2: Option<f64>,
    pub p: Option<f64>,
    /// Per endpoint: the share of its samples that are right (graded prompts only).
    #[serde(default)]
    pub accuracy: Vec<Option<f64>>,
    /// Per endpoint: its most frequent answers (the scored key, or the text), most frequent first.
    pub top_answers: Vec<Vec<AnswerCount>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerCount {
    pub answer: String,
    pub count: usize,
}

/// One endpoint's A-vs-A control.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Control {
    pub endpoint: String,
    pub statistic: f64,
    pub p: Option<f64>,
    pub prompts_tested: usize,
    /// Whether the control reads `different` (p below alpha): the endpoint's own samples are not
    /// exchangeable (it drifts, or the test's level does not hold for it).
    pub different: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Accuracy {
    pub endpoint: String,
    pub correct: usize,
    pub graded: usize,
    pub accuracy: Option<f64>,
}

/// A's accuracy minus B's, the mean over graded prompts of the per-prompt difference, with a 95%
/// normal interval from the spread of those differences.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AccuracyDifference {
    pub difference: f64,
    pub low: f64,
    pub high: f64,
    pub prompts: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub same_model: SameModel,
    pub same_model_because: Vec<String>,
}

/// The gate's expression, where it came from and the conditions that hold (none: passed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateOutcome {
    pub expression: String,
    pub origin: GateOrigin,
    pub failed: Vec<String>,
}
