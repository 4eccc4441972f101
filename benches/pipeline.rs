//! Pipeline benchmark: `coherence compare` throughput against fake endpoints (wall vs ideal, peak memory).
//!
//! Run with `cargo bench --bench pipeline`. Prints numbers; asserts nothing.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use coherence::fake::{FakeServer, Reply};

const PROMPTS: usize = 100;
const LATENCY: Duration = Duration::from_millis(200);
const CONCURRENCY: usize = 8;

/// A catalogue of `n` numeric prompts in `dir`.
fn write_catalogue(dir: &Path, n: usize) {
    let mut body = String::new();
    for i in 0..n {
        body.push_str(&format!(
            "[[prompt]]\nid = \"p{i}\"\nuser = \"What is {i} + 1?\"\nreference = \"{}\"\nwrong = \"{}\"\nscore = {{ type = \"numeric\", expected = \"{}\" }}\n\n",
            i + 1,
            i + 2,
            i + 1
        ));
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("deterministic_math.toml"), body).unwrap();
}

/// Run the binary, returning (wall time, exit code, peak resident memory in KiB).
#[allow(clippy::zombie_processes)] // reaped by wait4, which also reports the peak memory
fn run_measured(args: &[String]) -> (Duration, i32, i64) {
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .spawn()
        .expect("spawn coherence");
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child with valid out-pointers.
    unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    (start.elapsed(), libc::WEXITSTATUS(status), usage.ru_maxrss)
}

fn compare_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("prompts");
    write_catalogue(&catalogue, PROMPTS);
    let answer = |req: &coherence::fake::Incoming| {
        let n: u64 = req
            .question()
            .split_whitespace()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Reply::content(&format!("The answer is {}.", n + 1)).after(LATENCY)
    };
    let a = FakeServer::start("bench", answer);
    let b = FakeServer::start("bench", answer);
    let args: Vec<String> = [
        "compare",
        "--catalogue",
        &catalogue.display().to_string(),
        "--endpoint",
        &format!("a={}", a.url()),
        "--endpoint",
        &format!("b={}", b.url()),
        "--concurrency",
        &CONCURRENCY.to_string(),
        "--out",
        &dir.path().join("run").display().to_string(),
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (wall, code, peak_kib) = run_measured(&args);
    let requests = PROMPTS * 2;
    let ideal = LATENCY.as_secs_f64() * requests as f64 / (2 * CONCURRENCY) as f64;
    println!(
        "compare: {requests} requests, 2 endpoints x concurrency {CONCURRENCY}, {} ms latency: \
         wall {:.2} s, ideal {ideal:.2} s, wall/ideal {:.2}, peak RSS {:.1} MiB, exit {code}",
        LATENCY.as_millis(),
        wall.as_secs_f64(),
        wall.as_secs_f64() / ideal,
        peak_kib as f64 / 1024.0
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs this too, so keep it quick.
    compare_throughput();
}
