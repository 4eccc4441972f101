//! `coherence score RUN_DIR` and `coherence report RUN_DIR`: offline re-scoring and re-rendering
//! (flags to the run's catalogue, gate and margin; results to the summary and the exit code).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::compare_plan::resolve_gate;
use super::flags::load_catalogue_for;
use super::stdout;
use crate::analysis::{same_model_headline, Results, DEFAULT_MARGIN_POINTS};
use crate::catalogue::Catalogue;
use crate::cli::{ReportArgs, ScoreArgs};
use crate::compare::score::{rerender, score_run};
use crate::error::{CliError, Exit, UsageContext};
use crate::gate::Gate;
use crate::report;
use crate::run::Manifest;
use crate::run_folder::compare;

/// 3 when anything is missing or failed, else 1 when the gate failed, else 0.
pub fn exit_for(results: &Results, interrupted: bool) -> Exit {
    if interrupted || !results.complete {
        Exit::Incomplete
    } else if !results.gate.failed.is_empty() {
        Exit::GateFailed
    } else {
        Exit::Success
    }
}

pub fn print_summary(dir: &Path, results: &Results, interrupted: bool) -> Result<(), CliError> {
    let mut out = String::new();
    if let Some(answer) = results.summary.same_model {
        let _ = writeln!(
            out,
            "{}",
            same_model_headline(answer, &results.summary.same_model_because)
        );
    }
    let _ = writeln!(out, "{}", results.summary.headline());
    for c in &results.categories {
        let s = &c.summary;
        if s.format + s.no_answer + s.diff + s.fail + s.review > 0 {
            let _ = writeln!(
                out,
                "  {}: {} same, {} format, {} no answer, {} diff, {} review, {} fail",
                c.category, s.same, s.format, s.no_answer, s.diff, s.review, s.fail
            );
        }
    }
    for s in &results.statistics {
        for c in s.categories.iter().filter(|c| c.counts.p_value < 0.05) {
            let _ = writeln!(out, "  {}", c.statement);
        }
    }
    if results.sampling.repeats > 1 {
        let _ = writeln!(
            out,
            "non-deterministic prompt/endpoint pairs: {}",
            results.nondeterministic
        );
    }
    for line in results.load.summary_lines() {
        let _ = writeln!(out, "{line}");
    }
    for p in &results.token_agreement {
        if let (Some(kld), Some(top1)) = (p.summary.mean_kld, p.summary.top1_agreement) {
            let _ = writeln!(
                out,
                "token agreement (teacher-forced), {} against {}: mean KLD {kld:.4}, same top token {:.1}% over {} tokens",
                p.other,
                p.reference,
                top1 * 100.0,
                p.summary.tokens
            );
        }
    }
    if !results.gate.failed.is_empty() {
        let _ = writeln!(out, "gate failed: {}", results.gate.failed.join(", "));
    }
    if interrupted {
        let _ = writeln!(
            out,
            "interrupted: every finished request is saved; continue with --resume {}",
            dir.display()
        );
    } else if !results.complete {
        let _ = writeln!(
            out,
            "incomplete: {} request failure(s), {} missing; continue with --resume {}",
            results.request_failures,
            results.missing,
            dir.display()
        );
    }
    let report = compare::folder(dir).file(compare::REPORT_MD);
    let _ = writeln!(out, "report: {}", report.display());
    stdout::print(&out)
}

/// The summary, or with `json` the whole results.json (the file's bytes) and nothing else.
pub fn print_outcome(
    dir: &Path,
    results: &Results,
    interrupted: bool,
    json: bool,
) -> Result<(), CliError> {
    if json {
        stdout::print(&report::render_json(results))
    } else {
        print_summary(dir, results, interrupted)
    }
}

/// The catalogue to score a run with: the flag, else the run's own folder when it still exists,
/// else the default catalogue; with the run's suites (its generated items made again).
pub(super) fn catalogue_for_run(
    flag: Option<&Path>,
    manifest: &Manifest,
) -> anyhow::Result<Catalogue> {
    let recorded = PathBuf::from(&manifest.catalogue.dir);
    let dir = flag
        .map(Path::to_path_buf)
        .or_else(|| recorded.is_dir().then_some(recorded));
    let suites = manifest
        .catalogue
        .suite_choice()
        .map_err(anyhow::Error::msg)?;
    Ok(load_catalogue_for(dir.as_deref())?.with_suites(suites))
}

pub fn score(args: &ScoreArgs) -> Result<Exit, CliError> {
    let manifest = Manifest::read(&args.run).map_err(CliError::unreadable)?;
    let catalogue = catalogue_for_run(args.catalogue.as_deref(), &manifest).usage_err()?;
    let gate = resolve_gate(
        args.gate.fail_on.as_ref(),
        Some(&manifest.fail_on),
        Gate::default_compare(),
    );
    let margin = args
        .gate
        .margin
        .or(manifest.margin)
        .unwrap_or(DEFAULT_MARGIN_POINTS);
    let results = score_run(&args.run, &catalogue, &manifest, &gate, margin, Vec::new())?;
    print_outcome(&args.run, &results, false, args.json)?;
    Ok(exit_for(&results, false))
}

pub fn report(args: &ReportArgs) -> Result<Exit, CliError> {
    let results = rerender(&args.run)?;
    print_outcome(&args.run, &results, false, args.json)?;
    Ok(exit_for(&results, false))
}
