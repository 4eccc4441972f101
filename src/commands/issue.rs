//! `coherence report RUN_DIR --issue PROMPT_ID|all-different`: the run folder read back
//! (manifest, results.json, records, catalogue) and a Markdown bug report printed to stdout.

use anyhow::anyhow;

use super::score::catalogue_for_run;
use super::stdout;
use crate::cli::ReportArgs;
use crate::error::{CliError, Exit, UsageContext};
use crate::report;
use crate::report::issue::{render, IssueChoice, IssueRun};
use crate::run::{journal, Manifest};

pub fn issue(args: &ReportArgs, which: &str) -> Result<Exit, CliError> {
    let manifest = Manifest::read(&args.run).map_err(CliError::unreadable)?;
    let results = report::read_results(&args.run).map_err(CliError::unreadable)?;
    let catalogue = catalogue_for_run(None, &manifest).usage_err()?;
    let loaded = journal::load(&args.run).map_err(CliError::unreadable)?;
    let run = IssueRun {
        dir: &args.run,
        manifest: &manifest,
        results: &results,
        catalogue: &catalogue,
        records: &loaded.records,
    };
    let text = render(&run, &IssueChoice::parse(which)).map_err(|e| CliError::usage(anyhow!(e)))?;
    stdout::print_verbatim(&text)?;
    Ok(Exit::Success)
}
