//! `--suite long` in a compare plan: the context its items must fit (`--max-context`, else the
//! smallest `max_model_len` the endpoints report on `GET /models`, clamped to
//! [`MAX_CONTEXT`], else 8192), the ladder made explicit so a resumed or re-scored run makes the
//! same items, and a note per length skipped because it would not fit (never sent). A ladder of
//! which nothing fits is refused, saying which `--lengths` would.

use anyhow::bail;

use crate::catalogue::long::{LongChoice, MAX_CONTEXT, MIN_FITTING_CONTEXT};
use crate::catalogue::{Suite, SuiteChoice};
use crate::cli::CompareArgs;
use crate::endpoint::{Client, ClientOptions};
use crate::run::PlannedEndpoint;

/// Where the context of a run's long suite comes from, for messages.
enum ContextSource {
    /// `--max-context`, the default, or the resumed run's own.
    Given,
    /// The smallest `max_model_len` of the endpoints, with the endpoint that reported it.
    Reported(String),
}

impl ContextSource {
    fn describe(&self, context: u64) -> String {
        match self {
            ContextSource::Given => format!("the context window of {context} tokens"),
            ContextSource::Reported(name) => format!(
                "the context window of {context} tokens that endpoint `{name}` reports (max_model_len)"
            ),
        }
    }
}

/// Fix the long suite of `suites` for this run and return the notes of the lengths skipped (and
/// of a reported context clamped to [`MAX_CONTEXT`]). A new run (not `resumed`, not a dry run)
/// without `--max-context` asks the endpoints for their context; a resumed run keeps the one it
/// recorded. Err when no length of the ladder fits, or the suite would be too large.
pub(super) fn plan_long(
    suites: &mut SuiteChoice,
    args: &CompareArgs,
    endpoints: &[PlannedEndpoint],
    options: &ClientOptions,
    resumed: bool,
) -> anyhow::Result<Vec<String>> {
    if !suites.includes(Suite::Long) {
        return Ok(Vec::new());
    }
    let mut notes = Vec::new();
    let mut source = ContextSource::Given;
    if !resumed && !args.suite.long.context_given() && !args.dry_run {
        if let Some((name, reported)) = reported_context(endpoints, options) {
            if reported > MAX_CONTEXT {
                notes.push(format!(
                    "endpoint `{name}` reports a context window (max_model_len) of {reported} tokens; the long ladder plans for at most {MAX_CONTEXT} and stops there (--max-context chooses another)"
                ));
            }
            suites.long.context = reported.min(MAX_CONTEXT);
            source = ContextSource::Reported(name);
        }
    }
    suites.long.lengths = suites.long.ladder();
    let (fitting, skipped) = suites.long.fitting();
    if fitting.is_empty() {
        bail!("{}", nothing_fits(&suites.long, &source));
    }
    suites.long.check().map_err(anyhow::Error::msg)?;
    notes.extend(skipped.into_iter().map(|s| s.reason));
    Ok(notes)
}

/// "--suite long: every ladder length (…) exceeds …; give --lengths at most N".
fn nothing_fits(choice: &LongChoice, source: &ContextSource) -> String {
    let asked: Vec<String> = choice.lengths.iter().map(u32::to_string).collect();
    let window = source.describe(choice.context);
    let lengths = if asked.is_empty() {
        "the ladder has no length".to_string()
    } else {
        format!("every ladder length ({}) exceeds", asked.join(", "))
    };
    match choice.longest_fitting() {
        Some(longest) => format!(
            "--suite long: {lengths} {window} with the chat template and the answer budget; give --lengths of at most {longest} tokens (e.g. --lengths {longest})"
        ),
        None => format!(
            "--suite long: {lengths} {window}: it is too small for a long item (the shortest needs a window of {MIN_FITTING_CONTEXT} tokens)"
        ),
    }
}

/// The smallest `max_model_len` the sent-to endpoints report, with the endpoint that reports it
/// (None when none reports one or none answers; the run itself then says why an endpoint cannot
/// be reached).
fn reported_context(
    endpoints: &[PlannedEndpoint],
    options: &ClientOptions,
) -> Option<(String, u64)> {
    let rt = crate::compare::runtime().ok()?;
    let asks = endpoints
        .iter()
        .filter(|e| e.replayed.is_none())
        .filter_map(|e| {
            let client = Client::new(&e.spec.base_url, e.key.clone(), options.clone()).ok()?;
            let name = e.spec.name.clone();
            Some(async move {
                let len = client.models().await.ok().and_then(|m| m.max_model_len)?;
                Some((name, len))
            })
        });
    rt.block_on(futures::future::join_all(asks))
        .into_iter()
        .flatten()
        .min_by_key(|(_, len)| *len)
}
