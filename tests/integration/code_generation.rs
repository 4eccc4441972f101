//! `coherence compare` over the shipped code_generation prompts against fake endpoints: the
//! JS scorer runs in the real binary (re-executed as its own worker) and drives the verdicts.

use std::collections::HashMap;
use std::path::Path;

use crate::common::*;
use serde_json::json;

#[test]
fn a_buggy_function_is_a_diff_and_identical_code_is_same() {
    let catalogue_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let catalogue = coherence::catalogue::load_catalogue(&catalogue_dir).unwrap();
    let answers = |pick_wrong: &'static str| {
        let by_question: HashMap<String, (String, String)> = catalogue
            .prompts
            .iter()
            .filter(|p| p.category == "code_generation")
            .map(|p| {
                let wrong = if p.id == pick_wrong {
                    &p.wrong
                } else {
                    &p.reference
                };
                (p.question().to_string(), (p.id.clone(), wrong.clone()))
            })
            .collect();
        FakeServer::start("test-model", move |req| {
            let (_, answer) = &by_question[&req.question()];
            Reply::content(answer)
        })
    };
    let good = answers("");
    let buggy = answers("humaneval_fib");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = coherence(
        &[
            "compare",
            "--catalogue",
            &catalogue_dir.display().to_string(),
            "--only",
            "humaneval_close,humaneval_fib",
            "--endpoint",
            &format!("a={}", good.url()),
            "--endpoint",
            &format!("b={}", buggy.url()),
            "--out",
            &run.display().to_string(),
            "--quiet",
            "--fail-on",
            "diff>0",
        ],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 1, "{}", stderr(&out));
    let r = results(&run);
    let close = prompt(&r, "humaneval_close");
    assert_eq!(close["verdict"], json!("same"));
    assert_eq!(close["answers"]["b"]["extracted"], json!("6/6 PPPPPP"));
    let fib = prompt(&r, "humaneval_fib");
    assert_eq!(fib["verdict"], json!("diff"));
    assert_eq!(fib["answers"]["a"]["correct"], json!(true));
    assert_eq!(fib["answers"]["b"]["correct"], json!(false));
    assert_eq!(fib["answers"]["b"]["extracted"], json!("1/6 PFFFFF"));
}

/// Scores `answer` to the shipped prompt `id` with its shipped suite, the real binary as worker.
fn score_shipped(id: &str, answer: &str) -> coherence::score::Score {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let catalogue = coherence::catalogue::load_catalogue(&root.join("prompts")).unwrap();
    let ctx = coherence::score::ScoreContext {
        scorers_dir: root.join("scorers"),
        js_worker: env!("CARGO_BIN_EXE_coherence").into(),
    };
    coherence::score::score(&catalogue.get(id).unwrap().score, answer, &ctx)
}

fn ran_tests(s: &coherence::score::Score) -> bool {
    matches!(&s.detail, coherence::score::Detail::Tests(t) if t.ran)
}

/// Real answers from `runs/example-smollm2-kv-demo-catalogue`: a bare fence, then the ```javascript one.
/// Each used to run the fence line as code (`did not load: SyntaxError: unterminated template
/// literal`); the function now runs against its tests.
#[test]
fn code_after_a_doubled_fence_runs_its_tests() {
    for (id, answer, pattern) in [
        (
            "humaneval_largest_divisor",
            "```\n```javascript\nfunction largestDivisor(n) {\n    return Math.max(Math.max(x => x % n === 0 ? n % n : n % 1) || n % 2);\n}\n```\n\nExample usage:\n```javascript\nconsole.log(largestDivisor(15)); // Output: 5\nconsole.log(largestDivisor(7)); // Output: 1\n```",
            "2/6 PPFFFF",
        ),
        (
            "humaneval_monotonic",
            "```\n```javascript\nfunction monotonic(arr) {\n    return arr.length === 1 && arr[0] === 1 && arr[0] === 2;\n}\n```\n\nExample usage:\n```javascript\nconsole.log(monotonic([1, 2, 4, 20])); // true\nconsole.log(monotonic([1, 2, 4, 10])); // false\n```",
            "2/6 FPFFPF",
        ),
    ] {
        let s = score_shipped(id, answer);
        assert!(ran_tests(&s), "{id}: {s:?}");
        assert_eq!(s.extracted.as_deref(), Some(pattern), "{id}: {s:?}");
    }
}

/// No code defining the function is no answer, with the reason; real code that does not parse
/// was located: a run that failed, said so.
#[test]
fn code_answers_without_the_function_are_no_answer() {
    let renamed = score_shipped(
        "humaneval_fib",
        "```\n\n```javascript\nfunction fibonacci(n) {\n    return fibonacci(1, n);\n}\n```\n\nThis function uses a recursive approach to calculate the Fibonacci sequence, where each subsequent Fibonacci number is the sum of the previous two Fibonacci numbers.",
    );
    assert_eq!(renamed.correct, Some(false));
    assert_eq!(
        renamed.evidence,
        "no answer: the code does not define `fib`; code: fenced block"
    );
    let prose = score_shipped("humaneval_fib", "The Fibonacci numbers grow exponentially.");
    assert_eq!(
        prose.evidence,
        "no answer: no JavaScript function `fib` found in the answer"
    );
    assert!(!ran_tests(&prose) && !ran_tests(&renamed));
    let broken = score_shipped(
        "humaneval_sum_product",
        "```javascript\nfunction sumProduct(numbers) {\n    return [0, 1] + Math.max((x => x === 2 || x === 3 ? 1 : x)];\n}\n```",
    );
    assert_eq!(broken.correct, Some(false));
    assert!(
        matches!(&broken.detail, coherence::score::Detail::Tests(t) if !t.ran),
        "{broken:?}"
    );
    assert!(
        broken
            .evidence
            .starts_with("no test ran (0/6 passed); did not parse: SyntaxError"),
        "{}",
        broken.evidence
    );
}
