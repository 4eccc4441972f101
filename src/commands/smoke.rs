//! `coherence smoke`: list models and run the exact-reply chat on every endpoint given.

use serde_json::json;

use super::bench_plan::plan_smoke;
use crate::bench::smoke::{smoke as check, SmokeResult, SmokeVerdict, PHRASE};
use crate::cli::SmokeArgs;
use crate::error::{CliError, Exit, UsageContext};

/// Exit 0 when every endpoint passes, 3 when one cannot be reached, else 1 (a wrong reply).
pub fn smoke(args: &SmokeArgs) -> Result<Exit, CliError> {
    let plan = plan_smoke(args).usage_err()?;
    let rt = super::runtime().usage_err()?;
    let results: Vec<SmokeResult> = rt.block_on(futures::future::join_all(
        plan.endpoints
            .iter()
            .map(|e| check(e, &plan.client, plan.max_tokens)),
    ));
    let passed = results.iter().all(|r| r.verdict == SmokeVerdict::Pass);
    if plan.json {
        let out = json!({"phrase": PHRASE, "passed": passed, "endpoints": results});
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serialises")
        );
    } else {
        for r in &results {
            print_result(r);
        }
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

fn print_result(r: &SmokeResult) {
    let models = if r.models.is_empty() {
        "no models listed".to_string()
    } else {
        format!("models {}", r.models.join(", "))
    };
    let len = r
        .max_model_len
        .map(|n| format!(", max_model_len {n}"))
        .unwrap_or_default();
    println!("{} ({}): {models}{len}", r.name, r.base_url);
    for n in &r.notes {
        println!("  note: {n}");
    }
    match r.verdict {
        SmokeVerdict::Pass => println!(
            "  PASS: `{PHRASE}` from {} in {:.0} ms",
            r.model.as_deref().unwrap_or("?"),
            r.latency_ms.unwrap_or(0.0)
        ),
        _ => println!(
            "  FAIL: {}",
            r.reason.as_deref().unwrap_or("no reason recorded")
        ),
    }
}
