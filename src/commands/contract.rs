//! `coherence contract`: run the API-contract probes on every endpoint given, side by side.

use serde_json::json;

use super::flags::{client_options, endpoint_specs, with_keys};
use super::stdout;
use crate::cli::ContractArgs;
use crate::contract::{check, EndpointContract, Status, PROBES};
use crate::doc::visible;
use crate::error::{CliError, Exit, UsageContext};
use crate::report::markdown_table;

/// Exit 0 when no probe failed, 1 when one did, 3 when an endpoint could not be probed.
pub fn contract(args: &ContractArgs) -> Result<Exit, CliError> {
    let specs = endpoint_specs(&args.endpoints, Vec::new()).usage_err()?;
    if specs.is_empty() {
        return Err(CliError::usage(anyhow::anyhow!(
            "--endpoint: give at least one NAME=URL"
        )));
    }
    let endpoints = with_keys(specs).usage_err()?;
    let opts = client_options(&args.client).usage_err()?;
    let rt = super::runtime()?;
    let results: Vec<EndpointContract> = rt.block_on(futures::future::join_all(
        endpoints.iter().map(|e| check(e, &opts, args.deadline)),
    ));
    if args.json {
        let out = json!({"endpoints": results});
        stdout::print(&(serde_json::to_string_pretty(&out).map_err(CliError::output)? + "\n"))?;
    } else {
        stdout::print(&describe(&results))?;
    }
    Ok(if results.iter().any(|r| r.error.is_some()) {
        Exit::Incomplete
    } else if results.iter().any(EndpointContract::failed) {
        Exit::GateFailed
    } else {
        Exit::Success
    })
}

/// A table of probes by endpoint, then the evidence of every probe that did not pass.
fn describe(results: &[EndpointContract]) -> String {
    let mut headers = vec!["probe"];
    headers.extend(results.iter().map(|r| r.name.as_str()));
    let rows: Vec<Vec<String>> = PROBES
        .iter()
        .map(|(probe, _)| {
            let mut row = vec![probe.to_string()];
            row.extend(results.iter().map(|r| {
                r.probes
                    .iter()
                    .find(|p| p.probe == *probe)
                    .map_or("-", |p| p.status.label())
                    .to_string()
            }));
            row
        })
        .collect();
    let mut text = markdown_table(&headers, &rows);
    for r in results {
        // The model, the error and the evidence quote the server: shown visible, so that none
        // of its bytes drives the terminal.
        let model = visible(r.model.as_deref().unwrap_or("?"));
        text.push_str(&format!(
            "\n{} ({}, model {model}):\n",
            visible(&r.name),
            visible(&r.base_url)
        ));
        if let Some(e) = &r.error {
            text.push_str(&format!("  not probed: {}\n", visible(e)));
            continue;
        }
        let (passed, total) = (
            r.probes.iter().filter(|p| p.status == Status::Pass).count(),
            r.probes.len(),
        );
        text.push_str(&format!("  {passed} of {total} probes passed\n"));
        for p in r.probes.iter().filter(|p| p.status != Status::Pass) {
            text.push_str(&format!(
                "  {} {}: {}\n",
                p.status.label(),
                p.probe,
                visible(&p.evidence)
            ));
        }
    }
    text
}
