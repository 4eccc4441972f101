//! `compare --until-decided` benchmark: the cost of a round must not grow with the rounds before
//! it. Two instant fake endpoints answer the generated items (seed 5) right or wrong on disjoint
//! quarters of them, so the pair is undecided at a 1-point margin and the run goes on to its cap;
//! the run is timed at `--max-items` 2,000 and 8,000 (rounds of 200) and the time per item
//! compared (issue 36: within 1.5x), with the `GET /models` requests each endpoint received.
//!
//! Run with `cargo bench --bench until_decided` (`-- --items A,B` for other caps). Prints
//! numbers; asserts nothing.

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use coherence::catalogue::generator;
use coherence_testkit::{FakeServer, Reply};

/// A fake answering generated item i with its wrong answer when `wrong(i)`, else its reference.
fn endpoint(items: usize, wrong: fn(usize) -> bool) -> FakeServer {
    let answers: HashMap<String, String> = generator::generate(5, items)
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let answer = if wrong(i) { &p.wrong } else { &p.reference };
            (p.question().to_string(), answer.clone())
        })
        .collect();
    FakeServer::start("m", move |req| match answers.get(&req.question()) {
        Some(a) => Reply::content(a),
        None => Reply::status(404, "unknown question"),
    })
}

/// A spread of the items that does not follow the generator's family order.
fn quarter(i: usize) -> usize {
    (i.wrapping_mul(2_654_435_761) >> 7) % 4
}

/// One run to `max_items`: its wall time, exit code, the items it sent and each endpoint's
/// `GET /models` count.
fn run(max_items: usize) -> (Duration, i32, usize, [usize; 2]) {
    let a = endpoint(max_items, |i| quarter(i) == 0);
    let b = endpoint(max_items, |i| quarter(i) == 1);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args([
            "compare",
            "--endpoint",
            &format!("a={}", a.url()),
            "--endpoint",
            &format!("b={}", b.url()),
            "--suite",
            "generated",
            "--seed",
            "5",
            "--until-decided",
            "--round-items",
            "200",
            "--max-items",
            &max_items.to_string(),
            "--margin",
            "1",
            "--concurrency",
            "8",
            "--quiet",
            "--out",
            &out.display().to_string(),
        ])
        .env_remove("OPENAI_API_KEY")
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("spawn coherence");
    let wall = start.elapsed();
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let sent = results["prompts"].as_array().map_or(0, Vec::len);
    let models = |f: &FakeServer| {
        f.requests()
            .iter()
            .filter(|r| r.path.ends_with("/models"))
            .count()
    };
    (
        wall,
        status.code().unwrap_or(-1),
        sent,
        [models(&a), models(&b)],
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let caps: Vec<usize> = args
        .iter()
        .position(|a| a == "--items")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![2_000, 8_000]);
    println!("compare --until-decided against two instant fakes, rounds of 200 items, --margin 1 (undecided: runs to the cap)");
    let mut per_item = Vec::new();
    for cap in caps {
        let (wall, code, sent, models) = run(cap);
        let each = wall.as_secs_f64() * 1000.0 / sent.max(1) as f64;
        println!(
            "--max-items {cap:>6}: {sent} items in {:.2} s ({each:.3} ms per item), exit {code}, GET /models per endpoint {models:?}",
            wall.as_secs_f64()
        );
        per_item.push((cap, each));
    }
    if let (Some(first), Some(last)) = (per_item.first(), per_item.last()) {
        if first.0 != last.0 {
            println!(
                "time per item at {} items / at {} items: {:.2}x (issue 36 asks at most 1.5x)",
                last.0,
                first.0,
                last.1 / first.1
            );
        }
    }
}
