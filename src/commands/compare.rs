//! `coherence compare` and `coherence determinism`: send, journal, then score and report (or,
//! with `--dry-run`, only show the plan).

use std::path::Path;

use crate::cli::CompareArgs;
use crate::compare::run_and_score;
use crate::compare::until_decided::run_until_decided;
use crate::error::{CliError, Exit, UsageContext};
use crate::logprobs::template::ChatTemplate;

use super::baseline_plan::plan_baseline;
pub(super) use super::compare_plan::plan_compare;
pub use super::compare_plan::Mode;
use super::load_plan::plan_load;

use super::score::{exit_for, print_outcome};

pub fn compare(args: &CompareArgs, argv: Vec<String>, mode: Mode) -> Result<Exit, CliError> {
    let plan = if args.baseline.is_empty() || mode != Mode::Compare {
        plan_compare(args, mode)
    } else {
        plan_baseline(args)
    }
    .usage_err()?;
    // Validated before a dry run too: a plan with a flag the command refuses is no plan.
    let load = plan_load(&args.load, mode, &plan).usage_err()?;
    if args.dry_run {
        return super::dry_run::dry_run(&plan, args.assume_tps, args.assume_prefill_tps, args.json);
    }
    let template = chat_template(
        args.chat_template.as_deref(),
        plan.sampling.teacher_forces(),
    )?;
    let dir = plan.dir.clone();
    let (results, interrupted) = if plan.until_decided.is_some() || plan.grows_control() {
        run_until_decided(plan, &load, template, argv)?
    } else {
        run_and_score(&plan, &load, template, argv)?
    };
    print_outcome(&dir, &results, interrupted, args.json)?;
    Ok(exit_for(&results, interrupted))
}

/// The `--chat-template` file, read; it renders prompts for teacher forcing, so it needs
/// `--logprobs`.
pub(super) fn chat_template(
    path: Option<&Path>,
    logprobs: bool,
) -> Result<Option<ChatTemplate>, CliError> {
    if path.is_some() && !logprobs {
        return Err(CliError::usage(anyhow::anyhow!(
            "--chat-template renders prompts for teacher forcing: it needs --logprobs"
        )));
    }
    path.map(ChatTemplate::load).transpose().usage_err()
}
