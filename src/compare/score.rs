//! Score a run folder: read its inputs once, build the results, write results.json and the
//! reports. The last step of every run, and all of `coherence score`; `coherence report`
//! re-renders from results.json alone.

use std::path::Path;

use super::PipelineError;
use crate::analysis::{analyze, Inputs, Results};
use crate::catalogue::Catalogue;
use crate::gate::Gate;
use crate::report;
use crate::run::Manifest;
use crate::run_folder::compare;

/// Score the run in `dir` with `catalogue`, apply `gate` at `margin`, write results.json and the
/// reports. `warnings` are notes met while sending (unreadable journal lines).
pub fn score_run(
    dir: &Path,
    catalogue: &Catalogue,
    manifest: &Manifest,
    gate: &Gate,
    margin: f64,
    warnings: Vec<String>,
) -> Result<Results, PipelineError> {
    let inputs =
        Inputs::read(dir, manifest, catalogue, warnings).map_err(PipelineError::Incomplete)?;
    let results = analyze(&inputs, gate, margin);
    // The records are not needed to render: free them first, so a long run's peak memory is the
    // larger of the two steps, not their sum.
    drop(inputs);
    report::write_all(dir, &results).map_err(PipelineError::Incomplete)?;
    Ok(results)
}

/// Re-render the reports of the run in `dir` from its results.json, which must be of a layout
/// this build reads.
pub fn rerender(dir: &Path) -> Result<Results, PipelineError> {
    let results = report::read_results(dir).map_err(PipelineError::Input)?;
    results.check_version().map_err(|e| {
        PipelineError::Input(anyhow::anyhow!(
            "{}: {e}",
            compare::folder(dir).file(compare::RESULTS).display()
        ))
    })?;
    report::write_rendered(dir, &results).map_err(PipelineError::Incomplete)?;
    Ok(results)
}
