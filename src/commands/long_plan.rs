//! `--suite long` in a compare plan: the context its items must fit (`--max-context`, else the
//! smallest `max_model_len` the endpoints report on `GET /models`, else 8192), the ladder made
//! explicit so a resumed or re-scored run makes the same items, and a note per length skipped
//! because it would not fit (never sent).

use crate::catalogue::{Suite, SuiteChoice};
use crate::cli::CompareArgs;
use crate::endpoint::{Client, ClientOptions};
use crate::run::PlannedEndpoint;

/// Fix the long suite of `suites` for this run and return the notes of the lengths skipped.
/// A new run (not `resumed`, not a dry run) without `--max-context` asks the endpoints for
/// their context; a resumed run keeps the one it recorded.
pub(super) fn plan_long(
    suites: &mut SuiteChoice,
    args: &CompareArgs,
    endpoints: &[PlannedEndpoint],
    options: &ClientOptions,
    resumed: bool,
) -> Vec<String> {
    if !suites.includes(Suite::Long) {
        return Vec::new();
    }
    if !resumed && !args.suite.long.context_given() && !args.dry_run {
        if let Some(context) = reported_context(endpoints, options) {
            suites.long.context = context;
        }
    }
    suites.long.lengths = suites.long.ladder();
    suites
        .long
        .fitting()
        .1
        .into_iter()
        .map(|s| s.reason)
        .collect()
}

/// The smallest `max_model_len` the sent-to endpoints report (None when none reports one or
/// none answers; the run itself then says why an endpoint cannot be reached).
fn reported_context(endpoints: &[PlannedEndpoint], options: &ClientOptions) -> Option<u64> {
    let rt = crate::pipeline::runtime().ok()?;
    let asks = endpoints
        .iter()
        .filter(|e| e.replayed.is_none())
        .filter_map(|e| Client::new(&e.spec.base_url, e.key.clone(), options.clone()).ok())
        .map(|client| async move { client.models().await.ok().and_then(|m| m.max_model_len) });
    rt.block_on(futures::future::join_all(asks))
        .into_iter()
        .flatten()
        .min()
}
