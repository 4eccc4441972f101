//! The output schema of `coherence bench` (`bench.json`, also printed by `--json`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::baseline::Comparison;
use super::concurrency::Level;
use super::decode::Decode;
use super::metrics::SpecDecode;
use super::prefill::{Prefill, Skipped};
use super::target::EndpointSummary;
use super::warmup::WarmupSummary;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    pub tool: String,
    /// Always `bench`.
    pub kind: String,
    pub endpoint: EndpointSummary,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub settings: Settings,
    /// None with `--warmup 0`.
    pub warmup: Option<WarmupSummary>,
    /// None with `--runs 0`.
    pub decode: Option<Decode>,
    pub concurrency: Vec<Level>,
    pub prefill: Vec<Prefill>,
    pub prefill_skipped: Vec<Skipped>,
    pub spec_decode: SpecDecode,
    /// One line per failed or unusable request.
    pub problems: Vec<String>,
    pub baseline: Option<Comparison>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub warmup: u32,
    pub runs: u32,
    pub max_tokens: u32,
    pub concurrency: Vec<usize>,
    pub rounds: u32,
    pub prefill: Vec<u64>,
    pub prefill_runs: u32,
    pub stream: bool,
    /// Extra request fields from `--param`.
    pub params: Map<String, Value>,
}
