//! `coherence smoke`: list models and run the exact-reply chat on every endpoint given.

use serde_json::json;

use super::bench_plan::plan_smoke;
use super::stdout;
use crate::bench::smoke::{smoke as check, SmokeResult, SmokeVerdict, PHRASE};
use crate::cli::SmokeArgs;
use crate::error::{CliError, Exit, UsageContext};

/// Exit 0 when every endpoint passes, 3 when one cannot be reached, else 1 (a wrong reply).
pub fn smoke(args: &SmokeArgs) -> Result<Exit, CliError> {
    let plan = plan_smoke(args).usage_err()?;
    let rt = super::runtime()?;
    let results: Vec<SmokeResult> = rt.block_on(futures::future::join_all(
        plan.endpoints
            .iter()
            .map(|e| check(e, &plan.client, plan.max_tokens)),
    ));
    let passed = results.iter().all(|r| r.verdict == SmokeVerdict::Pass);
    if plan.json {
        let out = json!({"phrase": PHRASE, "passed": passed, "endpoints": results});
        stdout::print(&(serde_json::to_string_pretty(&out).map_err(CliError::output)? + "\n"))?;
    } else {
        stdout::print(&results.iter().map(describe).collect::<String>())?;
    }
    Ok(
        if results
            .iter()
            .any(|r| r.verdict == SmokeVerdict::Unreachable)
        {
            Exit::Incomplete
        } else if passed {
            Exit::Success
        } else {
            Exit::GateFailed
        },
    )
}

/// One endpoint's lines of the summary.
fn describe(r: &SmokeResult) -> String {
    let models = if r.models.is_empty() {
        "no models listed".to_string()
    } else {
        format!("models {}", r.models.join(", "))
    };
    let len = r
        .max_model_len
        .map(|n| format!(", max_model_len {n}"))
        .unwrap_or_default();
    let mut text = format!("{} ({}): {models}{len}\n", r.name, r.base_url);
    for n in &r.notes {
        text.push_str(&format!("  note: {n}\n"));
    }
    text.push_str(&match r.verdict {
        SmokeVerdict::Pass => format!(
            "  PASS: `{PHRASE}` from {} in {:.0} ms\n",
            r.model.as_deref().unwrap_or("?"),
            r.latency_ms.unwrap_or(0.0)
        ),
        _ => format!(
            "  FAIL: {}\n",
            r.reason.as_deref().unwrap_or("no reason recorded")
        ),
    });
    text
}
