//! Shared helpers for the integration tests: a small catalogue, running the binary, reading a run folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use coherence_testkit::{FakeServer, Incoming, Reply};

/// Questions of the test catalogue, by prompt id.
pub const LETTERS_Q: &str = "How many times does the letter 'r' appear in 'strawberry'?";
pub const CAPITAL_Q: &str = "What is the capital of France?";
pub const JSON_Q: &str = "Return a JSON object with key \"n\" set to 2.";
pub const EGGS_Q: &str = "Janet sells 9 eggs at $2 each. How many dollars does she make?";
pub const COMPLETION_Q: &str = "The capital of Italy is";

/// A small catalogue in `dir/prompts` covering numeric, exact, JSON and raw completion prompts.
pub fn write_catalogue(dir: &Path) -> PathBuf {
    let prompts = dir.join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("counting_traps.toml"),
        format!(
            r#"
[[prompt]]
id = "count_letters"
user = "{LETTERS_Q}"
reference = "3"
wrong = "2"
score = {{ type = "numeric", expected = "3" }}
"#
        ),
    )
    .unwrap();
    std::fs::write(
        prompts.join("factual.toml"),
        format!(
            r#"
[[prompt]]
id = "capital"
user = "{CAPITAL_Q}"
reference = "Paris"
wrong = "Lyon"
score = {{ type = "exact", expected = "Paris" }}

[[prompt]]
id = "capital_completion"
kind = "completion"
prompt = "{COMPLETION_Q}"
max_tokens = 16
reference = "Rome."
wrong = "Milan."
score = {{ type = "exact", expected = "Rome" }}
"#
        ),
    )
    .unwrap();
    std::fs::write(
        prompts.join("structured_output.toml"),
        format!(
            r#"
[[prompt]]
id = "json_n"
user = '{JSON_Q}'
reference = '{{"n": 2}}'
wrong = '{{"n": 3}}'
score = {{ type = "json", required = {{ n = "integer" }}, values = {{ n = 2 }} }}
"#
        ),
    )
    .unwrap();
    std::fs::write(
        prompts.join("deterministic_math.toml"),
        format!(
            r#"
[[prompt]]
id = "eggs"
user = "{EGGS_Q}"
reference = "18"
wrong = "16"
score = {{ type = "numeric", expected = "18" }}
"#
        ),
    )
    .unwrap();
    prompts
}

/// The correct answer to each test question.
pub fn correct_answer(question: &str) -> &'static str {
    match question {
        LETTERS_Q => "The letter r appears **3** times.",
        CAPITAL_Q => "The capital of France is Paris.",
        JSON_Q => "{\"n\": 2}",
        EGGS_Q => "9 * 2 = 18, so she makes $18.",
        COMPLETION_Q => " Rome.",
        _ => "I don't know.",
    }
}

/// That `text`, printed on a terminal, holds none of the characters that would drive it: ESC
/// (and so CSI and OSC sequences), BEL, the C1 CSI, a bidi override.
pub fn assert_no_terminal_controls(text: &str) {
    for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(
            !text.contains(raw),
            "{raw:?} reaches the terminal: {text:?}"
        );
    }
}

/// A baseline a watch can use, in `dir/baseline`: `items` generated items answered twice by
/// `server` (`determinism --repeats 2 --logprobs`: the second answer is the control), with
/// `env` set.
pub fn watch_baseline(
    dir: &Path,
    server: &FakeServer,
    items: usize,
    env: &[(&str, &str)],
) -> PathBuf {
    let run = dir.join("baseline");
    let out = coherence(
        &[
            "determinism",
            "--repeats",
            "2",
            "--suite",
            "generated",
            "--items",
            &items.to_string(),
            "--endpoint",
            &format!("prod={}", server.url()),
            "--logprobs",
            "--out",
            run.to_str().unwrap(),
            "--quiet",
        ],
        dir,
        env,
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    run
}

/// A fake endpoint that answers every question correctly.
pub fn correct_server() -> FakeServer {
    FakeServer::start("test-model", |req| {
        Reply::content(correct_answer(&req.question()))
    })
}

/// Timing-sensitive tests hold this lock so that, on a small CI machine, they do not compete with
/// each other for the CPU while measuring rates and latencies.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A share of the CPU for a test that is CPU-bound and held to a wall-clock limit (the JS sandbox's
/// deadlines, a project scenario's timeout, a statistics run bounded in time): `cargo test` runs 8
/// tests at a time (`.cargo/config.toml`), and eight such tests on two cores would each run four
/// times slower than alone. At most as many hold a share at once as the machine has cores; the
/// tests that wait on loopback run beside them.
pub fn cpu_share() -> CpuShare {
    let (lock, freed) = &CPU_SHARES;
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut held = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    while *held >= cores {
        held = freed
            .wait(held)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
    }
    *held += 1;
    CpuShare
}

static CPU_SHARES: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

/// Held while a CPU-bound test runs; gives its share back when dropped.
pub struct CpuShare;

impl Drop for CpuShare {
    fn drop(&mut self) {
        let (lock, freed) = &CPU_SHARES;
        *lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) -= 1;
        freed.notify_one();
    }
}

/// Run the binary with OPENAI_API_KEY removed from the environment unless given in `env`.
pub fn coherence<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    cwd: &Path,
    env: &[(&str, &str)],
) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coherence"));
    cmd.args(args).current_dir(cwd).env_remove("OPENAI_API_KEY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run coherence")
}

/// Start the binary (OPENAI_API_KEY removed) with stdout and stderr captured; wait until `ready()`
/// holds (at most 20 s, panicking with `what` otherwise), send SIGTERM and wait for the exit.
/// Returns the output and how long the exit took after the signal.
#[cfg(unix)]
pub fn sigterm_when<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    what: &str,
    ready: impl Fn() -> bool,
) -> (Output, Duration) {
    let child = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start coherence");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let signalled = Instant::now();
    // SAFETY: kill(2) on the id of a child this process started and has not yet waited for.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let out = child.wait_with_output().expect("wait for coherence");
    (out, signalled.elapsed())
}

/// `compare --catalogue CATALOGUE --endpoint NAME=URL … --out OUT`, ready for more flags.
pub fn compare_args(
    catalogue: &Path,
    endpoints: &[(&str, &FakeServer)],
    out: &Path,
) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "compare".into(),
        "--catalogue".into(),
        catalogue.display().to_string(),
    ];
    for (name, server) in endpoints {
        args.push("--endpoint".into());
        args.push(format!("{name}={}", server.url()));
    }
    args.extend(["--out".into(), out.display().to_string()]);
    // The A-vs-A control and the decode-logprobs probe add requests that most tests count;
    // tests/integration/identity.rs runs with them.
    args.extend(["--control", "0", "--no-logprobs"].map(String::from));
    args
}

/// `compare --resume RUN --quiet` plus `extra`, run from `dir`.
pub fn resume(dir: &Path, run: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "compare".to_string(),
        "--resume".into(),
        run.display().to_string(),
        "--quiet".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    coherence(&args, dir, &[])
}

/// `compare` with the test catalogue, fast retries, no progress, output in `dir/run`.
pub fn compare(dir: &Path, endpoints: &[(&str, &FakeServer)], extra: &[&str]) -> (Output, PathBuf) {
    let out = dir.join("run");
    let mut args = compare_args(&write_catalogue(dir), endpoints, &out);
    args.extend(["--backoff-ms", "10", "--quiet"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    (coherence(&args, dir, &[]), out)
}

pub fn exit_code(out: &Output) -> i32 {
    out.status.code().expect("exit code")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn results(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap()).unwrap()
}

pub fn records(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The prompt entry of results.json with this id.
pub fn prompt<'a>(results: &'a Value, id: &str) -> &'a Value {
    results["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no prompt {id} in results"))
}

/// Records for one prompt and endpoint.
pub fn records_for<'a>(records: &'a [Value], prompt: &str, endpoint: &str) -> Vec<&'a Value> {
    records
        .iter()
        .filter(|r| r["prompt"] == prompt && r["endpoint"] == endpoint)
        .collect()
}

/// The catalogue shipped in the repository.
pub fn shipped_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts")
}

/// A fake endpoint answering each shipped-catalogue question with `pick(prompt)`.
pub fn catalogue_endpoint(pick: fn(&coherence::catalogue::Prompt) -> &str) -> FakeServer {
    let catalogue = coherence::catalogue::load_catalogue(&shipped_dir()).unwrap();
    let answers: std::collections::HashMap<String, String> = catalogue
        .prompts
        .iter()
        .map(|p| (p.question().to_string(), pick(p).to_string()))
        .collect();
    assert_eq!(
        answers.len(),
        catalogue.prompts.len(),
        "questions must be unique"
    );
    FakeServer::start("m", move |req| match answers.get(&req.question()) {
        Some(a) => Reply::content(a),
        None => Reply::status(404, "unknown question"),
    })
}
