//! `coherence prompts list`, `coherence prompts check` and `coherence prompts export`, each over
//! the suites `--suite` chooses (`core`, the catalogue's files, by default).

use super::flags::load_catalogue_for;
use super::stdout;
use crate::catalogue::long::LongId;
use crate::catalogue::{category_counts, generator, self_test_all};
use crate::catalogue::{embedded, Catalogue, Prompt, Suite, SuiteChoice};
use crate::cli::{CatalogueArgs, CheckArgs, ExportArgs, ListArgs, SuiteArgs};
use crate::error::{CliError, Exit, UsageContext};
use crate::report::markdown_table;
use crate::score::{ScoreContext, ScorerSpec};
use crate::text::clip;

/// The catalogue of `--catalogue` with the suites of `--suite`, `--items`, `--seed`.
fn catalogue_with_suites(
    catalogue: &CatalogueArgs,
    suite: &SuiteArgs,
) -> Result<Catalogue, CliError> {
    let choice = suite
        .choice(&SuiteChoice::default())
        .map_err(|e| CliError::usage(anyhow::anyhow!(e)))?;
    Ok(load_catalogue_for(catalogue.catalogue.as_deref())
        .usage_err()?
        .with_suites(choice))
}

/// The answer that scores correct, in full: the expected value, the exact output, or the JSON
/// values; for the other scorers, what a correct answer is.
fn expected_answer(p: &Prompt) -> String {
    match &p.score {
        ScorerSpec::Output { .. } | ScorerSpec::Json { .. } => p.score.expected_answer(),
        _ => None,
    }
    .unwrap_or_else(|| p.score.expected_summary())
}

/// The call a `tool_call` prompt expects first (`{name, arguments}`), null when it expects none
/// or is scored otherwise.
fn expected_call(p: &Prompt) -> Option<&crate::score::ExpectedCall> {
    match &p.score {
        ScorerSpec::ToolCall { calls, .. } => calls.first(),
        _ => None,
    }
}

/// The calibration items `prompts list --calibration` shows: per family, at its level when
/// `--difficulty` fixes one (else at every level), the first `--items` (default: the most one
/// family's calibration asks) of the calibration stream.
fn calibration_catalogue(args: &ListArgs) -> Result<Catalogue, CliError> {
    let mut catalogue = catalogue_with_suites(&args.catalogue, &args.suite)?;
    if !catalogue.suites.includes(Suite::Generated) {
        return Err(CliError::usage(anyhow::anyhow!(
            "--calibration lists generated items: add --suite generated"
        )));
    }
    let choice = catalogue.suites.clone();
    let count = args
        .suite
        .items
        .unwrap_or(crate::analysis::behaviour::calibration::MOST_REQUESTS);
    let fixed = matches!(
        args.suite.difficulty,
        Some(crate::cli::Difficulty::Fixed(_))
    );
    let mut prompts = Vec::new();
    for family in generator::families() {
        let levels: Vec<u8> = if fixed {
            vec![choice.levels.of(family)]
        } else {
            (generator::LOWEST..=generator::HIGHEST).collect()
        };
        for level in levels {
            prompts.extend(
                (0..count)
                    .filter_map(|k| generator::calibration_item(choice.seed, family, level, k)),
            );
        }
    }
    catalogue.prompts = prompts;
    Ok(catalogue)
}

pub fn list(args: &ListArgs) -> Result<Exit, CliError> {
    let catalogue = if args.calibration {
        calibration_catalogue(args)?
    } else {
        catalogue_with_suites(&args.catalogue, &args.suite)?
    };
    if args.json {
        let prompts: Vec<serde_json::Value> = catalogue
            .prompts
            .iter()
            .map(|p| {
                let mut listed = serde_json::json!({
                    "id": p.id,
                    "suite": p.suite,
                    "family": p.category,
                    "category": p.category,
                    "scorer": p.score.kind(),
                    "expected": expected_answer(p),
                    "prompt": p.question(),
                    "max_tokens": p.max_tokens,
                    "tags": p.tags,
                    "reference": p.reference,
                    "wrong": p.wrong,
                    "tools": p.tool_use.as_ref().map(|t| &t.tools),
                    "expected_call": expected_call(p),
                    "difficulty": generator::difficulty(p),
                });
                if let Some(at) = LongId::parse(&p.id) {
                    listed["context_tokens"] = at.tokens.into();
                    listed["depth"] = at.depth.into();
                }
                listed
            })
            .collect();
        let choice = &catalogue.suites;
        let out = serde_json::json!({
            "catalogue": {"dir": catalogue.dir.display().to_string(), "hash": catalogue.hash},
            "suites": choice.suites(),
            "generated": choice.includes(Suite::Generated).then(|| serde_json::json!({
                "seed": choice.seed,
                "items": choice.items,
                "generator_version": choice.generator_version(),
                "levels": generator::families().map(|f| (f, choice.levels.of(f))).collect::<std::collections::BTreeMap<_, _>>(),
                "calibration": args.calibration,
            })),
            "long": choice.includes(Suite::Long).then(|| serde_json::json!({
                "seed": choice.seed,
                "lengths": choice.long.ladder(),
                "depths": choice.long.depths,
                "per_cell": choice.long.per_cell,
                "context": choice.long.context,
                "skipped": choice.long.fitting().1.into_iter().map(|s| s.reason).collect::<Vec<_>>(),
            })),
            "prompts": prompts,
        });
        return stdout::print(
            &(serde_json::to_string_pretty(&out).map_err(CliError::usage)? + "\n"),
        )
        .map(|()| Exit::Success);
    }
    let rows: Vec<Vec<String>> = catalogue
        .prompts
        .iter()
        .map(|p| {
            vec![
                p.id.clone(),
                p.category.clone(),
                p.score.kind().to_string(),
                clip(&p.score.expected_summary(), 30),
                clip(p.question(), 70),
            ]
        })
        .collect();
    let table = markdown_table(&["id", "category", "scorer", "expected", "prompt"], &rows);
    stdout::print(&format!(
        "{table}\n{} prompts in {}\n",
        catalogue.prompts.len(),
        catalogue.dir.display()
    ))?;
    Ok(Exit::Success)
}

/// Validate the catalogue, prove every reference scores correct and every wrong answer does not,
/// and compare each category's prompt count with the spec. Any problem is a usage error (exit 2).
pub fn check(args: &CheckArgs) -> Result<Exit, CliError> {
    let catalogue = catalogue_with_suites(&args.catalogue, &args.suite)?;
    let ctx = ScoreContext::for_catalogue(&catalogue.dir);
    // The spec's counts are the core suite's.
    let core: Vec<Prompt> = catalogue
        .prompts
        .iter()
        .filter(|p| p.suite == Suite::Core)
        .cloned()
        .collect();
    let counts = category_counts(&core);
    let counts_checked = !args.any_counts && catalogue.suites.includes(Suite::Core);
    let rows: Vec<Vec<String>> = counts
        .iter()
        .map(|c| {
            vec![
                c.category.to_string(),
                c.have.to_string(),
                c.want.to_string(),
                if c.matches() { "ok" } else { "MISMATCH" }.to_string(),
            ]
        })
        .collect();
    if catalogue.suites.includes(Suite::Core) {
        stdout::print(&markdown_table(
            &["category", "prompts", "spec", "count"],
            &rows,
        ))?;
    }
    let mut problems = self_test_all(&catalogue.prompts, &ctx);
    // Every generated program, run in the sandboxed engine, prints what the generator computed.
    problems.extend(generator::confirm_in_engine(
        &catalogue.prompts,
        &ctx.js_worker,
    ));
    let enforced = counts.iter().filter(|_| counts_checked);
    problems.extend(enforced.filter(|c| !c.matches()).map(|c| {
        format!(
            "{}: category `{}` holds {} prompts; the spec says {}",
            catalogue.dir.display(),
            c.category,
            c.have,
            c.want
        )
    }));
    if problems.is_empty() {
        stdout::print(&format!(
            "\nok: {} prompts in {}; every reference scores correct, every wrong answer does not, \
             and {}\n",
            catalogue.prompts.len(),
            catalogue.dir.display(),
            if counts_checked {
                "every category holds the number of prompts the spec says"
            } else if args.any_counts {
                "category counts were not checked (--any-counts)"
            } else {
                "the generated programs print what the generator expects"
            }
        ))?;
        Ok(Exit::Success)
    } else {
        let n = problems.len();
        Err(CliError::usage(anyhow::anyhow!(
            "catalogue self-test failed ({n} problem{}):\n  {}",
            if n == 1 { "" } else { "s" },
            problems.join("\n  ")
        )))
    }
}

/// Write the built-in catalogue and suites out for a user to extend.
pub fn export(args: &ExportArgs) -> Result<Exit, CliError> {
    let written = embedded::export(&args.dir, args.force).usage_err()?;
    stdout::print(&format!(
        "wrote {} files to {}; use them with --catalogue {}\n",
        written.len(),
        args.dir.display(),
        args.dir.join("prompts").display()
    ))?;
    Ok(Exit::Success)
}
