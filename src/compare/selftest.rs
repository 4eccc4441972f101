//! `coherence selftest`: negative and positive controls for one endpoint.
//!
//! The negative control compares the endpoint with itself under identical sampling: it must not
//! read `different` (if it does, the endpoint disagrees with itself beyond the margin and no
//! verdict against it can be trusted). The positive control compares it with itself at a higher
//! temperature on the second side only: a catalogue that can tell deployments apart should read
//! `different` there. The power line says how large a quality loss the catalogue at this size
//! detects, given the noise the negative control measured: with m flips each way between two
//! identical runs, the smallest k extra one-way losses for which the exact McNemar test of
//! (m + k, m) falls below 0.05, as a share of the graded prompts.

use std::path::Path;

use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{run_and_score, PipelineError};
use crate::analysis::{mcnemar_exact, Quality, QualityVerdict, Results};
use crate::probes::LoadPlan;
use crate::run::{PlannedEndpoint, RunPlan};
use crate::run_folder::{compare, write_atomic};

/// `selftest.json`.
pub const SELFTEST_FILE: &str = "selftest.json";

/// The two controls, in the order they run; each is a compare run in `DIR/<label>`.
pub const CONTROLS: [&str; 2] = ["negative", "positive"];

/// What `coherence selftest` found (`selftest.json`, `--json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Selftest {
    pub endpoint: String,
    pub negative: Control,
    pub positive: Control,
    /// The positive control read `different`: the catalogue at this size tells a perturbed
    /// deployment from this one on quality.
    pub sensitive: bool,
    /// The hotter side's texts matched the reference's as often as the twin's did, on most
    /// prompts: the endpoint seems to ignore `temperature`, and the positive control perturbed
    /// nothing (`transformers serve` with continuous batching did this on an H200).
    #[serde(default)]
    pub temperature_ignored: bool,
    pub power: Power,
}

/// One control run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Control {
    pub verdict: QualityVerdict,
    /// Its run folder.
    pub run: String,
    pub quality: Quality,
    /// Prompts whose two texts were identical.
    pub identical_texts: usize,
    pub prompts: usize,
}

/// The smallest quality difference the catalogue detects at this noise.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Power {
    pub graded: u64,
    /// Prompts whose correctness flipped between the two identical sides (either way).
    pub noise_flips: u64,
    /// In accuracy points; None when nothing was graded.
    pub min_detectable_points: Option<f64>,
}

/// The two control runs of a new selftest of the one endpoint `base` plans, in `base.dir`: the
/// endpoint against its twin, then against itself at `hot_temperature` (the second side only).
pub fn control_plans(base: &RunPlan, hot_temperature: f64) -> Result<[RunPlan; 2], PipelineError> {
    let [endpoint] = base.endpoints.as_slice() else {
        return Err(PipelineError::Input(anyhow!(
            "selftest takes exactly one endpoint; it is compared with itself"
        )));
    };
    if let Some(held) = CONTROLS
        .iter()
        .map(|label| base.dir.join(label))
        .find(|d| compare::folder(d).holds(compare::MANIFEST))
    {
        return Err(PipelineError::Input(anyhow!(
            "--out {}: {} already holds a control run; continue the selftest with --resume {}",
            base.dir.display(),
            held.display(),
            base.dir.display()
        )));
    }
    let second = |suffix: &str| {
        let mut e = endpoint.clone();
        e.spec.name = format!("{}-{suffix}", endpoint.spec.name);
        e
    };
    let mut hot = second("hot");
    hot.spec
        .sampling_override
        .insert("temperature".into(), Value::from(hot_temperature));
    Ok([
        control_plan(base, CONTROLS[0], [endpoint.clone(), second("twin")]),
        control_plan(base, CONTROLS[1], [endpoint.clone(), hot]),
    ])
}

/// `base` as a new compare run of `endpoints` in `base.dir/label`.
fn control_plan(base: &RunPlan, label: &str, endpoints: [PlannedEndpoint; 2]) -> RunPlan {
    RunPlan {
        dir: base.dir.join(label),
        previous: None,
        catalogue: base.catalogue.clone(),
        endpoints: endpoints.into(),
        send: base.send.clone(),
        scope: base.scope.clone(),
        repeats: base.repeats,
        control: base.control,
        control_max: base.control_max,
        logprobs_auto: base.logprobs_auto,
        repeat_order: base.repeat_order,
        max_tokens_override: base.max_tokens_override,
        sampling: base.sampling.clone(),
        concurrency: base.concurrency,
        client: base.client.clone(),
        quiet: base.quiet,
        fail_on: base.fail_on.clone(),
        margin: base.margin,
        identity_alpha: base.identity_alpha,
        reasoning_retry_budget: base.reasoning_retry_budget,
        until_decided: None,
        calibrate: base.calibrate,
        difficulty: Vec::new(),
        notes: base.notes.clone(),
    }
}

/// Run both controls (new, or resumed: `controls` are their plans, in [`CONTROLS`] order), then
/// write `dir/selftest.json`. A control left incomplete stops the selftest.
pub fn run(
    dir: &Path,
    controls: [RunPlan; 2],
    argv: Vec<String>,
) -> Result<Selftest, PipelineError> {
    let mut done = Vec::new();
    for (label, plan) in CONTROLS.iter().zip(&controls) {
        let (results, interrupted) = run_and_score(plan, &LoadPlan::default(), None, argv.clone())?;
        if interrupted || !results.complete {
            return Err(PipelineError::Incomplete(anyhow!(
                "the {label} control is incomplete; continue with coherence selftest --resume {}",
                dir.display()
            )));
        }
        done.push(control(&results, &plan.dir)?);
    }
    let [negative, positive]: [Control; 2] = done
        .try_into()
        .map_err(|_| PipelineError::Incomplete(anyhow!("two controls were not run")))?;
    let report = Selftest {
        endpoint: negative.quality.reference.clone(),
        sensitive: positive.verdict == QualityVerdict::Different,
        temperature_ignored: temperature_ignored(&negative, &positive),
        power: power(&negative.quality),
        negative,
        positive,
    };
    write_atomic(&dir.join(SELFTEST_FILE), report.json().as_bytes())
        .map_err(PipelineError::Incomplete)?;
    Ok(report)
}

fn control(results: &Results, dir: &Path) -> Result<Control, PipelineError> {
    let quality = results.quality.first().cloned().ok_or_else(|| {
        PipelineError::Incomplete(anyhow!("{}: no quality comparison", dir.display()))
    })?;
    Ok(Control {
        verdict: quality.verdict,
        run: dir.display().to_string(),
        identical_texts: results.identity.first().map_or(0, |i| i.identical),
        prompts: results.prompts.len(),
        quality,
    })
}

/// The hotter side agreed with the reference at least as often as the twin, and the twin on most
/// prompts (with a twin that rarely agrees, the count cannot tell).
fn temperature_ignored(negative: &Control, positive: &Control) -> bool {
    2 * negative.identical_texts > negative.prompts
        && positive.identical_texts >= negative.identical_texts
}

fn power(negative: &Quality) -> Power {
    let graded = negative.graded;
    let noise_flips = negative.reference_only + negative.other_only;
    let each_way = noise_flips.div_ceil(2);
    let k = (1..=graded).find(|k| mcnemar_exact(each_way + k, each_way) < 0.05);
    Power {
        graded,
        noise_flips,
        min_detectable_points: k.map(|k| 100.0 * k as f64 / graded as f64),
    }
}

impl Selftest {
    /// The endpoint reads `different` from itself: verdicts against it cannot be trusted.
    pub fn failed(&self) -> bool {
        self.negative.verdict == QualityVerdict::Different
    }

    /// `selftest.json` as written (and printed with `--json`).
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The summary printed without `--json`; `dir` is the selftest's folder.
    pub fn summary(&self, dir: &Path) -> String {
        let line = |what: &str, c: &Control| {
            let d = &c.quality.difference;
            format!(
                "{what}: {} (accuracy difference {:+.1} points, 90% CI {:+.1} to {:+.1}, p = {:.3}; {} of {} texts identical)\n",
                c.verdict.as_str(),
                100.0 * d.estimate,
                100.0 * d.low,
                100.0 * d.high,
                c.quality.p_value,
                c.identical_texts,
                c.prompts
            )
        };
        let mut out = format!("selftest of `{}`\n", self.endpoint);
        out += &line("negative control (itself)", &self.negative);
        out += &line("positive control (itself, hotter)", &self.positive);
        out += if self.failed() {
            "FAILED: the endpoint reads `different` from itself; verdicts against it cannot be trusted.\n"
        } else if self.sensitive {
            "the catalogue at this size tells the perturbed deployment apart on quality.\n"
        } else if self.temperature_ignored {
            "not perturbed: the hotter side's texts matched the reference's as often as the twin's: \
             the endpoint seems to ignore `temperature` (check with coherence contract, probe \
             temperature_honoured), so the positive control says nothing of the catalogue's \
             sensitivity.\n"
        } else {
            "not sensitive: at this size the catalogue cannot tell the perturbed deployment apart on \
             quality (only its texts changed); run more prompts or repeats.\n"
        };
        out += &match self.power.min_detectable_points {
            Some(p) => format!(
                "power: with {} noise flip(s) over {} graded prompts, a deployment that loses about {p:.1} accuracy points reads `different`.\n",
                self.power.noise_flips, self.power.graded
            ),
            None => "power: nothing graded; no estimate.\n".to_string(),
        };
        out + &format!("selftest: {}\n", dir.join(SELFTEST_FILE).display())
    }
}
