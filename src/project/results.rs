//! What `coherence project` concluded: per task and endpoint, the requirement verdicts, whether
//! the artifact is playable, its first runtime error and the answer's size and cost. Written as
//! `results.json` (contract: `tasks[].{id, spec_words, answers.<endpoint>.{requirements{met,
//! partial, missing, total}, playable, runtime_error, elapsed_s, completion_tokens}}`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How well one requirement is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequirementStatus {
    Missing,
    Partial,
    Met,
}

impl RequirementStatus {
    pub fn parse(s: &str) -> RequirementStatus {
        match s {
            "met" => RequirementStatus::Met,
            "partial" => RequirementStatus::Partial,
            _ => RequirementStatus::Missing,
        }
    }

    /// Both halves of a requirement checked two ways: met when both are, missing when both are.
    pub fn combine(self, other: RequirementStatus) -> RequirementStatus {
        match (self, other) {
            (RequirementStatus::Met, RequirementStatus::Met) => RequirementStatus::Met,
            (RequirementStatus::Missing, RequirementStatus::Missing) => RequirementStatus::Missing,
            _ => RequirementStatus::Partial,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub met: usize,
    pub partial: usize,
    pub missing: usize,
    pub total: usize,
}

/// One requirement's verdict for one artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequirementResult {
    pub id: String,
    pub title: String,
    pub verdict: RequirementStatus,
    pub detail: String,
}

/// One uncaught error inside a scripted playthrough.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeError {
    pub scenario: String,
    /// Where it was thrown: `load`, `animation frame`, `timer`, `event keydown`, …
    pub phase: String,
    pub message: String,
    pub frame: u64,
}

impl RuntimeError {
    pub fn describe(&self) -> String {
        format!(
            "{} ({} in scenario {}, frame {})",
            self.message, self.phase, self.scenario, self.frame
        )
    }
}

/// How one scenario run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRun {
    pub name: String,
    /// `finished`, or why it did not (`timed out after 60 s`, `did not load: …`).
    pub status: String,
    pub frames: u64,
    pub virtual_ms: u64,
    pub wall_ms: u64,
    pub errors: Vec<RuntimeError>,
}

/// The verdicts on one artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub requirements: Counts,
    pub playable: bool,
    /// Why it is not playable, when it is not.
    pub unplayable_because: Option<String>,
    pub runtime_error: Option<String>,
    pub html_found: bool,
    pub scripts: usize,
    pub dead_functions: Vec<String>,
    pub checks: Vec<RequirementResult>,
    pub scenarios: Vec<ScenarioRun>,
}

/// One endpoint's answer to one task, in results.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub requirements: Counts,
    pub playable: bool,
    pub runtime_error: Option<String>,
    pub elapsed_s: Option<f64>,
    pub completion_tokens: Option<u64>,
    pub prompt_tokens: Option<u64>,
    pub finish_reason: Option<String>,
    pub output_bytes: usize,
    pub output_lines: usize,
    pub reasoning_bytes: usize,
    /// The request failed (no answer to evaluate): the failure, else None.
    pub request_error: Option<String>,
    pub evaluation: Option<Evaluation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    pub id: String,
    pub title: String,
    pub spec_words: usize,
    pub requirement_count: usize,
    pub answers: BTreeMap<String, Answer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectResults {
    pub tool: String,
    /// Endpoint names in flag order (the first is the reference).
    pub endpoints: Vec<String>,
    pub complete: bool,
    pub tasks: Vec<TaskResult>,
}
