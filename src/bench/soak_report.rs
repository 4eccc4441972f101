//! The soak's records and report: what one request line of `soak.jsonl` holds, what the run is
//! (`soak-run.json`), and the pure summary of the records (`soak.json`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::sample::{Sample, SampleOutcome};
use super::stats::{percentile, round2, Percentiles};
use super::target::EndpointSummary;
use super::traffic::Kind;

/// One line of `soak.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakRecord {
    pub worker: usize,
    pub seq: u64,
    pub kind: Kind,
    pub temperature: f64,
    pub max_tokens: u32,
    pub started_at: DateTime<Utc>,
    #[serde(flatten)]
    pub sample: Sample,
    /// The reply ends in a runaway repetition.
    #[serde(default)]
    pub degenerate: bool,
    /// The start of a degenerate reply (the repeating tail shows what looped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

impl SoakRecord {
    pub fn wall_ms(&self) -> f64 {
        (self.sample.end_s - self.sample.start_s) * 1000.0
    }

    fn tokens(&self) -> u64 {
        if self.sample.has_completion() {
            self.sample.completion_tokens.unwrap_or(0)
        } else {
            0
        }
    }
}

/// How a soak stands: in `soak-run.json` as it goes, in `soak.json` as it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SoakStatus {
    /// Sending. Still there after a kill: a report then calls it `unfinished`.
    #[serde(alias = "unfinished")]
    Running,
    Finished,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted,
}

impl SoakStatus {
    /// The status as a report states it: a soak still `running` when reported was killed, so
    /// no clean end was recorded.
    pub fn report_label(self) -> &'static str {
        match self {
            SoakStatus::Finished => "finished",
            SoakStatus::Interrupted => "interrupted",
            SoakStatus::Running => "unfinished",
        }
    }
}

fn serialize_report_label<S: serde::Serializer>(
    status: &SoakStatus,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(status.report_label())
}

/// `soak-run.json`: the soak's settings and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakMeta {
    pub tool: String,
    pub endpoint: EndpointSummary,
    pub settings: SoakSettings,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Still `running` after a kill: the report then says `unfinished`.
    pub status: SoakStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakSettings {
    pub duration_s: f64,
    pub concurrency: usize,
    pub kinds: Vec<Kind>,
    pub long_context_tokens: u64,
    pub temperatures: Vec<f64>,
    pub budgets: Vec<u32>,
    pub stream: bool,
    pub params: Map<String, Value>,
}

/// `soak.json` (and `--json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakReport {
    pub tool: String,
    /// Always `soak`.
    pub kind: String,
    /// `finished`, `interrupted` (Ctrl-C / SIGTERM) or `unfinished` (killed: no clean end
    /// recorded; [`SoakStatus::Running`] in the type).
    #[serde(serialize_with = "serialize_report_label")]
    pub status: SoakStatus,
    pub endpoint: EndpointSummary,
    pub settings: SoakSettings,
    pub started_at: DateTime<Utc>,
    /// From the start to the last recorded answer.
    pub wall_s: f64,
    pub requests: usize,
    pub completion_tokens: u64,
    pub prompt_tokens: u64,
    /// The sum of the workers' tok/s.
    pub aggregate_tps: f64,
    /// Each worker's completion tokens over its busy span (first send to last answer).
    pub per_worker_tps: Vec<f64>,
    /// Wall latency of every request that got a completion (errors excluded).
    pub latency_ms: Option<Percentiles>,
    pub errors: usize,
    pub error_kinds: BTreeMap<String, usize>,
    /// HTTP 200 with empty content and no tool calls.
    pub soft_empty: usize,
    /// Replies ending in a runaway repetition.
    pub degenerate: usize,
    pub by_kind: Vec<KindSummary>,
    /// The first few problem requests.
    pub examples: Vec<Example>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindSummary {
    pub kind: Kind,
    pub requests: usize,
    pub errors: usize,
    pub soft_empty: usize,
    pub degenerate: usize,
    pub p50_ms: Option<f64>,
    pub mean_completion_tokens: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    pub seq: u64,
    pub worker: usize,
    pub kind: Kind,
    pub problem: String,
}

const EXAMPLES: usize = 8;

/// Summarise the records of a soak. `skipped` lists unreadable journal lines.
pub fn summarize(meta: &SoakMeta, records: &[SoakRecord], skipped: &[String]) -> SoakReport {
    let mut per_worker = Vec::new();
    let workers = meta
        .settings
        .concurrency
        .max(records.iter().map(|r| r.worker + 1).max().unwrap_or(0));
    for w in 0..workers {
        let mine: Vec<&SoakRecord> = records.iter().filter(|r| r.worker == w).collect();
        let start = mine.iter().map(|r| r.sample.start_s).reduce(f64::min);
        let end = mine.iter().map(|r| r.sample.end_s).reduce(f64::max);
        let tokens: u64 = mine.iter().map(|r| r.tokens()).sum();
        per_worker.push(match (start, end) {
            (Some(s), Some(e)) if e > s => round2(tokens as f64 / (e - s)),
            _ => 0.0,
        });
    }
    let answered: Vec<&SoakRecord> = records
        .iter()
        .filter(|r| r.sample.has_completion())
        .collect();
    let latencies: Vec<f64> = answered.iter().map(|r| r.wall_ms()).collect();
    let count = |o: SampleOutcome| records.iter().filter(|r| r.sample.outcome == o).count();
    let mut error_kinds = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| r.sample.outcome == SampleOutcome::Error)
    {
        let kind = r
            .sample
            .problem
            .as_ref()
            .map(|p| p.kind.label().to_string())
            .unwrap_or_else(|| "unknown".into());
        *error_kinds.entry(kind).or_insert(0) += 1;
    }
    let mut notes: Vec<String> = skipped.to_vec();
    if meta.status == SoakStatus::Running {
        notes.push(
            "the soak did not end cleanly (killed?); this report covers what was journaled".into(),
        );
    }
    SoakReport {
        tool: meta.tool.clone(),
        kind: "soak".into(),
        status: meta.status,
        endpoint: meta.endpoint.clone(),
        settings: meta.settings.clone(),
        started_at: meta.started_at,
        wall_s: round2(records.iter().map(|r| r.sample.end_s).fold(0.0, f64::max)),
        requests: records.len(),
        completion_tokens: records.iter().map(|r| r.tokens()).sum(),
        prompt_tokens: answered.iter().filter_map(|r| r.sample.prompt_tokens).sum(),
        aggregate_tps: round2(per_worker.iter().sum()),
        per_worker_tps: per_worker,
        latency_ms: Percentiles::of(&latencies),
        errors: count(SampleOutcome::Error),
        error_kinds,
        soft_empty: count(SampleOutcome::SoftEmpty),
        degenerate: records.iter().filter(|r| r.degenerate).count(),
        by_kind: by_kind(records),
        examples: records
            .iter()
            .filter_map(|r| problem(r).map(|p| (r, p)))
            .take(EXAMPLES)
            .map(|(r, problem)| Example {
                seq: r.seq,
                worker: r.worker,
                kind: r.kind,
                problem,
            })
            .collect(),
        notes,
    }
}

fn problem(r: &SoakRecord) -> Option<String> {
    if r.degenerate {
        return Some(format!(
            "degenerate: {}",
            r.snippet.as_deref().unwrap_or("runaway repetition")
        ));
    }
    let label = match r.sample.outcome {
        SampleOutcome::Ok => return None,
        SampleOutcome::SoftEmpty => "soft-empty",
        SampleOutcome::Error => "error",
    };
    Some(format!(
        "{label}: {}",
        r.sample.problem_line().unwrap_or_default()
    ))
}

fn by_kind(records: &[SoakRecord]) -> Vec<KindSummary> {
    let mut kinds: Vec<Kind> = records.iter().map(|r| r.kind).collect();
    kinds.sort();
    kinds.dedup();
    kinds
        .into_iter()
        .map(|kind| {
            let mine: Vec<&SoakRecord> = records.iter().filter(|r| r.kind == kind).collect();
            let answered: Vec<&&SoakRecord> =
                mine.iter().filter(|r| r.sample.has_completion()).collect();
            let lat: Vec<f64> = answered.iter().map(|r| r.wall_ms()).collect();
            let toks: Vec<f64> = answered.iter().map(|r| r.tokens() as f64).collect();
            KindSummary {
                kind,
                requests: mine.len(),
                errors: mine.len() - answered.len(),
                soft_empty: mine
                    .iter()
                    .filter(|r| r.sample.outcome == SampleOutcome::SoftEmpty)
                    .count(),
                degenerate: mine.iter().filter(|r| r.degenerate).count(),
                p50_ms: percentile(&lat, 50.0).map(round2),
                mean_completion_tokens: super::stats::mean(&toks).map(round2),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_soak_still_running_is_reported_unfinished() {
        let label = |s: SoakStatus| {
            let mut out = Vec::new();
            serialize_report_label(&s, &mut serde_json::Serializer::new(&mut out)).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(label(SoakStatus::Running), "\"unfinished\"");
        assert_eq!(label(SoakStatus::Interrupted), "\"interrupted\"");
        assert_eq!(
            serde_json::to_string(&SoakStatus::Running).unwrap(),
            "\"running\"",
            "soak-run.json keeps `running`"
        );
        let read: SoakStatus = serde_json::from_str("\"unfinished\"").unwrap();
        assert_eq!(read, SoakStatus::Running);
    }
}
