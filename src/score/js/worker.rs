//! The child side of the JS sandbox (`coherence __js-worker`): reads one job from stdin, runs the
//! candidate and its tests in boa with module loading disabled and engine limits set, and
//! streams one JSON event per line to stdout.

use std::fmt::{self, Write as _};
use std::io::{Read, Write};
use std::rc::Rc;

use boa_engine::builtins::promise::PromiseState;
use boa_engine::module::IdleModuleLoader;
use boa_engine::{Context, JsError, JsValue, Script, Source};

use super::protocol::{EngineLimits, Event, LoadStage, ScriptJob, SuiteJob, TestVerdict};

/// Longest reason or value text a worker reports.
const MAX_DETAIL: usize = 160;

/// Stubs evaluated before the candidate, so the usual Node noise around a function
/// (`console.log` usage lines, `module.exports = f`, `const assert = require('assert')` with
/// self-checks) does not make a correct answer fail. `require` returns an inert object whose
/// members are no-op functions, at any depth.
const PRELUDE: &str = concat!(
    "var console = { log() {}, info() {}, warn() {}, error() {}, debug() {}, assert() {} };\n",
    "var module = { exports: {} };\n",
    "var exports = module.exports;\n",
    "var require = function require() {\n",
    "  return new Proxy(function () {}, { get: (_, key) => (typeof key === 'symbol' ? undefined : require()), apply: () => undefined });\n",
    "};\n",
);

/// Helpers for test expressions, defined after the candidate so it cannot shadow them by accident.
/// `__eq(a, b)`: deep structural equality of primitives, arrays and plain objects (NaN equals NaN).
const HELPERS: &str = "globalThis.__eq = function __eq(a, b) {\n\
    if (Object.is(a, b)) return true;\n\
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;\n\
    if (Array.isArray(a) !== Array.isArray(b)) return false;\n\
    const ka = Object.keys(a), kb = Object.keys(b);\n\
    if (ka.length !== kb.length) return false;\n\
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && __eq(a[k], b[k]));\n\
};\n";

/// Entry point of `coherence __js-worker`. Returns false when the job itself could not be read.
pub fn run() -> bool {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("js worker: cannot read the job from stdin: {e}");
        return false;
    }
    let mut out = std::io::stdout().lock();
    let mut emit = |event: Event| {
        // A closed stdout means the parent is gone; nothing left to do but finish quietly.
        let line = serde_json::to_string(&event).unwrap_or_default();
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    };
    // A script job is told apart by its `driver` field; anything else is a test job.
    let is_script = serde_json::from_str::<serde_json::Value>(&input)
        .ok()
        .is_some_and(|v| v.get("driver").is_some());
    if is_script {
        match serde_json::from_str::<ScriptJob>(&input) {
            Ok(job) => run_script_job(&job, &mut emit),
            Err(e) => {
                eprintln!("js worker: invalid script job: {e}");
                return false;
            }
        }
        return true;
    }
    let job: SuiteJob = match serde_json::from_str(&input) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("js worker: invalid job: {e}");
            return false;
        }
    };
    run_suite_job(&job, &mut emit);
    true
}

/// Runs a script job (see `ScriptJob`): a load failure of the prelude or the driver is a
/// `LoadFailed`; the artifact's own throws go to its error hook and never stop the job.
fn run_script_job(job: &ScriptJob, emit: &mut dyn FnMut(Event)) {
    let mut ctx = match new_context(job.limits) {
        Ok(c) => c,
        Err(e) => {
            emit(Event::LoadFailed {
                reason: format!("cannot create the JS context: {}", error_text(&e)),
                stage: LoadStage::Run,
            });
            return;
        }
    };
    if let Err(e) = ctx.eval(Source::from_bytes(&job.prelude)) {
        emit(Event::LoadFailed {
            reason: format!("prelude failed: {}", error_text(&e)),
            stage: LoadStage::Run,
        });
        return;
    }
    let hand_over = |ctx: &mut Context, message: String| {
        let call = format!(
            "{}({})",
            job.error_hook,
            serde_json::to_string(&message).unwrap_or_default()
        );
        let _ = ctx.eval(Source::from_bytes(call.as_bytes()));
    };
    for script in &job.scripts {
        if let Err(e) = ctx.eval(Source::from_bytes(script)) {
            hand_over(&mut ctx, error_text(&e));
        }
        let _ = ctx.run_jobs();
    }
    if let Err(e) = ctx.eval(Source::from_bytes(&job.after_load)) {
        hand_over(&mut ctx, error_text(&e));
    }
    let _ = ctx.run_jobs();
    let start = format!("globalThis.__coherence_it = ({});", job.driver);
    if let Err(e) = ctx.eval(Source::from_bytes(start.as_bytes())) {
        emit(Event::LoadFailed {
            reason: format!("driver failed: {}", error_text(&e)),
            stage: LoadStage::Run,
        });
        return;
    }
    emit(Event::Loaded);
    for _ in 0..job.max_steps {
        match ctx.eval(Source::from_bytes("__coherence_it.next().done === true")) {
            Ok(done) => {
                let _ = ctx.run_jobs();
                if done.as_boolean() == Some(true) {
                    break;
                }
            }
            Err(e) => {
                hand_over(&mut ctx, format!("driver: {}", error_text(&e)));
                break;
            }
        }
    }
    let report = match ctx.eval(Source::from_bytes(&job.report)) {
        Ok(v) => v
            .as_string()
            .map(|s| s.to_std_string_escaped())
            .unwrap_or_else(|| value_text(&v)),
        Err(e) => {
            emit(Event::LoadFailed {
                reason: format!("report failed: {}", error_text(&e)),
                stage: LoadStage::Run,
            });
            return;
        }
    };
    emit(Event::Report { report });
}

/// Runs the job, reporting each step through `emit` as soon as it is known.
fn run_suite_job(job: &SuiteJob, emit: &mut dyn FnMut(Event)) {
    let mut ctx = match new_context(job.limits) {
        Ok(c) => c,
        Err(e) => {
            emit(Event::LoadFailed {
                reason: format!("cannot create the JS context: {}", error_text(&e)),
                stage: LoadStage::Run,
            });
            return;
        }
    };
    if let Err((stage, reason)) = load(&mut ctx, &job.code, &job.function) {
        emit(Event::LoadFailed { reason, stage });
        return;
    }
    emit(Event::Loaded);
    for test in &job.tests {
        let (verdict, detail) = run_test(&mut ctx, test);
        emit(Event::Test { verdict, detail });
    }
}

fn new_context(limits: EngineLimits) -> Result<Context, JsError> {
    let mut ctx = Context::builder()
        .module_loader(Rc::new(IdleModuleLoader))
        .build()?;
    let rt = ctx.runtime_limits_mut();
    rt.set_loop_iteration_limit(limits.loop_iterations);
    rt.set_recursion_limit(limits.recursion);
    rt.set_backtrace_limit(limits.backtrace);
    Ok(ctx)
}

/// Defines the candidate; fails, saying at which stage, when it does not parse, throws at top
/// level, or does not define `function`.
fn load(ctx: &mut Context, code: &str, function: &str) -> Result<(), (LoadStage, String)> {
    let failed =
        |stage, what: &'static str| move |e: JsError| (stage, format!("{what}{}", error_text(&e)));
    ctx.eval(Source::from_bytes(PRELUDE))
        .map_err(failed(LoadStage::Run, "prelude failed: "))?;
    let script =
        Script::parse(Source::from_bytes(code), None, ctx).map_err(failed(LoadStage::Parse, ""))?;
    script.evaluate(ctx).map_err(failed(LoadStage::Run, ""))?;
    let _ = ctx.run_jobs();
    ctx.eval(Source::from_bytes(HELPERS))
        .map_err(failed(LoadStage::Run, "test helpers failed: "))?;
    let probe = format!("typeof {function}");
    let kind = ctx
        .eval(Source::from_bytes(probe.as_bytes()))
        .ok()
        .and_then(|v| v.as_string().map(|s| s.to_std_string_escaped()));
    match kind.as_deref() {
        Some("function") => Ok(()),
        Some("undefined") | None => Err((
            LoadStage::Define,
            format!("the code does not define `{function}`"),
        )),
        Some(other) => Err((
            LoadStage::Define,
            format!("`{function}` is a {other}, not a function"),
        )),
    }
}

/// Evaluates one test expression; it passes when it is `true` (or a promise fulfilled with `true`).
fn run_test(ctx: &mut Context, test: &str) -> (TestVerdict, String) {
    let value = match ctx.eval(Source::from_bytes(test)) {
        Ok(v) => v,
        Err(e) => return (TestVerdict::Error, error_text(&e)),
    };
    let _ = ctx.run_jobs();
    let value = match value.as_promise().map(|p| p.state()) {
        None => value,
        Some(PromiseState::Fulfilled(v)) => v,
        Some(PromiseState::Rejected(reason)) => {
            return (
                TestVerdict::Error,
                format!("rejected: {}", error_text(&JsError::from_opaque(reason))),
            )
        }
        Some(PromiseState::Pending) => return (TestVerdict::Fail, "promise still pending".into()),
    };
    if value.as_boolean() == Some(true) {
        (TestVerdict::Pass, String::new())
    } else {
        (
            TestVerdict::Fail,
            format!("expected true, got {}", value_text(&value)),
        )
    }
}

/// The first line of an error, bounded, without boa's `(name at :line:col)` position suffix
/// (positions in the candidate's script add noise, not information).
fn error_text(e: &JsError) -> String {
    let text = bounded(e);
    let line = text.lines().next().unwrap_or_default().trim();
    without_position(line).to_string()
}

fn without_position(line: &str) -> &str {
    let Some(open) = line.rfind(" (") else {
        return line;
    };
    let is_position = line[open + 2..]
        .strip_suffix(')')
        .and_then(|inner| inner.split_once(" at "))
        .is_some_and(|(_, place)| {
            let mut parts = place.rsplit(':');
            let col = parts.next().unwrap_or_default();
            let row = parts.next().unwrap_or_default();
            [col, row]
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        });
    if is_position {
        &line[..open]
    } else {
        line
    }
}

fn value_text(v: &JsValue) -> String {
    bounded(&v.display())
}

/// Formats at most `MAX_DETAIL` characters: a huge array or string stops formatting early
/// instead of being built in full.
fn bounded(value: &dyn fmt::Display) -> String {
    struct Bounded(String);
    impl fmt::Write for Bounded {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for c in s.chars() {
                if self.0.chars().count() >= MAX_DETAIL {
                    self.0.push('…');
                    return Err(fmt::Error);
                }
                self.0.push(c);
            }
            Ok(())
        }
    }
    let mut out = Bounded(String::new());
    let _ = write!(out, "{value}");
    out.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: &str, tests: &[&str]) -> Vec<Event> {
        let job = SuiteJob {
            code: code.into(),
            function: "f".into(),
            tests: tests.iter().map(|t| t.to_string()).collect(),
            limits: EngineLimits::default(),
        };
        let mut events = Vec::new();
        run_suite_job(&job, &mut |e| events.push(e));
        events
    }

    fn verdicts(events: &[Event]) -> Vec<TestVerdict> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Test { verdict, .. } => Some(*verdict),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn passes_fails_and_errors_are_told_apart() {
        let events = run(
            "function f(x) { if (x < 0) throw new TypeError('negative'); return x * 2; }",
            &["f(2) === 4", "f(2) === 5", "f(-1) === 0"],
        );
        assert_eq!(events[0], Event::Loaded);
        assert_eq!(
            verdicts(&events),
            vec![TestVerdict::Pass, TestVerdict::Fail, TestVerdict::Error]
        );
        let Event::Test { detail, .. } = &events[3] else {
            panic!("{events:?}")
        };
        assert!(detail.contains("TypeError: negative"), "{detail}");
        assert!(!detail.contains('\n'), "{detail}");
    }

    #[test]
    fn missing_function_and_syntax_error_fail_to_load() {
        let missing = run("function g() { return 1; }", &["f() === 1"]);
        assert!(
            matches!(&missing[0], Event::LoadFailed { reason, stage: LoadStage::Define } if reason.contains("does not define `f`")),
            "{missing:?}"
        );
        let broken = run("function f( {", &["f() === 1"]);
        assert!(
            matches!(&broken[0], Event::LoadFailed { reason, stage: LoadStage::Parse } if reason.contains("SyntaxError")),
            "{broken:?}"
        );
        assert_eq!(broken.len(), 1);
        let throws = run("function f() {}\nnull.x;", &["f() === 1"]);
        assert!(
            matches!(&throws[0], Event::LoadFailed { reason, stage: LoadStage::Run } if reason.contains("TypeError")),
            "{throws:?}"
        );
    }

    #[test]
    fn node_noise_and_arrow_functions_load() {
        let events = run(
            "const f = (xs) => xs.map((x) => x + 1);\nconsole.log(f([1]));\nmodule.exports = f;",
            &["__eq(f([1, 2]), [2, 3])", "__eq(f([]), [1])"],
        );
        assert_eq!(
            verdicts(&events),
            vec![TestVerdict::Pass, TestVerdict::Fail]
        );
    }

    #[test]
    fn required_modules_are_inert() {
        let events = run(
            "const assert = require('assert');\nfunction f(x) { return x + 1; }\nassert.strictEqual(f(1), 3);\nassert.strict.deepEqual([f(0)], [2]);",
            &["f(1) === 2"],
        );
        assert_eq!(verdicts(&events), vec![TestVerdict::Pass], "{events:?}");
    }

    #[test]
    fn async_results_are_awaited() {
        let events = run("async function f(x) { return x === 1; }", &["f(1)", "f(2)"]);
        assert_eq!(
            verdicts(&events),
            vec![TestVerdict::Pass, TestVerdict::Fail]
        );
    }

    #[test]
    fn error_positions_are_dropped() {
        assert_eq!(
            without_position("Error: boom (unknown at :1:2)"),
            "Error: boom"
        );
        assert_eq!(without_position("Error: f (x) at y"), "Error: f (x) at y");
        assert_eq!(
            without_position("TypeError: (a at b)"),
            "TypeError: (a at b)"
        );
    }

    #[test]
    fn huge_values_are_reported_briefly() {
        let events = run("function f() { return 'x'.repeat(100000); }", &["f()"]);
        let Event::Test { detail, .. } = &events[1] else {
            panic!("{events:?}")
        };
        assert!(detail.chars().count() < MAX_DETAIL + 40, "{}", detail.len());
    }
}
