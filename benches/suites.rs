//! Generated-suite and catalogue-loading benchmark: generating 10,000 items and scoring each
//! one's reference and wrong answer (the 2 s budget of issue 20), and loading a 10,000-prompt
//! catalogue file (linear since issue 21 item 14; it took 21.5 s when it was quadratic), and a
//! whole `compare --suite generated --items 2000` against two instant fakes (issue 20: under 5 s
//! end to end).
//!
//! Run with `cargo bench --bench suites`. Prints numbers; asserts nothing.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use coherence_testkit::{FakeServer, Reply};

use coherence::catalogue::{generator, load_catalogue};
use coherence::score::{score, ScoreContext};

const ITEMS: usize = 10_000;

fn generate_and_score() {
    let start = Instant::now();
    let items = generator::generate(generator::DEFAULT_SEED, ITEMS);
    let generated_in = start.elapsed();
    let ctx = ScoreContext::for_catalogue(Path::new("prompts"));
    let mut correct = 0;
    for p in &items {
        correct += usize::from(score(&p.score, &p.reference, &ctx).correct == Some(true));
        correct += usize::from(score(&p.score, &p.wrong, &ctx).correct == Some(true));
    }
    let total = start.elapsed();
    println!(
        "generated suite: {ITEMS} items generated in {:.3} s; generated and scored (reference and wrong answer each, {} answers scored correct) in {:.3} s",
        generated_in.as_secs_f64(),
        correct,
        total.as_secs_f64()
    );
}

fn load_large_catalogue(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::new();
    for i in 0..n {
        body.push_str(&format!(
            "[[prompt]]\nid = \"p{i}\"\nuser = \"What is {i} + 1?\"\nreference = \"{}\"\nwrong = \"{}\"\nscore = {{ type = \"numeric\", expected = \"{}\" }}\n\n",
            i + 1,
            i + 2,
            i + 1
        ));
    }
    std::fs::write(dir.path().join("deterministic_math.toml"), body).unwrap();
    let start = Instant::now();
    let catalogue = load_catalogue(dir.path()).unwrap();
    println!(
        "catalogue loading: {} prompts in one file loaded in {:.3} s",
        catalogue.prompts.len(),
        start.elapsed().as_secs_f64()
    );
}

/// A fake answering every generated item (seed 1) with its reference, at once.
fn instant_endpoint(items: usize) -> FakeServer {
    let answers: HashMap<String, String> = generator::generate(generator::DEFAULT_SEED, items)
        .into_iter()
        .map(|p| (p.question().to_string(), p.reference.clone()))
        .collect();
    FakeServer::start("m", move |req| match answers.get(&req.question()) {
        Some(a) => Reply::content(a),
        None => Reply::status(404, "unknown question"),
    })
}

fn compare_generated_end_to_end() {
    let items = 2_000;
    let (a, b) = (instant_endpoint(items), instant_endpoint(items));
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    // COHERENCE_BIN times another build (a release binary) against the same fakes.
    let bin = std::env::var("COHERENCE_BIN").unwrap_or(env!("CARGO_BIN_EXE_coherence").into());
    let out = Command::new(bin)
        .args([
            "compare",
            "--suite",
            "generated",
            "--items",
            &items.to_string(),
        ])
        .args(["--endpoint", &format!("a={}", a.url())])
        .args(["--endpoint", &format!("b={}", b.url())])
        .args(["--concurrency", "32", "--quiet", "--out"])
        .arg(dir.path().join("run"))
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run coherence");
    println!(
        "compare --suite generated --items {items} against two instant fakes ({} requests): {:.2} s end to end, exit {}",
        2 * items,
        start.elapsed().as_secs_f64(),
        out.status.code().unwrap_or(-1)
    );
}

fn main() {
    compare_generated_end_to_end();
    generate_and_score();
    for n in [2_500, 10_000] {
        load_large_catalogue(n);
    }
}
