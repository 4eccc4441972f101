//! `--baseline FILE.json`: published claims or an earlier `bench.json`, compared metric by metric
//! with this run ("claim vs measured vs delta").
//!
//! A claims file is a JSON object with an optional `source` and a `claims` map from metric key to
//! number:
//!
//! ```json
//! {"source": "guide, Patch 4",
//!  "claims": {"decode.peak_tps": 84.3, "decode.mean_tps": 67.6,
//!             "concurrency.c1.aggregate_tps": 61.0, "concurrency.c6.aggregate_tps": 197.3,
//!             "prefill.8k.prompt_tps": 1513, "spec_decode.acceptance": 0.602}}
//! ```
//!
//! Keys: `decode.{peak_tps,mean_tps,cold_tps}`, `concurrency.c<N>.{aggregate_tps,per_stream_tps,
//! cold_aggregate_tps}`, `prefill.<SIZE>.{prompt_tps,ttft_ms}` (SIZE like `8k` or `8192`) and
//! `spec_decode.acceptance` (a fraction, or a percentage when above 1).

use std::path::Path;

use anyhow::{anyhow, bail, Context};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::sizes::token_count;
use super::stats::round2;

const DECODE: &[&str] = &["peak_tps", "mean_tps", "cold_tps"];
const CONCURRENCY: &[&str] = &["aggregate_tps", "per_stream_tps", "cold_aggregate_tps"];
const PREFILL: &[&str] = &["prompt_tps", "ttft_ms"];

/// Numbers to compare against, keyed like [`flatten`]'s output.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub source: String,
    pub values: Vec<(String, f64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub source: String,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub metric: String,
    pub claim: f64,
    /// None when this run did not measure the metric.
    pub measured: Option<f64>,
    /// (measured − claim) / claim, in percent.
    pub delta_pct: Option<f64>,
}

impl Baseline {
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).context("cannot read the file")?;
        let json: Value = serde_json::from_str(&text).context("not valid JSON")?;
        Self::from_json(&json, &path.display().to_string())
    }

    /// A claims file (`{"claims": {...}}`) or a `bench.json` written by `coherence bench`.
    pub fn from_json(json: &Value, file: &str) -> anyhow::Result<Self> {
        if let Some(claims) = json.get("claims") {
            let claims = claims
                .as_object()
                .ok_or_else(|| anyhow!("`claims` must be an object of metric: number"))?;
            let mut values = Vec::new();
            for (key, v) in claims {
                let n = v
                    .as_f64()
                    .ok_or_else(|| anyhow!("claim `{key}` must be a number"))?;
                let key = normalize_key(key)?;
                let n = if key == "spec_decode.acceptance" && n > 1.0 {
                    n / 100.0
                } else {
                    n
                };
                values.push((key, n));
            }
            let source = json
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or(file)
                .to_string();
            return Ok(Baseline { source, values });
        }
        if json.get("decode").is_some() || json.get("concurrency").is_some() {
            let when = json
                .get("started_at")
                .and_then(Value::as_str)
                .map(|t| format!(" ({t})"))
                .unwrap_or_default();
            return Ok(Baseline {
                source: format!("{file}{when}"),
                values: flatten(json),
            });
        }
        bail!(
            "expected a claims file ({{\"claims\": {{...}}}}) or a bench.json from coherence bench"
        )
    }
}

/// Every comparable number of a bench report (as JSON), keyed `decode.peak_tps`,
/// `concurrency.c4.aggregate_tps`, `prefill.8192.prompt_tps`, `spec_decode.acceptance`...
pub fn flatten(report: &Value) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut push = |key: String, v: Option<&Value>| {
        if let Some(n) = v.and_then(Value::as_f64) {
            out.push((key, n));
        }
    };
    if let Some(d) = report.get("decode") {
        for m in DECODE {
            push(format!("decode.{m}"), d.get(*m));
        }
    }
    for c in report
        .get("concurrency")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(n) = c.get("n").and_then(Value::as_u64) else {
            continue;
        };
        for m in CONCURRENCY {
            push(format!("concurrency.c{n}.{m}"), c.get(*m));
        }
    }
    for p in report
        .get("prefill")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(t) = p.get("tokens").and_then(Value::as_u64) else {
            continue;
        };
        for m in PREFILL {
            push(format!("prefill.{t}.{m}"), p.get(*m));
        }
    }
    push(
        "spec_decode.acceptance".into(),
        report.pointer("/spec_decode/acceptance"),
    );
    out
}

/// The canonical form of a claim key, or an error listing the accepted keys.
fn normalize_key(key: &str) -> anyhow::Result<String> {
    let parts: Vec<&str> = key.split('.').collect();
    let known = |list: &[&str], m: &str| list.contains(&m);
    let normal = match parts.as_slice() {
        ["decode", m] if known(DECODE, m) => Some(key.to_string()),
        ["concurrency", n, m] if known(CONCURRENCY, m) => n
            .trim_start_matches('c')
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .map(|n| format!("concurrency.c{n}.{m}")),
        ["prefill", size, m] if known(PREFILL, m) => {
            token_count(size).map(|t| format!("prefill.{t}.{m}"))
        }
        ["spec_decode", "acceptance"] => Some(key.to_string()),
        _ => None,
    };
    normal.ok_or_else(|| {
        anyhow!(
            "unknown claim `{key}`; use decode.{{{}}}, concurrency.c<N>.{{{}}}, prefill.<SIZE>.{{{}}} or spec_decode.acceptance",
            DECODE.join(","),
            CONCURRENCY.join(","),
            PREFILL.join(",")
        )
    })
}

/// One row per baseline number, in the baseline's order.
pub fn compare(baseline: &Baseline, measured: &[(String, f64)]) -> Comparison {
    let rows = baseline
        .values
        .iter()
        .map(|(metric, claim)| {
            let m = measured.iter().find(|(k, _)| k == metric).map(|(_, v)| *v);
            Row {
                metric: metric.clone(),
                claim: *claim,
                measured: m,
                delta_pct: m
                    .filter(|_| *claim != 0.0)
                    .map(|m| round2((m - claim) / claim * 100.0)),
            }
        })
        .collect();
    Comparison {
        source: baseline.source.clone(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claims_are_normalised_and_compared() {
        let b = Baseline::from_json(
            &json!({"source": "guide", "claims": {
                "decode.peak_tps": 84.3, "concurrency.4.aggregate_tps": 151.1,
                "prefill.8k.prompt_tps": 1513, "spec_decode.acceptance": 60.2}}),
            "f.json",
        )
        .unwrap();
        assert_eq!(b.source, "guide");
        let keys: Vec<&str> = b.values.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "decode.peak_tps",
                "concurrency.c4.aggregate_tps",
                "prefill.8192.prompt_tps",
                "spec_decode.acceptance"
            ]
        );
        assert!((b.values[3].1 - 0.602).abs() < 1e-9);
        let c = compare(
            &b,
            &[
                ("decode.peak_tps".into(), 84.1),
                ("prefill.8192.prompt_tps".into(), 1620.0),
            ],
        );
        assert_eq!(c.rows[0].delta_pct, Some(-0.24));
        assert_eq!(c.rows[1].measured, None);
        assert_eq!(c.rows[2].delta_pct, Some(7.07));
    }

    #[test]
    fn unknown_keys_are_refused_with_the_list() {
        let err = Baseline::from_json(&json!({"claims": {"decode.fast": 1}}), "f")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("decode.fast") && err.contains("peak_tps"),
            "{err}"
        );
        assert!(Baseline::from_json(&json!({"hello": 1}), "f").is_err());
    }

    #[test]
    fn a_bench_report_flattens_to_the_same_keys() {
        let report = json!({
            "decode": {"peak_tps": 80.0, "mean_tps": 70.0, "cold_tps": null},
            "concurrency": [{"n": 2, "aggregate_tps": 100.0, "per_stream_tps": 50.0}],
            "prefill": [{"tokens": 8192, "ttft_ms": 5000.0, "prompt_tps": 1600.0}],
            "spec_decode": {"acceptance": 0.63}
        });
        let flat = flatten(&report);
        assert!(flat.contains(&("concurrency.c2.per_stream_tps".into(), 50.0)));
        assert!(flat.contains(&("prefill.8192.ttft_ms".into(), 5000.0)));
        assert!(flat.contains(&("spec_decode.acceptance".into(), 0.63)));
        assert!(!flat.iter().any(|(k, _)| k == "decode.cold_tps"));
        let b = Baseline::from_json(&report, "old/bench.json").unwrap();
        assert_eq!(b.values, flat);
    }
}
