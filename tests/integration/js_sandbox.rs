//! The JS scorer against hostile and ordinary candidates, with the real `coherence` binary as
//! the sandboxed worker: every bad candidate must end as failed tests with a reason, in bounded time.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use coherence::score::{score, Detail, Score, ScoreContext, ScorerSpec};

/// Generous: the sandbox deadline is 4 s; this only catches a hang.
const UPPER_BOUND: Duration = Duration::from_secs(10);

/// A scorers folder holding one suite for `f`, and the context that runs it.
struct Fixture {
    dir: tempfile::TempDir,
    ctx: ScoreContext,
}

impl Fixture {
    fn new(tests: &[&str]) -> Self {
        Self::with_worker(tests, PathBuf::from(env!("CARGO_BIN_EXE_coherence")))
    }

    fn with_worker(tests: &[&str], js_worker: PathBuf) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let suite: Vec<String> = tests.iter().map(|t| format!("{t:?}")).collect();
        std::fs::create_dir(dir.path().join("code_generation")).unwrap();
        std::fs::write(
            dir.path().join("code_generation/f.toml"),
            format!("tests = [\n  {}\n]\n", suite.join(",\n  ")),
        )
        .unwrap();
        let ctx = ScoreContext {
            scorers_dir: dir.path().to_path_buf(),
            js_worker,
        };
        Fixture { dir, ctx }
    }

    /// Scores a fenced candidate; asserts it finished within the bound.
    fn run(&self, code: &str) -> Score {
        self.run_answer(&format!("Here is the function:\n\n```js\n{code}\n```\n"))
    }

    fn run_answer(&self, answer: &str) -> Score {
        let spec = ScorerSpec::Js {
            suite: "code_generation/f.toml".into(),
            function: "f".into(),
        };
        let _cpu = crate::common::cpu_share();
        let start = Instant::now();
        let s = score(&spec, answer, &self.ctx);
        assert!(
            start.elapsed() < UPPER_BOUND,
            "took {:?}: {s:?}",
            start.elapsed()
        );
        s
    }
}

fn pattern(s: &Score) -> &str {
    s.extracted.as_deref().unwrap_or_default()
}

#[test]
fn a_good_candidate_passes_every_test() {
    let fx = Fixture::new(&["f(1) === 2", "f(-1) === 0", "__eq([f(0)], [1])"]);
    let s = fx.run("function f(x) {\n  return x + 1;\n}\nconsole.log(f(1));");
    assert_eq!(s.correct, Some(true), "{s:?}");
    assert_eq!(pattern(&s), "3/3 PPP");
    assert!(s.evidence.starts_with("3/3 tests passed"), "{}", s.evidence);
}

#[test]
fn a_buggy_candidate_fails_the_tests_it_gets_wrong() {
    let fx = Fixture::new(&["f(1) === 2", "f(-1) === 0", "f(0) === 1"]);
    let s = fx.run("const f = (x) => (x > 0 ? x + 1 : 0);");
    assert_eq!(s.correct, Some(false), "{s:?}");
    assert_eq!(pattern(&s), "2/3 PPF");
    assert!(
        s.evidence.contains("failed: t3 (expected true, got false)"),
        "{}",
        s.evidence
    );
}

#[test]
fn an_infinite_loop_inside_a_map_callback_is_stopped() {
    let fx = Fixture::new(&["f(1) === 1", "f(2) === 2"]);
    let s = fx.run("function f(x) {\n  return [x].map((v) => { while (true) {} })[0];\n}");
    assert_eq!(s.correct, Some(false));
    assert_eq!(pattern(&s), "0/2 EE", "{s:?}");
    assert!(s.evidence.contains("iteration loops"), "{}", s.evidence);
}

#[test]
fn work_spread_over_many_callback_calls_hits_the_deadline() {
    // Each callback stays under the per-call loop limit, so only the wall clock can stop it.
    let fx = Fixture::new(&["f(1) === 1", "f(2) === 2"]);
    let s = fx.run(
        "function f(x) {\n  [...Array(5000)].map(() => { let s = 0; for (let i = 0; i < 999999; i++) s += i; return s; });\n  return x;\n}",
    );
    assert_eq!(s.correct, Some(false));
    assert_eq!(pattern(&s), "0/2 T-", "{s:?}");
    assert!(s.evidence.contains("t1 (timed out after"), "{}", s.evidence);
    assert!(s.evidence.contains("t2 (not run"), "{}", s.evidence);
}

#[test]
fn a_billion_element_array_is_contained() {
    let fx = Fixture::new(&["f() === 0"]);
    let s = fx.run("function f() {\n  return new Array(1e9).fill(0)[0];\n}");
    assert_eq!(s.correct, Some(false));
    assert!(
        s.evidence.contains("timed out") || s.evidence.contains("out of memory"),
        "{s:?}"
    );
}

#[test]
fn the_memory_limit_applies() {
    // Without the address-space limit both would allocate (1 GiB buffer, 512 MiB string).
    let fx = Fixture::new(&[
        "f() === 2 ** 30",
        "(() => { let s = 'xy'; for (let i = 0; i < 28; i++) s += s; return s.length === 2 ** 29 && f() > 0; })()",
    ]);
    let s = fx.run("function f() {\n  return new Uint8Array(2 ** 30).length;\n}");
    assert_eq!(s.correct, Some(false), "{s:?}");
    assert_eq!(pattern(&s), "0/2 ET", "{s:?}");
    assert!(s.evidence.contains("t1 (RangeError"), "{}", s.evidence);
    assert!(s.evidence.contains("out of memory"), "{}", s.evidence);
}

#[test]
fn source_nested_too_deeply_for_the_parser_is_contained() {
    let fx = Fixture::new(&["f() === 1"]);
    let depth = 100_000;
    let s = fx.run(&format!(
        "function f() {{ return {}{}; }}",
        "[".repeat(depth),
        "]".repeat(depth)
    ));
    assert_eq!(pattern(&s), "0/1 T", "{s:?}");
    assert!(s.evidence.contains("stack overflow"), "{}", s.evidence);
}

#[test]
fn a_worker_that_never_reads_a_large_job_is_stopped_at_the_deadline() {
    // The job is larger than a pipe buffer, so writing it would block forever.
    let dir = tempfile::tempdir().unwrap();
    let stuck = dir.path().join("stuck.sh");
    std::fs::write(&stuck, "#!/bin/sh\nexec sleep 60\n").unwrap();
    make_executable(&stuck);
    let fx = Fixture::with_worker(&["f() === 1"], stuck);
    let padding = "// padding\n".repeat(30_000);
    let s = fx.run(&format!("{padding}function f() {{ return 1; }}"));
    assert_eq!(pattern(&s), "0/1 T", "{s:?}");
    assert!(s.evidence.contains("timed out"), "{}", s.evidence);
}

#[test]
fn unbounded_recursion_is_an_error() {
    let fx = Fixture::new(&["f(1) === 1"]);
    let s = fx.run("function f(n) {\n  return f(n + 1) + 1;\n}");
    assert_eq!(pattern(&s), "0/1 E", "{s:?}");
    assert!(s.evidence.contains("recursive calls"), "{}", s.evidence);
}

#[test]
fn dynamic_import_cannot_read_local_files() {
    let fx = Fixture::new(&["f('secret.mjs')", "f('data.json')"]);
    let secret = fx.dir.path().join("secret.mjs");
    std::fs::write(&secret, "export default 42;\n").unwrap();
    std::fs::write(fx.dir.path().join("data.json"), "{\"default\": 42}\n").unwrap();
    let dir = fx.dir.path().display().to_string();
    // Would pass if the module loader read either file.
    let code = format!(
        "async function f(name) {{\n  const path = {dir:?} + '/' + name;\n  const m = name.endsWith('.json') ? await import(path, {{ with: {{ type: 'json' }} }}) : await import(path);\n  return m.default === 42 || (m.default && m.default.default === 42);\n}}"
    );
    let s = fx.run(&code);
    assert_eq!(s.correct, Some(false), "{s:?}");
    assert_eq!(pattern(&s), "0/2 EE", "{s:?}");
    assert!(s.evidence.contains("rejected"), "{}", s.evidence);
}

#[test]
fn a_throwing_getter_fails_only_its_test() {
    let fx = Fixture::new(&["f().ok === true", "typeof f() === 'object'", "f()"]);
    let s = fx.run(
        "function f() {\n  return { get ok() { throw new Error('gotcha'); }, get size() { while (true) {} } };\n}",
    );
    // t3 reports the returned object without running its getters.
    assert_eq!(pattern(&s), "1/3 EPF", "{s:?}");
    assert!(s.evidence.contains("t1 (Error: gotcha"), "{}", s.evidence);
    assert!(
        s.evidence.contains("t3 (expected true, got"),
        "{}",
        s.evidence
    );
}

#[test]
fn an_infinite_loop_at_top_level_fails_every_test() {
    let fx = Fixture::new(&["f() === 1", "f() === 1"]);
    let s = fx.run("while (true) {}\nfunction f() { return 1; }");
    assert_eq!(pattern(&s), "0/2 EE", "{s:?}");
    assert!(
        s.evidence.contains("did not load") && s.evidence.contains("iteration loops"),
        "{}",
        s.evidence
    );
}

#[test]
fn answers_without_code_or_without_the_function_fail_clearly() {
    let fx = Fixture::new(&["f() === 1"]);
    let none = fx.run_answer("I cannot write code, sorry.");
    assert_eq!(none.correct, Some(false));
    assert_eq!(
        (none.extracted.as_deref(), none.detail),
        (None, Detail::NotFound)
    );
    let other = fx.run("function g() { return 1; }");
    assert!(
        other.evidence.contains("does not define `f`"),
        "{}",
        other.evidence
    );
}

#[test]
fn identical_code_runs_once() {
    // A worker wrapper that records each start as an empty file (the worker may not write
    // to files: RLIMIT_FSIZE is 0), then execs the real worker.
    let log_dir = tempfile::tempdir().unwrap();
    let starts = log_dir.path().join("starts");
    std::fs::create_dir(&starts).unwrap();
    let wrapper = log_dir.path().join("worker.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh
mktemp -p {starts:?} start.XXXXXX > /dev/null
exec {:?} \"$@\"\n",
            env!("CARGO_BIN_EXE_coherence")
        ),
    )
    .unwrap();
    make_executable(&wrapper);
    let fx = Fixture::with_worker(&["f(1) === 2"], wrapper);
    let code = "function f(x) { return x + 1; }";
    let first = fx.run_answer(&format!("Sure:\n```js\n{code}\n```"));
    let second = fx.run_answer(&format!("```javascript\n{code}\n```\nHope this helps!"));
    let third = fx.run_answer(&format!("```js\n{code} // different\n```"));
    assert_eq!(first.correct, Some(true), "{first:?}");
    assert_eq!(first.extracted, second.extracted);
    assert_eq!(third.correct, Some(true));
    let count = std::fs::read_dir(&starts).unwrap().count();
    assert_eq!(count, 2, "worker starts");
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_missing_suite_is_a_scorer_error() {
    let fx = Fixture::new(&["f() === 1"]);
    let spec = ScorerSpec::Js {
        suite: "code_generation/missing.toml".into(),
        function: "f".into(),
    };
    let s = score(&spec, "```js\nfunction f() { return 1; }\n```", &fx.ctx);
    assert_eq!(s.correct, Some(false));
    assert_eq!(s.extracted, None);
    assert!(
        s.evidence.starts_with("scorer error: suite"),
        "{}",
        s.evidence
    );
}
