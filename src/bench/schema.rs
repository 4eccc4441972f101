//! The output schema of `coherence bench` (`bench.json`, also printed by `--json`), what an
//! interrupted bench did not reach, and the names of the files of a bench run folder.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::baseline::Comparison;
use super::concurrency::Level;
use super::decode::Decode;
use super::metrics::SpecDecode;
use super::plan::BenchSettings;
use super::prefill::{Prefill, Skipped};
use super::target::EndpointSummary;
use super::warmup::WarmupSummary;
use crate::run_folder::{RunFolder, RunKind};

/// A `coherence bench` run folder (one per endpoint; several endpoints share a parent folder
/// holding the side-by-side summary).
const KIND: RunKind = RunKind {
    name: "bench run",
    manifest: BENCH_JSON,
    manifest_what: "bench report",
    manifest_ends_in_newline: true,
};
/// One line per request, as it completes.
pub const BENCH_REQUESTS: &str = "bench.jsonl";
/// The report, a [`BenchReport`] (also printed by `--json`).
pub const BENCH_JSON: &str = "bench.json";
/// The Markdown summary (of one endpoint, or side by side for several).
pub const BENCH_MD: &str = "bench.md";

/// The bench run folder `dir`.
pub fn bench_folder(dir: &Path) -> RunFolder {
    RunFolder::new(dir, &KIND)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    pub tool: String,
    /// Always `bench`.
    pub kind: String,
    /// `interrupted` after Ctrl-C or SIGTERM: the sections then hold what was measured before.
    #[serde(default)]
    pub status: BenchStatus,
    pub endpoint: EndpointSummary,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub settings: BenchSettings,
    /// None with `--warmup 0`.
    pub warmup: Option<WarmupSummary>,
    /// None with `--runs 0`.
    pub decode: Option<Decode>,
    pub concurrency: Vec<Level>,
    pub prefill: Vec<Prefill>,
    pub prefill_skipped: Vec<Skipped>,
    /// None when the bench was interrupted: the metrics window was never closed.
    pub spec_decode: Option<SpecDecode>,
    /// One line per failed or unusable request.
    pub problems: Vec<String>,
    pub baseline: Option<Comparison>,
    /// What the report does not cover, and why (after an interruption).
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchStatus {
    #[default]
    Finished,
    Interrupted,
}

impl BenchReport {
    /// The parts of the settings with no measurement in the report: the phases an interrupted
    /// bench never reached. Sizes skipped for a reason of their own are not missing.
    pub fn not_reached(&self) -> Vec<String> {
        let s = &self.settings;
        let mut out = Vec::new();
        if s.warmup > 0 && self.warmup.is_none() {
            out.push("warm-up".to_string());
        }
        if s.runs > 0 && self.decode.is_none() {
            out.push("decode".to_string());
        }
        let levels: Vec<String> = s
            .concurrency
            .iter()
            .filter(|n| !self.concurrency.iter().any(|l| l.n == **n))
            .map(|n| format!("c{n}"))
            .collect();
        if !levels.is_empty() {
            out.push(format!("concurrency {}", levels.join(", ")));
        }
        let sizes: Vec<String> = s
            .prefill
            .iter()
            .filter(|t| {
                let measured = self.prefill.iter().any(|p| p.tokens == **t);
                !measured && !self.prefill_skipped.iter().any(|p| p.tokens == **t)
            })
            .map(u64::to_string)
            .collect();
        if !sizes.is_empty() {
            out.push(format!("prefill {}", sizes.join(", ")));
        }
        if self.spec_decode.is_none() {
            out.push("speculative-decoding acceptance".to_string());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bench of every phase, interrupted during the warm-up: nothing but a warm-up request.
    fn interrupted_in_warmup() -> BenchReport {
        serde_json::from_value(serde_json::json!({
            "tool": "coherence", "kind": "bench", "status": "interrupted",
            "endpoint": {"name": "a", "base_url": "http://x/v1", "model": "m", "max_model_len": 4096, "server": null},
            "started_at": "2025-01-01T00:00:00Z", "finished_at": "2025-01-01T00:00:01Z",
            "settings": {"warmup": 2, "runs": 3, "max_tokens": 64, "concurrency": [1, 4], "rounds": 2,
                         "prefill": [1024, 8192], "prefill_runs": 1, "stream": false, "params": {}},
            "warmup": {"requests": 1, "decode_tps": [50.0], "concurrency": []},
            "decode": null, "concurrency": [], "prefill": [],
            "prefill_skipped": [{"tokens": 8192, "reason": "exceeds max_model_len 4096"}],
            "spec_decode": null, "problems": [], "baseline": null
        }))
        .unwrap()
    }

    #[test]
    fn not_reached_lists_every_phase_without_a_measurement() {
        let r = interrupted_in_warmup();
        assert_eq!(r.notes, Vec::<String>::new(), "notes default to empty");
        assert_eq!(
            r.not_reached(),
            vec![
                "decode",
                "concurrency c1, c4",
                "prefill 1024",
                "speculative-decoding acceptance"
            ],
            "a size skipped for its own reason is not missing"
        );
    }
}
