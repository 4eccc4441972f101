//! The JS unit-test scorer: extract the candidate function from the answer, run it against a
//! suite of test expressions in a sandboxed child process, and report which tests passed.
//! Results are memoized per (suite, function, candidate code), so identical completions across
//! repeats and endpoints run once per process.
//!
//! The same worker also runs script jobs for `coherence project` (`ScriptJob`, `run_script`): a
//! prelude, the artifact's scripts and a stepped driver, under the same process limits, with
//! one JSON report handed back instead of test verdicts.

mod extract;
mod outcome;
mod protocol;
mod sandbox;
mod scan;
mod suite;
mod typescript;
mod worker;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use super::{Detail, Score, ScoreContext};
use outcome::SuiteOutcome;
use protocol::{LoadStage, SuiteJob};

pub use protocol::{EngineLimits, ScriptJob};
pub use sandbox::{run_script, ProcessLimits, ScriptOutcome};

pub use suite::validate_spec;
pub use worker::run as run_worker;

/// The executable re-run as the worker: `COHERENCE_JS_WORKER` when set; else this executable
/// when it is `coherence`; else a `coherence` binary beside it or one folder up (a test harness
/// in `target/<profile>/deps` finds the crate's binary in `target/<profile>`); else this
/// executable, which then fails every test with a clear reason.
pub fn default_worker() -> PathBuf {
    if let Some(path) = std::env::var_os("COHERENCE_JS_WORKER") {
        return PathBuf::from(path);
    }
    let Ok(exe) = std::env::current_exe() else {
        return PathBuf::from("coherence");
    };
    let name = format!("coherence{}", std::env::consts::EXE_SUFFIX);
    if exe.file_name().is_some_and(|n| n == name.as_str()) {
        return exe;
    }
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(&name))
        .find(|candidate| candidate.is_file())
        .unwrap_or(exe)
}

type MemoKey = (PathBuf, String, String);

fn memo() -> &'static Mutex<HashMap<MemoKey, Arc<SuiteOutcome>>> {
    static MEMO: OnceLock<Mutex<HashMap<MemoKey, Arc<SuiteOutcome>>>> = OnceLock::new();
    MEMO.get_or_init(Default::default)
}

/// Scores `answer`: correct when the extracted candidate passes every test of `suite`. An
/// answer whose code cannot be located, or whose code does not define `function`, is no answer
/// (wrong, the evidence saying why), told apart from code that ran and failed its tests.
pub fn score(suite: &str, function: &str, answer: &str, ctx: &ScoreContext) -> Score {
    let Some(candidate) = extract::extract(answer, function) else {
        return no_answer(format!(
            "no JavaScript function `{function}` found in the answer"
        ));
    };
    let path = ctx.scorers_dir.join(suite);
    let key = (path, function.to_string(), candidate.code);
    let cached = memo()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .cloned();
    let outcome = match cached {
        Some(o) => o,
        None => {
            let suite = match suite::load(&key.0, function) {
                Ok(s) => s,
                Err(e) => return unscored(e),
            };
            let job = SuiteJob {
                code: key.2.clone(),
                function: function.to_string(),
                tests: suite.tests,
                limits: EngineLimits::default(),
            };
            let o = match sandbox::run(&ctx.js_worker, &job, ProcessLimits::default()) {
                Ok(o) => Arc::new(o),
                Err(e) => return unscored(e),
            };
            memo()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, Arc::clone(&o));
            o
        }
    };
    if let Some(n) = outcome
        .not_loaded
        .as_ref()
        .filter(|n| n.stage == LoadStage::Define)
    {
        return no_answer(format!("{}; code: {}", n.reason, candidate.source));
    }
    let scored = Score::new(
        Some(outcome.all_passed()),
        Detail::Tests(outcome.tally()),
        format!("{}; code: {}", outcome.evidence(), candidate.source),
    )
    .keyed(outcome.pattern());
    match &outcome.not_loaded {
        // Code that never got to its tests is a weak read of what the model can do.
        Some(n) => scored.weakly(format!("code did not run: {}", n.reason)),
        None => scored,
    }
}

/// The score of an answer with no code to run: `reason` says why. Nothing is read (two such
/// answers are `no_answer`, not the same answer).
fn no_answer(reason: String) -> Score {
    Score::new(
        Some(false),
        Detail::NotFound,
        format!("no answer: {reason}"),
    )
    .weakly(format!("code did not run: {reason}"))
}

/// The score of a candidate the scorer could not run (a suite it could not load, a worker it
/// could not start).
fn unscored(e: impl std::fmt::Display) -> Score {
    Score::new(Some(false), Detail::Unscored, format!("scorer error: {e}"))
}
