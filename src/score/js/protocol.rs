//! The messages between the scorer and the `coherence __js-worker` child: one job as JSON on
//! stdin, one JSON line per event on stdout (flushed as it happens, so a killed worker still
//! tells how far it got).

use serde::{Deserialize, Serialize};

/// Engine limits applied inside the worker, on top of the process limits set by the parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineLimits {
    /// Loop iterations allowed per function call (boa counts per call frame).
    pub loop_iterations: u64,
    /// Nested JS calls before a RangeError.
    pub recursion: usize,
    /// Stack frames kept in an error's backtrace.
    pub backtrace: usize,
}

impl Default for EngineLimits {
    fn default() -> Self {
        EngineLimits {
            loop_iterations: 1_000_000,
            recursion: 400,
            backtrace: 4,
        }
    }
}

/// Everything the worker needs: the candidate, the function it must define, the test expressions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteJob {
    pub code: String,
    pub function: String,
    pub tests: Vec<String>,
    pub limits: EngineLimits,
}

/// A script job (`coherence project`): the worker evaluates `prelude`, then each of `scripts`
/// (a throw is handed to the function `error_hook` as a message string, and loading goes on, as
/// a browser goes on after a failing `<script>`), then `after_load`, then steps the iterator that
/// `driver` evaluates to (`.next()` until done, at most `max_steps` times, running promise jobs
/// after every step), and finally emits the string that `report` evaluates to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScriptJob {
    pub prelude: String,
    pub scripts: Vec<String>,
    pub error_hook: String,
    pub after_load: String,
    pub driver: String,
    pub max_steps: u64,
    pub report: String,
    pub limits: EngineLimits,
}

/// How one test ended inside the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestVerdict {
    /// The expression evaluated to `true`.
    Pass,
    /// It evaluated to something else.
    Fail,
    /// It threw (or hit an engine limit).
    Error,
}

/// Where loading a candidate stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadStage {
    /// The code does not parse.
    Parse,
    /// It threw while loading (top-level code), the worker stopped, or the setup around it
    /// failed (the prelude, a script job's driver).
    #[default]
    Run,
    /// It loaded but does not define the function (or defines it as something else).
    Define,
}

/// One line of worker output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The candidate defined the function; tests follow.
    Loaded,
    /// The candidate did not load; no tests run. `stage` says how far it got.
    LoadFailed {
        reason: String,
        #[serde(default)]
        stage: LoadStage,
    },
    /// One test, in suite order.
    Test {
        verdict: TestVerdict,
        detail: String,
    },
    /// The end of a script job: what its `report` expression evaluated to.
    Report { report: String },
}
