//! `coherence prompts list` and `coherence prompts check`.

use crate::catalogue::Prompt;
use crate::cli::CatalogueArgs;
use crate::error::{CliError, Exit, UsageContext};
use crate::report::markdown_table;
use crate::run::plan::load_catalogue_for;
use crate::score::{clip, score, ScoreContext};

pub fn list(args: &CatalogueArgs) -> Result<Exit, CliError> {
    let catalogue = load_catalogue_for(args.catalogue.as_deref()).usage_err()?;
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
    print!(
        "{}",
        markdown_table(&["id", "category", "scorer", "expected", "prompt"], &rows)
    );
    println!(
        "\n{} prompts in {}",
        catalogue.prompts.len(),
        catalogue.dir.display()
    );
    Ok(Exit::Coherent)
}

/// A reference answer that does not score correct, or a wrong answer that does.
fn self_test(p: &Prompt, ctx: &ScoreContext) -> Vec<String> {
    let mut problems = Vec::new();
    let r = score(&p.score, &p.reference, ctx);
    if r.correct == Some(false) {
        problems.push(format!(
            "{}: prompt `{}`: the reference answer does not score correct: {}",
            p.source, p.id, r.evidence
        ));
    }
    let w = score(&p.score, &p.wrong, ctx);
    if w.correct == Some(true) {
        problems.push(format!(
            "{}: prompt `{}`: the wrong answer scores correct: {}",
            p.source, p.id, w.evidence
        ));
    }
    problems
}

pub fn check(args: &CatalogueArgs) -> Result<Exit, CliError> {
    let catalogue = load_catalogue_for(args.catalogue.as_deref()).usage_err()?;
    let ctx = ScoreContext::for_catalogue(&catalogue.dir);
    let problems: Vec<String> = catalogue
        .prompts
        .iter()
        .flat_map(|p| self_test(p, &ctx))
        .collect();
    if problems.is_empty() {
        println!(
            "ok: {} prompts in {}; every reference scores correct and every wrong answer does not",
            catalogue.prompts.len(),
            catalogue.dir.display()
        );
        Ok(Exit::Coherent)
    } else {
        Err(CliError::usage(anyhow::anyhow!(
            "catalogue self-test failed:\n  {}",
            problems.join("\n  ")
        )))
    }
}
