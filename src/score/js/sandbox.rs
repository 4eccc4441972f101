//! The parent side of the JS sandbox: runs one job in a `coherence __js-worker` child with a
//! memory limit (RLIMIT_AS), a CPU backstop (RLIMIT_CPU), no core dumps or file writes, and a
//! wall-clock deadline after which the child is killed. Whatever happens becomes an `SuiteOutcome`.

use std::io::{Read, Write};
#[cfg(not(target_os = "linux"))]
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rlimit::Resource;

use super::outcome::{Status, SuiteOutcome, TestResult};
use super::protocol::{Event, LoadStage, ScriptJob, SuiteJob};

/// Limits on the worker process.
#[derive(Debug, Clone, Copy)]
pub struct ProcessLimits {
    /// Wall-clock time for the whole job (start-up, loading, every test).
    pub timeout: Duration,
    /// Address space of the worker in bytes.
    pub memory: u64,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        ProcessLimits {
            timeout: Duration::from_secs(4),
            memory: 512 << 20,
        }
    }
}

/// Worker output kept per stream; a worker cannot legitimately write more.
const MAX_OUTPUT: usize = 1 << 20;

/// Runs `job` in a child `worker __js-worker`; never panics, never waits past the deadline.
/// Err only when the worker cannot be started at all (a setup problem, not the candidate's).
pub fn run(worker: &Path, job: &SuiteJob, limits: ProcessLimits) -> Result<SuiteOutcome, String> {
    let (events, death) = execute(worker, serde_json::to_vec(job).unwrap_or_default(), limits)?;
    Ok(interpret(&events, job.tests.len(), &death))
}

/// How a script job ended, as the parent saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptOutcome {
    /// The worker finished and handed back its report.
    Report(String),
    /// The prelude or driver did not load (a setup problem, or a hostile artifact that broke it).
    LoadFailed(String),
    /// The worker was killed or died before reporting (time or memory limit, crash).
    Died(String),
}

/// Runs a script job (`coherence project`) in a child worker with the same limits as a test
/// job. Err only when the worker cannot be started at all.
pub fn run_script(
    worker: &Path,
    job: &ScriptJob,
    limits: ProcessLimits,
) -> Result<ScriptOutcome, String> {
    let (events, death) = execute(worker, serde_json::to_vec(job).unwrap_or_default(), limits)?;
    for event in &events {
        match event {
            Event::Report { report } => return Ok(ScriptOutcome::Report(report.clone())),
            Event::LoadFailed { reason, .. } => {
                return Ok(ScriptOutcome::LoadFailed(reason.clone()))
            }
            _ => {}
        }
    }
    Ok(ScriptOutcome::Died(death))
}

/// Starts a worker, hands it `payload`, collects its events until it ends or the deadline
/// passes, and says why it stopped (meaningful only when it stopped early).
fn execute(
    worker: &Path,
    payload: Vec<u8>,
    limits: ProcessLimits,
) -> Result<(Vec<Event>, String), String> {
    let mut child = spawn(worker, limits)
        .map_err(|e| format!("cannot start the JS worker {}: {e}", worker.display()))?;
    let deadline = Instant::now() + limits.timeout;
    if let Some(mut stdin) = child.stdin.take() {
        // On its own thread, so a job larger than the pipe buffer cannot block past the
        // deadline; the write ends when the worker reads it all or dies (closing the pipe).
        std::thread::spawn(move || {
            let _ = stdin.write_all(&payload);
        });
    }
    let (stdout, stderr, timed_out) = collect(&mut child, deadline);
    let status = child.wait();
    let events: Vec<Event> = String::from_utf8_lossy(&stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let death = if timed_out {
        format!("timed out after {} s", limits.timeout.as_secs_f64())
    } else {
        match status {
            Ok(s) => death_reason(s, &String::from_utf8_lossy(&stderr), limits),
            Err(e) => format!("cannot wait for the JS worker: {e}"),
        }
    };
    Ok((events, death))
}

/// Starts the worker and limits it before it gets its job (it runs nothing until then).
///
/// On Linux the parent applies the limits to the running child with prlimit(2): a `pre_exec`
/// hook would make std fork instead of posix_spawn, and fork copies the parent's page tables,
/// which measured 300 ms per candidate with a 1 GiB parent instead of ~15 ms.
fn spawn(worker: &Path, limits: ProcessLimits) -> std::io::Result<Child> {
    let mut cmd = Command::new(worker);
    cmd.arg("__js-worker")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let rlimits = [
        (Resource::AS, limits.memory),
        (Resource::CPU, limits.timeout.as_secs() + 2),
        (Resource::CORE, 0),
        (Resource::FSIZE, 0),
    ];
    #[cfg(not(target_os = "linux"))]
    // SAFETY: the closure runs between fork and exec; it only calls setrlimit (async-signal-safe)
    // on values prepared before the fork, and allocates nothing (`rlimit` allocates only to
    // report an unsupported resource; these four exist on every Unix). `pre_exec` itself is
    // what is unsafe: there is no safe way to run code in the child before exec.
    unsafe {
        cmd.pre_exec(move || {
            for (resource, value) in rlimits {
                rlimit::setrlimit(resource, value, value)?;
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    #[cfg(target_os = "linux")]
    for (resource, value) in rlimits {
        if let Err(e) = rlimit::prlimit(child.id() as i32, resource, Some((value, value)), None) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                e.kind(),
                format!("cannot limit the worker: {e}"),
            ));
        }
    }
    Ok(child)
}

/// Reads the child's stdout and stderr, each on its own thread, until both close; when the
/// deadline passes first, kills the child (which closes them) and says so (then true).
fn collect(child: &mut Child, deadline: Instant) -> (Vec<u8>, Vec<u8>, bool) {
    let (done, finished) = mpsc::channel();
    let read = |stream: Option<Box<dyn Read + Send>>| {
        let done = done.clone();
        std::thread::spawn(move || {
            let out = stream.map(read_capped).unwrap_or_default();
            let _ = done.send(());
            out
        })
    };
    let readers = [
        read(
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ),
        read(
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ),
    ];
    let mut timed_out = false;
    for _ in &readers {
        let left = deadline.saturating_duration_since(Instant::now());
        if finished.recv_timeout(left).is_err() {
            timed_out = true;
            let _ = child.kill();
            break;
        }
    }
    let [out, err] = readers.map(|r| r.join().unwrap_or_default());
    (out, err, timed_out)
}

/// Everything a stream says until it closes, keeping the first [`MAX_OUTPUT`] bytes.
fn read_capped(mut stream: Box<dyn Read + Send>) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return kept,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return kept,
        }
    }
}

/// Why a worker that did not finish its job stopped, from its exit status and stderr.
fn death_reason(status: ExitStatus, stderr: &str, limits: ProcessLimits) -> String {
    let memory_mib = limits.memory >> 20;
    if stderr.contains("memory allocation of") || stderr.contains("capacity overflow") {
        return format!("out of memory (limit {memory_mib} MiB)");
    }
    if stderr.contains("has overflowed its stack") || stderr.contains("stack overflow") {
        return "stack overflow".into();
    }
    let first_line = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| crate::text::clip(l, 120));
    match (status.signal(), status.code()) {
        (Some(libc::SIGXCPU), _) => "CPU time limit exceeded".into(),
        (Some(sig), _) => match first_line {
            Some(line) => format!("worker killed by signal {sig}: {line}"),
            None => format!("worker killed by signal {sig}"),
        },
        (None, code) => {
            let code = code.map_or("?".to_string(), |c| c.to_string());
            match first_line {
                Some(line) => format!("worker exited with code {code}: {line}"),
                None => format!("worker exited with code {code} before finishing"),
            }
        }
    }
}

/// A load failure as the evidence tells it.
fn load_failure(stage: LoadStage, reason: &str) -> String {
    match stage {
        LoadStage::Parse => format!("did not parse: {reason}"),
        LoadStage::Run => format!("did not load: {reason}"),
        LoadStage::Define => reason.to_string(),
    }
}

/// Turns the worker's events into an outcome; tests without a result inherit `death`.
fn interpret(events: &[Event], count: usize, death: &str) -> SuiteOutcome {
    let mut loaded = false;
    let mut tests = Vec::with_capacity(count);
    for event in events {
        match event {
            Event::LoadFailed { reason, stage } => {
                return SuiteOutcome::all(
                    count,
                    Status::Error,
                    *stage,
                    load_failure(*stage, reason),
                )
            }
            Event::Loaded => loaded = true,
            Event::Test { verdict, detail } if tests.len() < count => tests.push(TestResult {
                status: (*verdict).into(),
                detail: detail.clone(),
            }),
            Event::Test { .. } | Event::Report { .. } => {}
        }
    }
    if !loaded {
        return SuiteOutcome::all(
            count,
            Status::Terminated,
            LoadStage::Run,
            format!("stopped while loading: {death}"),
        );
    }
    if tests.len() < count {
        let stopped_at = tests.len() + 1;
        tests.push(TestResult {
            status: Status::Terminated,
            detail: death.to_string(),
        });
        while tests.len() < count {
            tests.push(TestResult {
                status: Status::Skipped,
                detail: format!("not run: the worker stopped at t{stopped_at}"),
            });
        }
    }
    SuiteOutcome {
        not_loaded: None,
        tests,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::js::protocol::TestVerdict;

    fn test(verdict: TestVerdict) -> Event {
        Event::Test {
            verdict,
            detail: String::new(),
        }
    }

    #[test]
    fn a_worker_that_died_mid_suite_blames_the_running_test() {
        let events = [
            Event::Loaded,
            test(TestVerdict::Pass),
            test(TestVerdict::Fail),
        ];
        let o = interpret(&events, 5, "timed out after 4 s");
        assert_eq!(o.pattern(), "1/5 PFT--");
        assert_eq!(o.tests[2].detail, "timed out after 4 s");
        assert_eq!(o.tests[4].detail, "not run: the worker stopped at t3");
    }

    #[test]
    fn load_failures_and_deaths_before_loading_fail_every_test() {
        let failed = interpret(
            &[Event::LoadFailed {
                reason: "SyntaxError".into(),
                stage: LoadStage::Parse,
            }],
            2,
            "",
        );
        assert_eq!(failed.pattern(), "0/2 EE");
        assert_eq!(
            failed.not_loaded.map(|n| n.reason).as_deref(),
            Some("did not parse: SyntaxError")
        );
        let died = interpret(&[], 2, "out of memory (limit 512 MiB)");
        assert_eq!(died.pattern(), "0/2 TT");
        assert_eq!(
            died.not_loaded.map(|n| n.reason).as_deref(),
            Some("stopped while loading: out of memory (limit 512 MiB)")
        );
        let complete = interpret(&[Event::Loaded, test(TestVerdict::Pass)], 1, "unused");
        assert!(complete.all_passed());
    }

    #[test]
    fn a_missing_worker_is_a_scorer_error() {
        let job = SuiteJob {
            code: "function f() {}".into(),
            function: "f".into(),
            tests: vec!["f()".into()],
            limits: Default::default(),
        };
        let e = run(
            Path::new("/nonexistent/coherence"),
            &job,
            ProcessLimits::default(),
        )
        .unwrap_err();
        assert!(e.starts_with("cannot start the JS worker"), "{e}");
    }
}
