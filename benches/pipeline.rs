//! Pipeline benchmark: `coherence compare` throughput against fake endpoints (wall vs ideal, peak
//! memory), the cost `--logprobs` teacher forcing adds to it (one scoring request per reference
//! completion per endpoint), and offline `coherence score` / `coherence report` on a run of
//! 40,000 records (100 prompts x 2 endpoints x 200 repeats) built from the shipped catalogue's
//! reference and wrong answers (JS unit tests included).
//!
//! Run with `cargo bench --bench pipeline` (`-- --scoring-only` for the offline part alone;
//! `-- --keep DIR` writes the 40,000-record run into DIR once and scores it there on every run).
//! Prints numbers; asserts nothing.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use coherence_testkit::{FakeServer, Reply};

const PROMPTS: usize = 100;
const LATENCY: Duration = Duration::from_millis(200);
const CONCURRENCY: usize = 8;
/// Code answers vary over this many repeats: 12 code prompts x 2 endpoints x 50 = 1,200 distinct
/// JS candidates for the sandbox, however many repeats the run has.
const JS_VARIANTS: u32 = 50;

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

/// What one run of the binary cost.
struct Measured {
    wall: Duration,
    code: i32,
    /// The process's own peak resident memory (its VmHWM, read every 2 ms until it exits).
    own_kib: i64,
    /// The peak of the process and every child it waited for (`score`'s JS sandbox workers).
    with_children_kib: i64,
}

impl Measured {
    /// "peak RSS X MiB", with the children's peak when one of them went higher.
    fn peak(&self) -> String {
        let mib = |kib: i64| kib as f64 / 1024.0;
        let mut text = format!("peak RSS {:.1} MiB", mib(self.own_kib));
        if self.with_children_kib > self.own_kib {
            text += &format!(
                " ({:.1} MiB with its child processes)",
                mib(self.with_children_kib)
            );
        }
        text
    }
}

/// The high-water mark of `pid`'s resident memory, in KiB (None once it has exited).
fn vm_hwm_kib(pid: u32) -> Option<i64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Run the binary and measure it.
#[allow(clippy::zombie_processes)] // reaped by wait4, which also reports the peak memory
fn run_measured(args: &[String]) -> Measured {
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_coherence"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .spawn()
        .expect("spawn coherence");
    let pid = child.id();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut own_kib = 0;
    loop {
        // Read before asking whether it ended: the last reading is taken after all but the
        // last 2 ms of its life, and the mark never goes down.
        own_kib = vm_hwm_kib(pid).unwrap_or(own_kib);
        // SAFETY: waiting for our own child with valid out-pointers.
        let done = unsafe { libc::wait4(pid as i32, &mut status, libc::WNOHANG, &mut usage) };
        if done != 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Measured {
        wall: start.elapsed(),
        code: libc::WEXITSTATUS(status),
        own_kib,
        with_children_kib: usage.ru_maxrss,
    }
}

/// Tokens that keep their leading space, with each line break a token of its own.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in text.chars() {
        let starts = c == '\n'
            || out.last().is_none_or(|t| t == "\n")
            || (c == ' ' && !out.last().unwrap().trim().is_empty());
        if starts {
            out.push(String::new());
        }
        out.last_mut().unwrap().push(c);
    }
    out
}

/// A completions `logprobs` object listing `toks`, each its own top-1.
fn listing(toks: &[String]) -> serde_json::Value {
    let tops: Vec<_> = toks
        .iter()
        .map(|t| serde_json::json!({t: -0.1, " x": -3.0}))
        .collect();
    serde_json::json!({"tokens": toks, "token_logprobs": toks.iter().map(|_| -0.1).collect::<Vec<_>>(), "top_logprobs": tops})
}

/// Chat answers "The answer is N + 1.", and (for teacher forcing) completions echo and decode.
fn bench_reply(req: &coherence_testkit::Incoming) -> Reply {
    let body = &req.body;
    if body.get("messages").is_none() {
        let prompt = body["prompt"].as_str().unwrap_or_default();
        let toks = if body["echo"] == serde_json::json!(true) {
            tokens(prompt)
        } else {
            vec![" one".to_string(), " two".to_string()]
        };
        return Reply::json(
            200,
            serde_json::json!({"object": "text_completion", "choices": [{"index": 0, "text": toks.concat(),
                "finish_reason": "length", "logprobs": listing(&toks)}]}),
        )
        .after(LATENCY);
    }
    let n: u64 = req
        .question()
        .split_whitespace()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Reply::content(&format!("The answer is {}.", n + 1)).after(LATENCY)
}

/// `compare` of two fake endpoints; with `logprobs`, teacher forcing too. Returns the wall time.
fn compare_throughput(logprobs: bool) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("prompts");
    write_catalogue(&catalogue, PROMPTS);
    let template = dir.path().join("template.jinja");
    std::fs::write(
        &template,
        "{% for m in messages %}{{ m.role + ':\\n' + m.content + '\\n' }}{% endfor %}{{ 'assistant:\\n' }}",
    )
    .unwrap();
    let a = FakeServer::start("bench", bench_reply);
    let b = FakeServer::start("bench", bench_reply);
    let mut args: Vec<String> = [
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
    if logprobs {
        args.extend([
            "--logprobs".into(),
            "--chat-template".into(),
            template.display().to_string(),
        ]);
    }
    let run = run_measured(&args);
    let wall = run.wall;
    let sent: usize = [&a, &b].iter().map(|s| s.completion_requests().len()).sum();
    let label = if logprobs {
        "compare --logprobs"
    } else {
        "compare"
    };
    // Answers, then (with --logprobs) each endpoint's mode probe and self-checks (a decode, then a
    // re-score: 3 request times), and one scoring request per answer per endpoint; each endpoint
    // runs CONCURRENCY at a time, the two side by side.
    let ideal = if logprobs {
        LATENCY.as_secs_f64() * ((2 * PROMPTS) as f64 / CONCURRENCY as f64 + 3.0)
    } else {
        LATENCY.as_secs_f64() * PROMPTS as f64 / CONCURRENCY as f64
    };
    println!(
        "{label}: {sent} requests, 2 endpoints x concurrency {CONCURRENCY}, {} ms latency: \
         wall {:.2} s, ideal {ideal:.2} s, wall/ideal {:.2}, {}, exit {}",
        LATENCY.as_millis(),
        wall.as_secs_f64(),
        wall.as_secs_f64() / ideal,
        run.peak(),
        run.code
    );
    wall
}

/// A run folder of `prompts x 2 endpoints x repeats` records over the shipped catalogue: endpoint
/// `a` always gives the reference answer, `b` the wrong one on every third repeat.
fn synthetic_run(dir: &Path, repeats: u32) -> usize {
    use coherence::endpoint::{Completion, EndpointSpec};
    use coherence::run::{CatalogueInfo, EndpointInfo, Manifest, Record, Sampling};
    use coherence::run_folder::RunHeader;
    use std::io::Write;

    let catalogue_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let catalogue =
        coherence::catalogue::load_catalogue(&catalogue_dir).expect("shipped catalogue");
    let now = chrono::Utc::now();
    let endpoint = |name: &str| EndpointInfo {
        spec: EndpointSpec {
            name: name.into(),
            base_url: format!("http://{name}.invalid/v1"),
            model: Some("m".into()),
            api_key_env: None,
            sampling_override: Default::default(),
        },
        models: None,
        replayed_from: Vec::new(),
    };
    let mut header = RunHeader::begin(None, Vec::new());
    header.tool = "coherence bench".into();
    header.end(false);
    let manifest = Manifest {
        catalogue: CatalogueInfo {
            dir: catalogue_dir.display().to_string(),
            hash: catalogue.hash.clone(),
            ..CatalogueInfo::default()
        },
        endpoints: vec![endpoint("a"), endpoint("b")],
        prompts: catalogue.prompts.iter().map(|p| p.id.clone()).collect(),
        repeats,
        fail_on: coherence::gate::Gate::default_compare(),
        ..Manifest::new(header, Sampling::deterministic(1024))
    };
    std::fs::create_dir_all(dir).unwrap();
    manifest.write(dir).unwrap();
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(dir.join("records.jsonl")).unwrap());
    let mut n = 0;
    for p in &catalogue.prompts {
        for repeat in 0..repeats {
            // Code answers differ per repeat (a comment inside the function), so every JS
            // candidate is a new one for the sandbox, as it would be with a real sampler.
            let vary = |text: &str, endpoint: &str| {
                if p.category == "code_generation" {
                    text.replacen(
                        "function ",
                        &format!("/* {endpoint}{} */ function ", repeat % JS_VARIANTS),
                        1,
                    )
                } else {
                    text.to_string()
                }
            };
            for (endpoint, answer) in [
                ("a", &p.reference),
                (
                    "b",
                    if repeat % 3 == 0 {
                        &p.wrong
                    } else {
                        &p.reference
                    },
                ),
            ] {
                let answer = &vary(answer, endpoint);
                let record = Record {
                    prompt: p.id.clone(),
                    endpoint: endpoint.into(),
                    max_tokens: 1024,
                    repeat,
                    request_hash: "0".repeat(16),
                    started_at: now,
                    finished_at: now,
                    latency_ms: 100.0,
                    elapsed_ms: 100.0,
                    attempts: 1,
                    http_status: Some(200),
                    completion: Completion {
                        content: Some(answer.as_str().into()),
                        answer: Some(answer.as_str().into()),
                        finish_reason: Some("stop".into()),
                        model: Some("m".into()),
                        ..Completion::default()
                    },
                    server: None,
                    error: None,
                    note: None,
                    raw_body: Some(
                        serde_json::json!({"choices": [{"message": {"content": answer}}]})
                            .to_string()
                            .into(),
                    ),
                    texts_in_raw_body: false,
                };
                serde_json::to_writer(&mut out, &record).unwrap();
                out.write_all(b"\n").unwrap();
                n += 1;
            }
        }
    }
    out.flush().unwrap();
    n
}

/// `score` and `report` of a synthetic 40,000-record run, in `keep` when given (written there once
/// and reused, so a profiler can be pointed at the same folder), else in a temporary folder.
fn offline_scoring(keep: Option<&Path>) {
    let dir = tempfile::tempdir().unwrap();
    let run = keep.map_or_else(|| dir.path().join("run"), Path::to_path_buf);
    let records = if run.join("records.jsonl").exists() {
        std::fs::read_to_string(run.join("records.jsonl"))
            .unwrap()
            .lines()
            .count()
    } else {
        synthetic_run(&run, 200)
    };
    for command in ["score", "report"] {
        let m = run_measured(&[command.to_string(), run.display().to_string()]);
        println!(
            "{command}: {records} records ({} prompts x 2 endpoints x 200 repeats, 1,200 distinct JS candidates): wall {:.2} s, {}, exit {}",
            records / 400,
            m.wall.as_secs_f64(),
            m.peak(),
            m.code
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let keep = args
        .iter()
        .position(|a| a == "--keep")
        .and_then(|i| args.get(i + 1))
        .map(Path::new);
    if args.iter().any(|a| a == "--scoring-only") {
        offline_scoring(keep);
        return;
    }
    let plain = compare_throughput(false);
    let forced = compare_throughput(true);
    println!(
        "teacher forcing adds {:.2} s ({:.0}%) to that compare",
        (forced - plain).as_secs_f64(),
        100.0 * (forced.as_secs_f64() / plain.as_secs_f64() - 1.0)
    );
    offline_scoring(keep);
}
