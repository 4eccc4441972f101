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

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::compare::{plan_compare, run_and_score, Mode};
use super::flags::split_pair;
use super::stdout;
use crate::analysis::{mcnemar_exact, Quality, QualityVerdict, Results};
use crate::cli::{CompareArgs, SelftestArgs};
use crate::error::{CliError, Exit, UsageContext};
use crate::load::LoadPlan;
use crate::run_folder::{new_run_dir, write_atomic};

/// `selftest.json`.
pub const SELFTEST_FILE: &str = "selftest.json";

/// What `coherence selftest` found (`selftest.json`, `--json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Selftest {
    pub endpoint: String,
    pub negative: Control,
    pub positive: Control,
    /// The positive control read `different`: the catalogue at this size tells a perturbed
    /// deployment from this one on quality.
    pub sensitive: bool,
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

pub fn selftest(args: &SelftestArgs, argv: Vec<String>) -> Result<Exit, CliError> {
    let base = &args.run;
    let resuming = base.resume.is_some();
    let (name, url) = match (base.endpoints.endpoints.as_slice(), resuming) {
        ([one], _) => {
            let (n, u) = split_pair("--endpoint", one, "NAME=URL").usage_err()?;
            (n.to_string(), u.to_string())
        }
        ([], true) => (String::new(), String::new()),
        _ => {
            return Err(CliError::usage(anyhow!(
                "--endpoint: selftest takes exactly one endpoint (NAME=URL); it is compared with itself"
            )))
        }
    };
    if !(args.hot_temperature.is_finite() && args.hot_temperature > 0.0) {
        return Err(CliError::usage(anyhow!(
            "--hot-temperature {}: give a temperature above 0",
            args.hot_temperature
        )));
    }
    let dir: PathBuf = base
        .resume
        .clone()
        .or_else(|| base.out.clone())
        .unwrap_or_else(|| new_run_dir(Some("selftest"), &[&name]));
    let mut controls = Vec::new();
    for (label, second, hot) in [
        ("negative", format!("{name}-twin"), None),
        (
            "positive",
            format!("{name}-hot"),
            Some(args.hot_temperature),
        ),
    ] {
        let run_args = control_args(base, &dir.join(label), &name, &url, &second);
        let mut plan = plan_compare(&run_args, Mode::Compare).usage_err()?;
        if let (Some(t), false) = (hot, resuming) {
            plan.endpoints[1]
                .spec
                .sampling_override
                .insert("temperature".into(), Value::from(t));
        }
        let (results, interrupted) =
            run_and_score(&plan, &LoadPlan::default(), None, argv.clone())?;
        if interrupted || !results.complete {
            return Err(CliError::incomplete(anyhow!(
                "the {label} control is incomplete; continue with coherence selftest --resume {}",
                dir.display()
            )));
        }
        controls.push(control(&results, &plan.dir)?);
    }
    let positive = controls.pop().expect("two controls");
    let negative = controls.pop().expect("two controls");
    let name = if name.is_empty() {
        negative.quality.reference.clone()
    } else {
        name
    };
    let report = Selftest {
        endpoint: name,
        sensitive: positive.verdict == QualityVerdict::Different,
        power: power(&negative.quality),
        negative,
        positive,
    };
    let json = serde_json::to_string_pretty(&report).expect("selftest serialises") + "\n";
    write_atomic(&dir.join(SELFTEST_FILE), json.as_bytes()).map_err(CliError::output)?;
    stdout::print(&if base.json {
        json
    } else {
        summary(&report, &dir)
    })?;
    Ok(if report.negative.verdict == QualityVerdict::Different {
        Exit::GateFailed
    } else {
        Exit::Success
    })
}

/// The compare flags of one control: the endpoint, then its second self under another name.
fn control_args(
    base: &CompareArgs,
    dir: &Path,
    name: &str,
    url: &str,
    second: &str,
) -> CompareArgs {
    let mut a = base.clone();
    // The controls print nothing of their own; selftest prints the summary or selftest.json.
    a.json = false;
    if base.resume.is_some() {
        a.resume = Some(dir.to_path_buf());
        return a;
    }
    a.out = Some(dir.to_path_buf());
    a.endpoints.endpoints = vec![format!("{name}={url}"), format!("{second}={url}")];
    let twin = |flags: &[String]| -> Vec<String> {
        flags
            .iter()
            .flat_map(|f| {
                let value = f.split_once('=').map(|(_, v)| v).unwrap_or_default();
                [f.clone(), format!("{second}={value}")]
            })
            .collect()
    };
    a.endpoints.models = twin(&base.endpoints.models);
    a.endpoints.api_key_envs = twin(&base.endpoints.api_key_envs);
    a.quiet = base.quiet;
    a
}

fn control(results: &Results, dir: &Path) -> Result<Control, CliError> {
    let quality =
        results.quality.first().cloned().ok_or_else(|| {
            CliError::incomplete(anyhow!("{}: no quality comparison", dir.display()))
        })?;
    Ok(Control {
        verdict: quality.verdict,
        run: dir.display().to_string(),
        identical_texts: results.identity.first().map_or(0, |i| i.identical),
        prompts: results.prompts.len(),
        quality,
    })
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

fn summary(r: &Selftest, dir: &Path) -> String {
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
    let mut out = format!("selftest of `{}`\n", r.endpoint);
    out += &line("negative control (itself)", &r.negative);
    out += &line("positive control (itself, hotter)", &r.positive);
    out += &if r.negative.verdict == QualityVerdict::Different {
        "FAILED: the endpoint reads `different` from itself; verdicts against it cannot be trusted.\n".to_string()
    } else if r.sensitive {
        "the catalogue at this size tells the perturbed deployment apart on quality.\n".to_string()
    } else {
        "not sensitive: at this size the catalogue cannot tell the perturbed deployment apart on \
         quality (only its texts changed); run more prompts or repeats.\n"
            .to_string()
    };
    out += &match r.power.min_detectable_points {
        Some(p) => format!(
            "power: with {} noise flip(s) over {} graded prompts, a deployment that loses about {p:.1} accuracy points reads `different`.\n",
            r.power.noise_flips, r.power.graded
        ),
        None => "power: nothing graded; no estimate.\n".to_string(),
    };
    out + &format!("selftest: {}\n", dir.join(SELFTEST_FILE).display())
}
