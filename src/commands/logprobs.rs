//! `coherence logprobs`: resolve the endpoints, run the token-level evidence, print or write it.

use anyhow::anyhow;

use super::flags;
use crate::cli::LogprobsArgs;
use crate::error::{CliError, Exit, UsageContext};
use crate::logprobs::{self, corpus, report, run, LogprobsSettings, EVIDENCE_JSON, EVIDENCE_MD};

/// Exit 0 when everything was measured, 3 when an endpoint or a request could not be.
pub fn logprobs(args: &LogprobsArgs) -> Result<Exit, CliError> {
    let specs = flags::endpoint_specs(&args.endpoints, Vec::new()).usage_err()?;
    if specs.is_empty() {
        return Err(CliError::usage(anyhow!(
            "give at least one --endpoint NAME=URL (two or more to compare; the first is the reference)"
        )));
    }
    let endpoints = flags::with_keys(specs).usage_err()?;
    let options = flags::client_options(&args.client).usage_err()?;
    let mut passages = corpus::load(args.corpus.as_deref()).usage_err()?;
    if let Some(n) = args.limit {
        passages.truncate(n);
    }
    let settings = LogprobsSettings {
        top_k: args.top_k,
        concurrency: args.concurrency,
        self_check_tokens: args.self_check_tokens,
        self_check_prompts: LogprobsSettings::plain_self_check(),
    };
    let folder = args.out.as_deref().map(logprobs::folder);
    if let Some(folder) = &folder {
        folder.create().usage_err()?;
    }
    let rt = super::runtime()?;
    let evidence = rt.block_on(async {
        let targets = crate::run::resolve_targets(&endpoints, &options).await?;
        let targets: Vec<_> = targets.into_iter().map(|(t, _)| t).collect();
        Ok::<_, CliError>(run(&targets, &passages, &settings).await)
    })?;
    let json = serde_json::to_string_pretty(&evidence).map_err(CliError::usage)? + "\n";
    let md = report::markdown(&evidence);
    if let Some(folder) = &folder {
        folder
            .write(EVIDENCE_JSON, json.as_bytes())
            .and_then(|()| folder.write(EVIDENCE_MD, md.as_bytes()))
            .map_err(CliError::output)?;
    }
    super::stdout::print(if args.json { &json } else { &md })?;
    if evidence.incomplete() {
        for e in evidence.endpoints.iter().filter(|e| !e.usable) {
            eprintln!(
                "error: endpoint {}: no usable prompt logprobs: {}",
                e.name,
                e.notes.join("; ")
            );
        }
        let failed = evidence
            .problems
            .iter()
            .filter(|p| p.kind == "request")
            .count();
        if failed > 0 {
            eprintln!("error: {failed} scoring request(s) failed (listed in the report)");
        }
        Ok(Exit::Incomplete)
    } else {
        Ok(Exit::Success)
    }
}
