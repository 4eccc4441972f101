//! The soak's records and report: what one request line of `soak.jsonl` holds, what the run is
//! (`soak-run.json`), and the pure summary of the records (`soak.json`); and the names of the
//! files of a soak run folder.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::plan::Slo;
use super::sample::{Sample, SampleOutcome};
use super::stats::{percentile, round2, Percentiles};
use super::target::EndpointSummary;
use super::traffic::Kind;
use crate::run_folder::{RunFolder, RunKind};

/// A `coherence soak` run folder: its settings, its journal and its reports.
const KIND: RunKind = RunKind {
    name: "soak run",
    manifest: SOAK_META,
    manifest_what: "soak settings",
    manifest_ends_in_newline: true,
};
/// One flushed line per answer ([`SoakRecord`]), the journal `soak --report` re-renders from.
pub const SOAK_RECORDS: &str = "soak.jsonl";
/// The settings and how the soak ended ([`SoakMeta`]).
pub const SOAK_META: &str = "soak-run.json";
/// The report, a [`SoakReport`] (also printed by `--json`).
pub const SOAK_JSON: &str = "soak.json";
/// The Markdown summary.
pub const SOAK_MD: &str = "soak.md";

/// The soak run folder `dir`.
pub fn soak_folder(dir: &Path) -> RunFolder {
    RunFolder::new(dir, &KIND)
}

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
    /// The step of a sweep this request belongs to (0 without a sweep).
    #[serde(default)]
    pub step: usize,
    /// Open loop: when the arrival schedule wanted this request sent (seconds since the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_s: Option<f64>,
    /// Open loop: `--max-in-flight` requests were outstanding at its arrival, so it waited for
    /// a slot and was sent late.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waited_for_slot: bool,
    /// `--graded`: the catalogue prompt sent and how its answer scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graded: Option<GradedMark>,
}

/// How one graded request scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradedMark {
    pub prompt: String,
    /// None when no completion came back (an error, counted as such, not as wrong). An empty
    /// reply is wrong.
    pub correct: Option<bool>,
    /// The answer as the scorer read it (else the start of the reply): what stability compares.
    pub answer: Option<String>,
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
    /// The steps run so far, each written as it ends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepMeta>,
    /// Why a rate sweep stopped before its last rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// One step of a soak as it ran: its load and its time span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepMeta {
    pub index: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    pub start_s: f64,
    pub end_s: f64,
    /// Open loop: arrivals still waiting for a slot when the step's time was up, never sent.
    #[serde(default)]
    pub dropped: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakSettings {
    /// Per step, with a sweep.
    pub duration_s: f64,
    /// Closed-loop workers; 0 in an open-loop (`--rate`) soak.
    pub concurrency: usize,
    /// Open loop: the offered rates in requests per second, one step each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<f64>,
    /// Open loop: the gamma shape of the inter-arrival times (1 = Poisson).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burstiness: Option<f64>,
    /// Open loop: the cap on outstanding requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<usize>,
    /// `--slo-e2e-ms` and `--slo-tpot-ms`.
    #[serde(default, skip_serializing_if = "slo_unset")]
    pub slo: Slo,
    /// Closed loop with more than one level (the agent-sanity sweep): the levels, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<usize>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sanity: bool,
    /// `--graded`: the share of requests that are catalogue prompts, and which prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graded_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graded_prompts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalogue_hash: Option<String>,
    pub kinds: Vec<Kind>,
    pub long_context_tokens: u64,
    pub temperatures: Vec<f64>,
    pub budgets: Vec<u32>,
    pub stream: bool,
    pub params: Map<String, Value>,
}

fn slo_unset(s: &Slo) -> bool {
    !s.any()
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
    /// Open loop: one entry per rate step, with what was offered and what was achieved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepSummary>,
    /// Open loop: where a rate sweep stopped, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
    /// With `--slo-e2e-ms` or `--slo-tpot-ms`: the requests that met every objective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Goodput>,
    /// With `--graded`: accuracy and answer stability over time and per load level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graded: Option<GradedSummary>,
    /// With `--sanity`: bad outputs per concurrency level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanity: Option<Sanity>,
    pub notes: Vec<String>,
}

/// Correctness of the graded requests: `accuracy` is correct / (correct + wrong); requests
/// that failed outright are `unscored` (and counted among the errors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradedSummary {
    pub requests: usize,
    pub correct: usize,
    pub wrong: usize,
    pub unscored: usize,
    pub accuracy: Option<f64>,
    /// The soak split into [`WINDOWS`] equal windows by send time.
    pub by_window: Vec<GradedSlice>,
    /// One entry per load step (concurrency level or rate).
    pub by_level: Vec<GradedSlice>,
    /// Same prompt, same answer across the soak?
    pub stability: Stability,
}

/// The graded requests of one time window or one load step. `changed` counts the requests whose
/// answer differs from their prompt's most common answer over the whole soak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradedSlice {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    pub requests: usize,
    pub correct: usize,
    pub wrong: usize,
    pub accuracy: Option<f64>,
    pub changed: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    /// Prompts answered at least twice.
    pub prompts: usize,
    /// Of those, the ones that gave the same answer every time.
    pub stable: usize,
    /// The others, with every answer they gave and how often.
    pub unstable: Vec<UnstablePrompt>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnstablePrompt {
    pub prompt: String,
    pub answers: BTreeMap<String, usize>,
}

/// The agent-sanity sweep: bad outputs (errors, empty, degenerate, wrong on graded prompts) per
/// concurrency level; it passes with none at any level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sanity {
    pub levels: Vec<SanityLevel>,
    pub bad: usize,
    pub passed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SanityLevel {
    pub concurrency: Option<usize>,
    pub requests: usize,
    pub errors: usize,
    pub empty: usize,
    pub degenerate: usize,
    pub wrong: usize,
    pub bad: usize,
}

/// Graded accuracy is reported over this many equal windows of the soak.
pub const WINDOWS: usize = 10;

fn slice(
    records: &[&SoakRecord],
    usual: &BTreeMap<String, String>,
    mut base: GradedSlice,
) -> GradedSlice {
    let marks: Vec<&GradedMark> = records.iter().filter_map(|r| r.graded.as_ref()).collect();
    base.requests = marks.len();
    base.correct = marks.iter().filter(|m| m.correct == Some(true)).count();
    base.wrong = marks.iter().filter(|m| m.correct == Some(false)).count();
    base.accuracy = accuracy(base.correct, base.wrong);
    base.changed = marks
        .iter()
        .filter(|m| m.correct.is_some() && usual.get(&m.prompt) != Some(&answer_key(m)))
        .count();
    base
}

fn accuracy(correct: usize, wrong: usize) -> Option<f64> {
    (correct + wrong > 0)
        .then(|| (correct as f64 / (correct + wrong) as f64 * 10_000.0).round() / 10_000.0)
}

fn answer_key(m: &GradedMark) -> String {
    m.answer.clone().unwrap_or_else(|| "(empty)".into())
}

fn empty_slice() -> GradedSlice {
    GradedSlice {
        start_s: None,
        end_s: None,
        concurrency: None,
        rate: None,
        requests: 0,
        correct: 0,
        wrong: 0,
        accuracy: None,
        changed: 0,
    }
}

/// How often each graded prompt got each answer, by prompt.
type AnswerCounts = BTreeMap<String, BTreeMap<String, usize>>;

/// Counts the scored answers of the graded records by prompt.
fn answer_counts(graded: &[&SoakRecord]) -> AnswerCounts {
    let mut answers: AnswerCounts = BTreeMap::new();
    for m in graded
        .iter()
        .filter_map(|r| r.graded.as_ref())
        .filter(|m| m.correct.is_some())
    {
        *answers
            .entry(m.prompt.clone())
            .or_default()
            .entry(answer_key(m))
            .or_insert(0) += 1;
    }
    answers
}

/// Each prompt's most frequent answer.
fn usual_answers(answers: &AnswerCounts) -> BTreeMap<String, String> {
    answers
        .iter()
        .filter_map(|(p, h)| {
            h.iter()
                .max_by_key(|(_, n)| **n)
                .map(|(a, _)| (p.clone(), a.clone()))
        })
        .collect()
}

/// Answer stability over the prompts asked more than once.
fn stability(answers: &AnswerCounts) -> Stability {
    let repeated: Vec<(&String, &BTreeMap<String, usize>)> = answers
        .iter()
        .filter(|(_, h)| h.values().sum::<usize>() > 1)
        .collect();
    Stability {
        prompts: repeated.len(),
        stable: repeated.iter().filter(|(_, h)| h.len() == 1).count(),
        unstable: repeated
            .iter()
            .filter(|(_, h)| h.len() > 1)
            .map(|(p, h)| UnstablePrompt {
                prompt: (*p).clone(),
                answers: (*h).clone(),
            })
            .collect(),
    }
}

/// Graded accuracy in `WINDOWS` equal time windows over the planned duration.
fn graded_windows(
    meta: &SoakMeta,
    records: &[SoakRecord],
    graded: &[&SoakRecord],
    usual: &BTreeMap<String, String>,
) -> Vec<GradedSlice> {
    let steps_planned = meta
        .settings
        .rates
        .len()
        .max(meta.settings.levels.len())
        .max(1);
    let total = meta.settings.duration_s * steps_planned as f64;
    let width = (total / WINDOWS as f64).max(1.0);
    let last = records.iter().map(|r| r.sample.start_s).fold(0.0, f64::max);
    let count = ((last / width).floor() as usize + 1).min(10_000);
    (0..count)
        .map(|w| {
            let (a, b) = (w as f64 * width, (w + 1) as f64 * width);
            let mine: Vec<&SoakRecord> = graded
                .iter()
                .copied()
                .filter(|r| r.sample.start_s >= a && r.sample.start_s < b)
                .collect();
            slice(
                &mine,
                usual,
                GradedSlice {
                    start_s: Some(round2(a)),
                    end_s: Some(round2(b)),
                    ..empty_slice()
                },
            )
        })
        .collect()
}

/// Graded accuracy per step (concurrency level or rate).
fn graded_levels(
    steps: &[StepSummary],
    graded: &[&SoakRecord],
    usual: &BTreeMap<String, String>,
) -> Vec<GradedSlice> {
    steps
        .iter()
        .map(|s| {
            let mine: Vec<&SoakRecord> = graded
                .iter()
                .copied()
                .filter(|r| r.step == s.index)
                .collect();
            slice(
                &mine,
                usual,
                GradedSlice {
                    concurrency: s.concurrency,
                    rate: s.rate,
                    ..empty_slice()
                },
            )
        })
        .collect()
}

/// The graded summary, when the soak was graded.
fn graded(meta: &SoakMeta, records: &[SoakRecord], steps: &[StepSummary]) -> Option<GradedSummary> {
    meta.settings.graded_share?;
    let graded: Vec<&SoakRecord> = records.iter().filter(|r| r.graded.is_some()).collect();
    let answers = answer_counts(&graded);
    let usual = usual_answers(&answers);
    let all = slice(&graded, &usual, empty_slice());
    Some(GradedSummary {
        requests: all.requests,
        correct: all.correct,
        wrong: all.wrong,
        unscored: all.requests - all.correct - all.wrong,
        accuracy: all.accuracy,
        by_window: graded_windows(meta, records, &graded, &usual),
        by_level: graded_levels(steps, &graded, &usual),
        stability: stability(&answers),
    })
}

/// The sanity sweep's verdict, when one ran.
fn sanity(meta: &SoakMeta, steps: &[StepSummary], records: &[SoakRecord]) -> Option<Sanity> {
    if !meta.settings.sanity {
        return None;
    }
    let levels: Vec<SanityLevel> = steps
        .iter()
        .map(|s| {
            let wrong = records
                .iter()
                .filter(|r| r.step == s.index)
                .filter(|r| r.graded.as_ref().is_some_and(|g| g.correct == Some(false)))
                .filter(|r| r.sample.outcome == SampleOutcome::Ok)
                .count();
            let bad = s.errors + s.soft_empty + s.degenerate + wrong;
            SanityLevel {
                concurrency: s.concurrency,
                requests: s.requests,
                errors: s.errors,
                empty: s.soft_empty,
                degenerate: s.degenerate,
                wrong,
                bad,
            }
        })
        .collect();
    let bad = levels.iter().map(|l| l.bad).sum();
    Some(Sanity {
        levels,
        bad,
        passed: bad == 0,
    })
}

/// Goodput: the share and rate of requests that came back usable (content or tool calls, not
/// degenerate) within every latency objective given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Goodput {
    pub slo: Slo,
    /// Every request sent, failures included.
    pub requests: usize,
    pub within_slo: usize,
    pub within_slo_share: f64,
    /// Requests within the objectives per second of the soak's wall time.
    pub requests_per_s: f64,
    /// The latency model the per-token objective is checked against.
    pub fit: Option<Fit>,
}

/// A two-point fit of e2e ≈ a + b·tokens: `a` (fixed_ms) is the cost every request pays whatever
/// its length (queueing, prefill, overhead), `b` (per_token_ms) the latency per output token.
/// The points are the median latency and median completion tokens of the requests with the
/// shortest budget and of those with the longest. A request's per-token latency is then
/// (e2e − a) / tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    pub fixed_ms: f64,
    pub per_token_ms: f64,
    /// The budgets (max_tokens) of the two points.
    pub budgets: [u32; 2],
    /// How many requests each point is the median of.
    pub requests: [usize; 2],
}

/// The fit over usable answers, or None when there are not two budgets with different median
/// token counts.
pub fn fit(records: &[&SoakRecord]) -> Option<Fit> {
    let usable: Vec<&&SoakRecord> = records
        .iter()
        .filter(|r| usable(r) && r.tokens() > 0)
        .collect();
    let short = usable.iter().map(|r| r.max_tokens).min()?;
    let long = usable.iter().map(|r| r.max_tokens).max()?;
    let point = |budget: u32| {
        let mine: Vec<&&&SoakRecord> = usable.iter().filter(|r| r.max_tokens == budget).collect();
        let ms: Vec<f64> = mine.iter().map(|r| r.wall_ms()).collect();
        let tokens: Vec<f64> = mine.iter().map(|r| r.tokens() as f64).collect();
        Some((
            percentile(&tokens, 50.0)?,
            percentile(&ms, 50.0)?,
            mine.len(),
        ))
    };
    let (t1, e1, n1) = point(short)?;
    let (t2, e2, n2) = point(long)?;
    if t2 - t1 < 1.0 {
        return None;
    }
    let b = (e2 - e1) / (t2 - t1);
    Some(Fit {
        fixed_ms: round2(e1 - b * t1),
        per_token_ms: (b * 1000.0).round() / 1000.0,
        budgets: [short, long],
        requests: [n1, n2],
    })
}

/// Content or tool calls, and not a runaway repetition.
fn usable(r: &SoakRecord) -> bool {
    r.sample.outcome == SampleOutcome::Ok && !r.degenerate
}

/// Goodput of `records` over `wall_s` against `slo`; None without an objective.
fn goodput(
    slo: Slo,
    records: &[&SoakRecord],
    wall_s: f64,
    notes: &mut Vec<String>,
) -> Option<Goodput> {
    if !slo.any() {
        return None;
    }
    let fitted = fit(records);
    if slo.tpot_ms.is_some() && fitted.is_none() {
        notes.push(
            "goodput: no per-token fit (needs answers at two budgets with different lengths); \
             per-token latency taken as e2e / tokens, an upper bound"
                .into(),
        );
    }
    let fixed = fitted.as_ref().map(|f| f.fixed_ms).unwrap_or(0.0);
    let within = records
        .iter()
        .filter(|r| usable(r))
        .filter(|r| slo.e2e_ms.is_none_or(|max| r.wall_ms() <= max))
        .filter(|r| {
            slo.tpot_ms.is_none_or(|max| {
                let tokens = r.tokens();
                tokens > 0 && (r.wall_ms() - fixed) / tokens as f64 <= max
            })
        })
        .count();
    let n = records.len();
    Some(Goodput {
        slo,
        requests: n,
        within_slo: within,
        within_slo_share: if n == 0 {
            0.0
        } else {
            (within as f64 / n as f64 * 10_000.0).round() / 10_000.0
        },
        requests_per_s: if wall_s > 0.0 {
            round2(within as f64 / wall_s)
        } else {
            0.0
        },
        fit: fitted,
    })
}

/// One step of a sweep, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    pub index: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// Open loop: the rate asked for (req/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    pub start_s: f64,
    pub end_s: f64,
    pub requests: usize,
    pub errors: usize,
    pub soft_empty: usize,
    pub degenerate: usize,
    /// Open loop: arrivals the schedule generated per second of the step (sent and dropped),
    /// the offered load as it actually came out of the random schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_rps: Option<f64>,
    /// Answers per second: answered requests over the step's span from its start to its last
    /// answer, less the fastest answer's latency (a server that keeps up answers the last
    /// arrival about one latency after it came, so that span is the arrival window).
    pub achieved_rps: Option<f64>,
    /// Open loop: arrivals that waited for a slot under `--max-in-flight`, and the longest wait.
    pub delayed: usize,
    pub max_delay_ms: Option<f64>,
    /// Open loop: arrivals never sent because the step ended while they waited for a slot.
    pub dropped: u64,
    pub latency_ms: Option<Percentiles>,
    /// Why this step counts as saturated, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturated: Option<String>,
}

/// Where a rate sweep stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub rates: Vec<f64>,
    /// The rates that ran, in order.
    pub ran: Vec<f64>,
    /// The first saturated rate, when one was.
    pub saturated_at: Option<f64>,
    /// The highest rate the server kept up with.
    pub sustained: Option<f64>,
    /// One sentence: where the sweep stopped and why, or that every rate held.
    pub verdict: String,
}

/// Achieved throughput below this share of the offered rate counts as saturation.
pub const KEEP_UP: f64 = 0.9;
/// A median latency above this multiple of the first step's counts as latency running away.
pub const RUNAWAY: f64 = 3.0;

/// Summaries of every step in `meta.steps` (steps a kill cut short come from their records).
pub fn step_summaries(meta: &SoakMeta, records: &[SoakRecord]) -> Vec<StepSummary> {
    let mut indices: Vec<usize> = meta.steps.iter().map(|s| s.index).collect();
    indices.extend(records.iter().map(|r| r.step));
    indices.sort_unstable();
    indices.dedup();
    let open = !meta.settings.rates.is_empty();
    let mut out: Vec<StepSummary> = Vec::new();
    for index in indices {
        let mine: Vec<&SoakRecord> = records.iter().filter(|r| r.step == index).collect();
        let ran = meta.steps.iter().find(|s| s.index == index);
        let start_s = ran.map(|s| s.start_s).unwrap_or_else(|| {
            mine.iter()
                .map(|r| r.scheduled_s.unwrap_or(r.sample.start_s))
                .fold(f64::INFINITY, f64::min)
        });
        let end_s = ran
            .map(|s| s.end_s)
            .unwrap_or_else(|| mine.iter().map(|r| r.sample.end_s).fold(0.0, f64::max));
        let dropped = ran.map(|s| s.dropped).unwrap_or(0);
        let answered: Vec<&&SoakRecord> =
            mine.iter().filter(|r| r.sample.has_completion()).collect();
        let latencies: Vec<f64> = answered.iter().map(|r| r.wall_ms()).collect();
        let rate = if open {
            meta.settings.rates.get(index).copied()
        } else {
            None
        };
        let duration = meta.settings.duration_s;
        let offered_rps = open.then(|| round2((mine.len() as f64 + dropped as f64) / duration));
        let achieved_rps = achieved(start_s, &answered);
        let delays: Vec<f64> = mine
            .iter()
            .filter(|r| r.waited_for_slot)
            .filter_map(|r| {
                r.scheduled_s
                    .map(|s| (r.sample.start_s - s).max(0.0) * 1000.0)
            })
            .collect();
        let mut step = StepSummary {
            index,
            concurrency: ran
                .and_then(|s| s.concurrency)
                .or_else(|| meta.settings.levels.get(index).copied())
                .or((!open).then_some(meta.settings.concurrency)),
            rate,
            start_s: round2(start_s),
            end_s: round2(end_s),
            requests: mine.len(),
            errors: mine
                .iter()
                .filter(|r| r.sample.outcome == SampleOutcome::Error)
                .count(),
            soft_empty: mine
                .iter()
                .filter(|r| r.sample.outcome == SampleOutcome::SoftEmpty)
                .count(),
            degenerate: mine.iter().filter(|r| r.degenerate).count(),
            offered_rps,
            achieved_rps,
            delayed: mine.iter().filter(|r| r.waited_for_slot).count(),
            max_delay_ms: super::stats::max(&delays).map(round2),
            dropped,
            latency_ms: Percentiles::of(&latencies),
            saturated: None,
        };
        if open {
            let first_p50 = out.first().and_then(|s| s.latency_ms).map(|p| p.p50);
            step.saturated = saturation(&step, first_p50, meta.settings.max_in_flight);
        }
        out.push(step);
    }
    out
}

/// See [`StepSummary::achieved_rps`].
fn achieved(start_s: f64, answered: &[&&SoakRecord]) -> Option<f64> {
    let last = answered.iter().map(|r| r.sample.end_s).reduce(f64::max)?;
    let fastest = answered
        .iter()
        .map(|r| r.sample.end_s - r.sample.start_s)
        .reduce(f64::min)?;
    let span = last - start_s - fastest;
    (span > 0.0).then(|| round2(answered.len() as f64 / span))
}

/// Why an open-loop step is saturated: the cap on in-flight requests was reached, achieved
/// throughput fell below [`KEEP_UP`] of the offered rate, or the median latency grew past
/// [`RUNAWAY`] times the first step's. None when it kept up.
pub fn saturation(
    step: &StepSummary,
    first_p50: Option<f64>,
    cap: Option<usize>,
) -> Option<String> {
    if step.delayed > 0 || step.dropped > 0 {
        return Some(format!(
            "the cap of {} requests in flight was reached: {} arrival(s) waited for a slot, {} never sent",
            cap.map(|c| c.to_string()).unwrap_or_else(|| "?".into()),
            step.delayed,
            step.dropped
        ));
    }
    if let (Some(offered), Some(achieved)) = (step.offered_rps, step.achieved_rps) {
        if offered > 0.0 && achieved < KEEP_UP * offered {
            return Some(format!(
                "achieved {achieved:.2} req/s of the {offered:.2} req/s offered ({:.0}%, below {:.0}%)",
                achieved / offered * 100.0,
                KEEP_UP * 100.0
            ));
        }
    }
    if let (Some(first), Some(p50)) = (first_p50, step.latency_ms.map(|p| p.p50)) {
        if first > 0.0 && p50 > RUNAWAY * first {
            return Some(format!(
                "latency ran away: p50 {p50:.0} ms, over {RUNAWAY:.0}x the first rate's {first:.0} ms"
            ));
        }
    }
    if step.requests > 0 && step.errors * 2 > step.requests {
        return Some(format!(
            "{} of {} requests failed",
            step.errors, step.requests
        ));
    }
    None
}

/// The sweep's verdict from its steps.
fn sweep(meta: &SoakMeta, steps: &[StepSummary]) -> Option<Sweep> {
    let rates = &meta.settings.rates;
    if rates.is_empty() {
        return None;
    }
    let ran: Vec<f64> = steps.iter().filter_map(|s| s.rate).collect();
    let first_bad = steps.iter().find(|s| s.saturated.is_some());
    let sustained = steps
        .iter()
        .take_while(|s| s.saturated.is_none())
        .filter_map(|s| s.rate)
        .last();
    let verdict = match first_bad {
        Some(s) => {
            let rate = s.rate.unwrap_or(0.0);
            let left: Vec<String> = rates
                .iter()
                .skip(s.index + 1)
                .map(|r| format!("{r}"))
                .collect();
            format!(
                "saturated at {rate} req/s: {}{}{}",
                s.saturated.as_deref().unwrap_or(""),
                sustained
                    .map(|r| format!("; the last rate it kept up with was {r} req/s"))
                    .unwrap_or_else(|| "; it kept up with no rate tried".into()),
                if left.is_empty() {
                    String::new()
                } else {
                    format!("; not run: {} req/s", left.join(", "))
                }
            )
        }
        None if ran.len() < rates.len() => format!(
            "stopped after {} of {} rates ({}) without saturating",
            ran.len(),
            rates.len(),
            meta.status.report_label()
        ),
        None => format!(
            "kept up with every rate up to {} req/s",
            ran.last().copied().unwrap_or(0.0)
        ),
    };
    Some(Sweep {
        rates: rates.clone(),
        ran,
        saturated_at: first_bad.and_then(|s| s.rate),
        sustained,
        verdict,
    })
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

/// Completion tokens per second of each worker over its own active span (open loop has none).
fn per_worker_tps(meta: &SoakMeta, records: &[SoakRecord]) -> Vec<f64> {
    // Open loop (concurrency 0) has no workers.
    let workers = meta
        .settings
        .concurrency
        .max(if meta.settings.rates.is_empty() {
            records.iter().map(|r| r.worker + 1).max().unwrap_or(0)
        } else {
            0
        });
    (0..workers)
        .map(|w| {
            let mine: Vec<&SoakRecord> = records.iter().filter(|r| r.worker == w).collect();
            let start = mine.iter().map(|r| r.sample.start_s).reduce(f64::min);
            let end = mine.iter().map(|r| r.sample.end_s).reduce(f64::max);
            let tokens: u64 = mine.iter().map(|r| r.tokens()).sum();
            match (start, end) {
                (Some(s), Some(e)) if e > s => round2(tokens as f64 / (e - s)),
                _ => 0.0,
            }
        })
        .collect()
}

/// Failed requests counted by the label of their problem kind.
fn error_kinds(records: &[SoakRecord]) -> BTreeMap<String, usize> {
    let mut kinds = BTreeMap::new();
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
        *kinds.entry(kind).or_insert(0) += 1;
    }
    kinds
}

/// Aggregate completion tokens per second: the workers' sum, or for an open loop (no workers)
/// every completion token over the span from the first send to the last answer.
fn aggregate_tps(open: bool, records: &[SoakRecord], per_worker: &[f64]) -> f64 {
    if !open {
        return round2(per_worker.iter().sum());
    }
    let first = records.iter().map(|r| r.sample.start_s).reduce(f64::min);
    let last = records.iter().map(|r| r.sample.end_s).reduce(f64::max);
    let tokens: u64 = records.iter().map(|r| r.tokens()).sum();
    match (first, last) {
        (Some(a), Some(b)) if b > a => round2(tokens as f64 / (b - a)),
        _ => 0.0,
    }
}

/// Seconds from the first send to the last answer (0 without records).
fn active_span_s(records: &[SoakRecord]) -> f64 {
    let first = records
        .iter()
        .map(|r| r.sample.start_s)
        .reduce(f64::min)
        .unwrap_or(0.0);
    records.iter().map(|r| r.sample.end_s).fold(0.0, f64::max) - first
}

/// The first `EXAMPLES` requests that had a problem.
fn examples(records: &[SoakRecord]) -> Vec<Example> {
    records
        .iter()
        .filter_map(|r| problem(r).map(|p| (r, p)))
        .take(EXAMPLES)
        .map(|(r, problem)| Example {
            seq: r.seq,
            worker: r.worker,
            kind: r.kind,
            problem,
        })
        .collect()
}

/// Summarise the records of a soak. `skipped` lists unreadable journal lines.
pub fn soak_report_of(meta: &SoakMeta, records: &[SoakRecord], skipped: &[String]) -> SoakReport {
    let per_worker = per_worker_tps(meta, records);
    let answered: Vec<&SoakRecord> = records
        .iter()
        .filter(|r| r.sample.has_completion())
        .collect();
    let latencies: Vec<f64> = answered.iter().map(|r| r.wall_ms()).collect();
    let count = |o: SampleOutcome| records.iter().filter(|r| r.sample.outcome == o).count();
    let open = !meta.settings.rates.is_empty();
    let swept = open || meta.settings.levels.len() > 1;
    let all_steps = step_summaries(meta, records);
    let graded = graded(meta, records, &all_steps);
    let sanity = sanity(meta, &all_steps, records);
    let steps = if swept { all_steps } else { Vec::new() };
    let sweep = sweep(meta, &steps);
    let aggregate_tps = aggregate_tps(open, records, &per_worker);
    let mut notes: Vec<String> = skipped.to_vec();
    if meta.status == SoakStatus::Running {
        notes.push(
            "the soak did not end cleanly (killed?); this report covers what was journaled".into(),
        );
    }
    let all: Vec<&SoakRecord> = records.iter().collect();
    let goodput = goodput(meta.settings.slo, &all, active_span_s(records), &mut notes);
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
        aggregate_tps,
        per_worker_tps: per_worker,
        latency_ms: Percentiles::of(&latencies),
        errors: count(SampleOutcome::Error),
        error_kinds: error_kinds(records),
        soft_empty: count(SampleOutcome::SoftEmpty),
        degenerate: records.iter().filter(|r| r.degenerate).count(),
        by_kind: by_kind(records),
        examples: examples(records),
        steps,
        sweep,
        goodput,
        graded,
        sanity,
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

    fn step(offered: f64, achieved: f64, p50: f64) -> StepSummary {
        StepSummary {
            index: 1,
            concurrency: None,
            rate: Some(offered),
            start_s: 0.0,
            end_s: 10.0,
            requests: 100,
            errors: 0,
            soft_empty: 0,
            degenerate: 0,
            offered_rps: Some(offered),
            achieved_rps: Some(achieved),
            delayed: 0,
            max_delay_ms: None,
            dropped: 0,
            latency_ms: Percentiles::of(&[p50]),
            saturated: None,
        }
    }

    #[test]
    fn saturation_is_throughput_falling_behind_latency_running_away_or_the_cap() {
        assert_eq!(
            saturation(&step(10.0, 9.5, 100.0), Some(90.0), Some(8)),
            None
        );
        let why = saturation(&step(10.0, 8.0, 100.0), Some(90.0), Some(8)).unwrap();
        assert!(why.contains("achieved 8.00 req/s of the 10.00"), "{why}");
        let why = saturation(&step(10.0, 9.9, 400.0), Some(100.0), Some(8)).unwrap();
        assert!(why.contains("latency ran away"), "{why}");
        let mut capped = step(10.0, 10.0, 100.0);
        capped.delayed = 3;
        let why = saturation(&capped, None, Some(8)).unwrap();
        assert!(why.contains("cap of 8"), "{why}");
    }

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
