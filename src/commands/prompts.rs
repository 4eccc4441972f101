//! `coherence prompts list`, `coherence prompts check` and `coherence prompts export`.

use super::flags::load_catalogue_for;
use super::stdout;
use crate::catalogue::embedded;
use crate::catalogue::{category_counts, self_test_all};
use crate::cli::{CheckArgs, ExportArgs, ListArgs};
use crate::error::{CliError, Exit, UsageContext};
use crate::report::markdown_table;
use crate::score::ScoreContext;
use crate::text::clip;

pub fn list(args: &ListArgs) -> Result<Exit, CliError> {
    let catalogue = load_catalogue_for(args.catalogue.catalogue.as_deref()).usage_err()?;
    if args.json {
        let prompts: Vec<serde_json::Value> = catalogue
            .prompts
            .iter()
            .map(|p| {
                serde_json::json!({
                    "id": p.id,
                    "category": p.category,
                    "scorer": p.score.kind(),
                    "expected": p.score.expected_summary(),
                    "prompt": p.question(),
                    "max_tokens": p.max_tokens,
                    "tags": p.tags,
                })
            })
            .collect();
        let out = serde_json::json!({
            "catalogue": {"dir": catalogue.dir.display().to_string(), "hash": catalogue.hash},
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
    let catalogue = load_catalogue_for(args.catalogue.catalogue.as_deref()).usage_err()?;
    let ctx = ScoreContext::for_catalogue(&catalogue.dir);
    let counts = category_counts(&catalogue.prompts);
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
    stdout::print(&markdown_table(
        &["category", "prompts", "spec", "count"],
        &rows,
    ))?;
    let mut problems = self_test_all(&catalogue.prompts, &ctx);
    let enforced = counts.iter().filter(|_| !args.any_counts);
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
            if args.any_counts {
                "category counts were not checked (--any-counts)"
            } else {
                "every category holds the number of prompts the spec says"
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
