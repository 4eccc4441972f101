//! A small hand-made `Results` for the renderers' unit snapshots: two endpoints (`full`, the
//! reference, and `spark`), three repeats, and one prompt for each verdict (same, diff, review,
//! fail), a diff of each kind (flip, answer, format) and each difference label (deployment
//! difference, sampler noise, inconclusive), repeats in send order with the prompt sent before,
//! a truncated answer, a runaway repetition in a long text, a `same` prompt worth a look, a
//! prompt-token parity mismatch, a request error, a reasoning retry, differing fingerprints, a
//! failed gate, a flip on a weak read and a warning.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use serde_json::{json, Map};

use crate::analysis::{
    mcnemar_exact, pair_families, weak_reads, wilson, AnswerResult, CategoryRollup, Class,
    CodeAnswers, Determinism, Difference, Divergence, DivergenceKind, EndpointSummary, GateResult,
    Identity, Interval, KindCounts, McNemarCounts, NearTieCounts, PairResult, PairStatistics,
    PairedCounts, Parity, PromptResult, Quality, QualityVerdict, RepeatAnswer, RepeatDivergence,
    Results, RunSampling, SameModel, Stability, Summary, TokenDivergence, TokenDivergenceCounts,
    Verdict, SCHEMA_VERSION,
};

const REF: &str = "full";
const OTHER: &str = "spark";

pub(super) fn results() -> Results {
    let prompts = vec![
        same(),
        diff(),
        review(),
        fail(),
        answer_diff(),
        format_diff(),
        same_but_look(),
    ];
    let mut summary = Summary::default();
    for p in &prompts {
        summary.add(p);
    }
    summary.same_model = Some(SameModel::No);
    summary.same_model_because = vec![
        "prompt tokens differ on 1 of 6 prompts: another chat template or tokenizer".into(),
        "quality inconclusive on 5 graded items".into(),
        "generation perturbed (identical text on 17%)".into(),
    ];
    Results {
        schema_version: SCHEMA_VERSION,
        tool: "coherence 0.0.0".into(),
        generated_at: Utc.with_ymd_and_hms(2025, 1, 2, 3, 4, 5).unwrap(),
        reference: REF.into(),
        sampling: RunSampling {
            temperature: 0.0,
            stream: false,
            max_tokens: 1024,
            max_tokens_override: None,
            other_budgets: BTreeMap::from([(4096, 1)]),
            repeats: 3,
            params: Map::from_iter([("seed".to_string(), json!(7))]),
            logprobs: None,
        },
        endpoints: vec![
            endpoint(
                REF,
                "fp_a1",
                Some("vllm/0.6.3"),
                [4, 2, 1, 0],
                &[
                    ("deterministic", 1),
                    ("deterministic-correct", 4),
                    ("deterministic-wrong", 1),
                    ("non-deterministic", 1),
                ],
                0,
            ),
            endpoint(
                OTHER,
                "fp_b2",
                None,
                [2, 3, 1, 1],
                &[
                    ("deterministic", 1),
                    ("deterministic-correct", 2),
                    ("deterministic-wrong", 2),
                    ("failed", 1),
                    ("non-deterministic", 1),
                ],
                1,
            ),
        ],
        summary,
        nondeterministic: 2,
        deployment_differences: 1,
        complete: false,
        request_failures: 1,
        missing: 0,
        categories: vec![
            category(
                "counting_traps",
                &[(Verdict::Diff, Some(DivergenceKind::Flip))],
                1,
                0,
            ),
            category("creative", &[(Verdict::Review, None)], 0, 0),
            category(
                "deterministic_math",
                &[
                    (Verdict::Same, None),
                    (Verdict::Diff, Some(DivergenceKind::Answer)),
                ],
                1,
                1,
            ),
            category(
                "factual",
                &[(Verdict::Fail, None), (Verdict::Same, None)],
                2,
                1,
            ),
            category(
                "structured_output",
                &[(Verdict::Format, Some(DivergenceKind::Format))],
                0,
                0,
            ),
        ],
        quality: vec![quality()],
        stability: vec![
            Stability {
                endpoint: REF.into(),
                repeats: 3,
                measured: 7,
                stable: 6,
                unstable: 1,
                cache_split: 1,
                back_to_back: true,
            },
            Stability {
                endpoint: OTHER.into(),
                repeats: 3,
                measured: 6,
                stable: 5,
                unstable: 1,
                cache_split: 0,
                back_to_back: false,
            },
        ],
        identity: vec![Identity {
            reference: REF.into(),
            other: OTHER.into(),
            identical: 1,
            same_answer: 1,
            diverged: 4,
            failed: 1,
        }],
        parity: vec![Parity {
            reference: REF.into(),
            other: OTHER.into(),
            prompt_tokens_compared: 6,
            prompt_tokens_mismatches: 1,
            prompt_tokens_examples: vec!["count_r (full 31, spark 38)".into()],
            finish_reason_mismatches: 2,
            finish_reason_examples: vec![
                "json_pair (full length, spark stop)".into(),
                "paris (full stop, spark length)".into(),
            ],
            mean_reasoning_chars_delta: Some(613.3),
        }],
        token_divergences: vec![TokenDivergenceCounts {
            reference: REF.into(),
            other: OTHER.into(),
            gap_threshold: 0.5,
            overall: NearTieCounts {
                near_tie: 1,
                substantive: 1,
            },
            by_category: BTreeMap::from([
                (
                    "counting_traps".to_string(),
                    NearTieCounts {
                        near_tie: 1,
                        substantive: 0,
                    },
                ),
                (
                    "factual".to_string(),
                    NearTieCounts {
                        near_tie: 0,
                        substantive: 1,
                    },
                ),
            ]),
        }],
        token_agreement: Vec::new(),
        teacher_forcing: None,
        statistics: vec![statistics()],
        families: vec![pair_families(&statistics(), &prompts, |p| {
            Some(p.expected.clone())
        })],
        sequential: Vec::new(),
        until_decided: None,
        weak_reads: weak_reads(&prompts, &[REF.to_string(), OTHER.to_string()]),
        difficulty: Vec::new(),
        tool_calls: None,
        long_context: None,
        gate: GateResult {
            expression: "diff>0,fail>0".into(),
            origin: Some(crate::gate::GateOrigin::Flag),
            failed: vec!["diff>0".into(), "fail>0".into()],
        },
        prompts,
        warnings: vec![
            "prompt `gone` is no longer in the catalogue; its records are skipped".into(),
        ],
        load: Default::default(),
    }
}

/// `counts` is correct, wrong, open (ungraded), failed.
fn endpoint(
    name: &str,
    fingerprint: &str,
    server: Option<&str>,
    counts: [usize; 4],
    determinism: &[(&str, usize)],
    reasoning_retries: usize,
) -> EndpointSummary {
    let [correct, wrong, ungraded, failed] = counts;
    EndpointSummary {
        name: name.into(),
        base_url: format!("https://{name}.example/v1"),
        model: Some("qwen3-8b".into()),
        listed_models: vec!["qwen3-8b".into()],
        max_model_len: Some(32768),
        served_models: vec!["qwen3-8b".into()],
        system_fingerprints: vec![fingerprint.into()],
        servers: server.map(str::to_string).into_iter().collect(),
        correct,
        wrong,
        ungraded,
        failed,
        accuracy: wilson(correct as u64, (correct + wrong) as u64),
        determinism: determinism
            .iter()
            .map(|(class, n)| (class.to_string(), *n))
            .collect(),
        mean_completion_tokens: Some(211.4),
        answers: correct + wrong + ungraded,
        cut_off: 1,
        reasoning_retries,
        code_answers: Some(CodeAnswers {
            scored: 12,
            ran_tests: 10,
            did_not_load: 1,
            no_code_found: 1,
        }),
    }
}

/// One category: each prompt's verdict and, for a diff, its kind.
fn category(
    name: &str,
    prompts: &[(Verdict, Option<DivergenceKind>)],
    full: usize,
    spark: usize,
) -> CategoryRollup {
    let count = |v: Verdict| prompts.iter().filter(|(x, _)| *x == v).count();
    let kind = |k: DivergenceKind| prompts.iter().filter(|(_, x)| *x == Some(k)).count();
    let summary = Summary {
        same: count(Verdict::Same),
        format: count(Verdict::Format),
        no_answer: count(Verdict::NoAnswer),
        diff: count(Verdict::Diff),
        review: count(Verdict::Review),
        fail: count(Verdict::Fail),
        kinds: KindCounts {
            flip: kind(DivergenceKind::Flip),
            answer: kind(DivergenceKind::Answer),
            format: kind(DivergenceKind::Format),
            no_answer: kind(DivergenceKind::NoAnswer),
        },
        ..Summary::default()
    };
    CategoryRollup {
        category: name.into(),
        prompts: prompts.len(),
        summary,
        correct: BTreeMap::from([(REF.to_string(), full), (OTHER.to_string(), spark)]),
    }
}

fn quality() -> Quality {
    Quality {
        reference: REF.into(),
        other: OTHER.into(),
        verdict: QualityVerdict::Inconclusive,
        margin: 5.0,
        graded: 5,
        reference_only: 1,
        other_only: 0,
        p_value: 1.0,
        difference: Interval {
            estimate: -0.2,
            low: -0.58,
            high: 0.12,
        },
        decide_with: Some(61),
        more_generated_items: None,
    }
}

fn statistics() -> PairStatistics {
    let counts = |category: Option<&str>, graded, both, ref_only, statement: &str| PairedCounts {
        category: category.map(str::to_string),
        counts: McNemarCounts {
            graded,
            both_correct: both,
            both_wrong: graded - both - ref_only,
            reference_only: ref_only,
            other_only: 0,
            p_value: mcnemar_exact(ref_only, 0),
        },
        statement: statement.into(),
    };
    PairStatistics {
        reference: REF.into(),
        other: OTHER.into(),
        overall: counts(
            None,
            5,
            2,
            1,
            "overall: full right and spark wrong on 1 of 5, the reverse on 0; p = 1",
        ),
        categories: vec![
            counts(
                Some("counting_traps"),
                1,
                0,
                1,
                "counting_traps: full right and spark wrong on 1 of 1, the reverse on 0; p = 1",
            ),
            counts(
                Some("deterministic_math"),
                2,
                1,
                0,
                "deterministic_math: full right and spark wrong on 0 of 2, the reverse on 0; p = 1",
            ),
            counts(
                Some("factual"),
                1,
                1,
                0,
                "factual: full right and spark wrong on 0 of 1, the reverse on 0; p = 1",
            ),
            counts(
                Some("structured_output"),
                1,
                0,
                0,
                "structured_output: full right and spark wrong on 0 of 1, the reverse on 0; p = 1",
            ),
        ],
    }
}

/// A usable answer, deterministic over three repeats unless `histogram` says otherwise.
fn answer(extracted: &str, correct: Option<bool>, text: &str) -> AnswerResult {
    AnswerResult {
        extracted: Some(extracted.into()),
        as_written: None,
        correct,
        error: None,
        evidence: Some(format!("found `{extracted}` (last number)")),
        weak: None,
        answer: Some(text.into()),
        reasoning_chars: 0,
        finish_reason: Some("stop".into()),
        truncated: false,
        prompt_tokens: Some(31),
        max_tokens: Some(1024),
        latency_ms: Some(812.0),
        completion_tokens: Some(57),
        note: None,
        repeats_answered: 3,
        repeats_planned: 3,
        determinism: Some(Determinism {
            repeats: 3,
            histogram: BTreeMap::from([(extracted.to_string(), 3)]),
            unique_completions: 1,
            modal_answer: Some(extracted.into()),
            modal_share: 1.0,
            modal_text_repeats: 3,
            class: match correct {
                Some(true) => Class::DeterministicCorrect,
                Some(false) => Class::DeterministicWrong,
                None => Class::Deterministic,
            },
            first_divergence: None,
        }),
        repeats: Vec::new(),
        code: None,
        clipped: false,
    }
}

fn prompt(
    id: &str,
    category: &str,
    scorer: &str,
    expected: &str,
    question: &str,
    pair: PairResult,
    [full, spark]: [AnswerResult; 2],
) -> PromptResult {
    PromptResult {
        id: id.into(),
        category: category.into(),
        question: question.into(),
        expected: expected.into(),
        scorer: scorer.into(),
        verdict: pair.verdict,
        pairs: vec![pair],
        answers: BTreeMap::from([(REF.to_string(), full), (OTHER.to_string(), spark)]),
    }
}

fn pair(verdict: Verdict, reason: &str) -> PairResult {
    PairResult {
        reference: REF.into(),
        other: OTHER.into(),
        verdict,
        reason: reason.into(),
        similarity: None,
        kind: None,
        difference: None,
        first_divergence: None,
        token_divergence: None,
    }
}

fn same() -> PromptResult {
    let text = "12 - 5 = 7 apples left, and doubling gives **14**.";
    prompt(
        "apples",
        "deterministic_math",
        "numeric",
        "14",
        "I had 12 apples, ate 5, then doubled what was left. How many apples?",
        pair(Verdict::Same, "both correct"),
        [
            answer("14", Some(true), text),
            answer("14", Some(true), text),
        ],
    )
}

/// spark answers 2 on two of three repeats and 4 on one: non-deterministic, and neither answer
/// occurs among the reference's repeats.
fn diff() -> PromptResult {
    let mut spark = answer(
        "2",
        Some(false),
        "s-t-r-a-w-b-e-r-r-y: the letter r appears 2 times.",
    );
    spark.reasoning_chars = 1840;
    spark.weak = Some("read from the concluding sentence, with no answer phrase".into());
    spark.max_tokens = Some(4096);
    spark.completion_tokens = Some(1203);
    spark.note = Some("re-run at max_tokens 4096: the reasoning used all 1024 tokens".into());
    spark.determinism = Some(Determinism {
        repeats: 3,
        histogram: BTreeMap::from([("2".to_string(), 2), ("4".to_string(), 1)]),
        unique_completions: 2,
        modal_answer: Some("2".into()),
        modal_share: 2.0 / 3.0,
        modal_text_repeats: 2,
        class: Class::Nondeterministic,
        first_divergence: Some(RepeatDivergence {
            repeats: [0, 2],
            at: Divergence {
                char_offset: 44,
                token_index: Some(17),
                before: "s-t-r-a-w-b-e-r-r-y: the letter r appears ".into(),
                left: "2 times.".into(),
                right: "4 times.".into(),
            },
        }),
    });
    spark.repeats = repeats(&[
        ("2", false, 1, "apples"),
        ("2", false, 8, "sum_digits"),
        ("4", false, 15, "capital"),
    ]);
    let mut pair = pair(Verdict::Diff, "reference correct, other wrong");
    pair.kind = Some(DivergenceKind::Flip);
    pair.token_divergence = Some(TokenDivergence {
        index: 17,
        reference_token: " 3".into(),
        other_token: " 2".into(),
        near_tie: true,
        gap_reference: Some(0.21),
        gap_other: Some(0.34),
    });
    pair.difference = Some(Difference::DeploymentDifference);
    pair.first_divergence = Some(Divergence {
        char_offset: 44,
        token_index: None,
        before: "s-t-r-a-w-b-e-r-r-y: the letter r appears ".into(),
        left: "3 times.".into(),
        right: "2 times.".into(),
    });
    prompt(
        "count_r",
        "counting_traps",
        "numeric",
        "3",
        "How many times does the letter 'r' appear in 'strawberry'?",
        pair,
        [
            answer(
                "3",
                Some(true),
                "s-t-r-a-w-b-e-r-r-y: the letter r appears 3 times.",
            ),
            spark,
        ],
    )
}

/// Two open-ended poems, too far apart word by word: a human should look.
fn review() -> PromptResult {
    let full = "Rain on the window,\nthe kettle hums its answer,\nautumn settles in.";
    let spark = "Rain on the rooftop,\na cat sleeps through the thunder,\nautumn settles in.";
    let open = |text: &str| AnswerResult {
        extracted: Some(text.into()),
        evidence: Some("sanity checks passed".into()),
        ..answer(text, None, text)
    };
    let mut pair = pair(Verdict::Review, "texts 42% similar (below 80%)");
    pair.similarity = Some(0.42);
    prompt(
        "haiku",
        "creative",
        "open",
        "(open-ended)",
        "Write a haiku about autumn rain.",
        pair,
        [open(full), open(spark)],
    )
}

/// spark's request failed on every repeat.
fn fail() -> PromptResult {
    let error =
        "HTTP 500: upstream timed out after 60 s (https://spark.example/v1/chat/completions)";
    let spark = AnswerResult {
        error: Some(error.into()),
        repeats_planned: 3,
        determinism: Some(Determinism {
            repeats: 3,
            histogram: BTreeMap::from([("(fail)".to_string(), 3)]),
            unique_completions: 0,
            modal_answer: None,
            modal_share: 1.0,
            modal_text_repeats: 0,
            class: Class::Failed,
            first_divergence: None,
        }),
        ..AnswerResult::default()
    };
    prompt(
        "capital",
        "factual",
        "exact",
        "Canberra",
        "What is the capital of Australia?",
        pair(
            Verdict::Fail,
            "the other endpoint produced no usable answer",
        ),
        [
            AnswerResult {
                evidence: Some("contains `Canberra`".into()),
                ..answer(
                    "Canberra",
                    Some(true),
                    "The capital of Australia is Canberra.",
                )
            },
            spark,
        ],
    )
}

/// Repeats in repeat order: (answer, correct, sent, the prompt sent just before).
fn repeats(of: &[(&str, bool, usize, &str)]) -> Vec<RepeatAnswer> {
    of.iter()
        .enumerate()
        .map(|(i, (answer, correct, sent, after))| RepeatAnswer {
            repeat: i as u32,
            answer: Some((*answer).into()),
            as_written: None,
            correct: Some(*correct),
            truncated: false,
            sent: *sent,
            after: Some((*after).into()),
            text: None,
        })
        .collect()
}

/// Both wrong with different answers, and the reference's own repeats sometimes give the other's
/// answer: sampler noise. The odd reference repeat is the first request after another prompt.
fn answer_diff() -> PromptResult {
    let mut full = answer("9", Some(false), "The digits of 123 sum to 9.");
    full.determinism = Some(Determinism {
        repeats: 3,
        histogram: BTreeMap::from([("9".to_string(), 2), ("5".to_string(), 1)]),
        unique_completions: 2,
        modal_answer: Some("9".into()),
        modal_share: 2.0 / 3.0,
        modal_text_repeats: 2,
        class: Class::Nondeterministic,
        first_divergence: None,
    });
    full.repeats = repeats(&[
        ("5", false, 4, "apples"),
        ("9", false, 11, "sum_digits"),
        ("9", false, 18, "sum_digits"),
    ]);
    full.repeats[1].after = Some("count_r".into());
    let mut spark = answer("5", Some(false), "The digits of 123 sum to 5.");
    spark.repeats = repeats(&[
        ("5", false, 4, "apples"),
        ("5", false, 11, "count_r"),
        ("5", false, 18, "haiku"),
    ]);
    let mut pair = pair(Verdict::Diff, "both wrong with different answers");
    pair.kind = Some(DivergenceKind::Answer);
    pair.difference = Some(Difference::SamplerNoise);
    pair.first_divergence = Some(Divergence {
        char_offset: 24,
        token_index: None,
        before: "The digits of 123 sum to ".into(),
        left: "9.".into(),
        right: "5.".into(),
    });
    prompt(
        "sum_digits",
        "deterministic_math",
        "numeric",
        "6",
        "What is the sum of the digits of 123?",
        pair,
        [full, spark],
    )
}

/// The same failure rendered differently: neither side produced a JSON object. The reference was
/// cut off at the budget after a long text; spark ran away repeating one line. A formatting
/// difference, not a different answer: no noise label.
fn format_diff() -> PromptResult {
    let mut full_text = String::from("Here is the object you asked for, built step by step:\n");
    for i in 1..=30 {
        full_text.push_str(&format!(
            "Step {i}: consider field {i} of the object and whether it belongs.\n"
        ));
    }
    full_text.push_str("```json\n{\"name\": \"Ada\",");
    let mut full = answer("", Some(false), &full_text);
    full.evidence = Some("no JSON object found".into());
    full.finish_reason = Some("length".into());
    full.truncated = true;
    full.completion_tokens = Some(1024);
    if let Some(d) = full.determinism.as_mut() {
        d.class = Class::DeterministicWrong;
    }
    let mut spark_text = String::from("Sure. In Python:\n\n```python\n");
    for _ in 0..60 {
        spark_text.push_str("print([1, 2])  # the pair as a list\n");
    }
    spark_text.push_str("```\nThat prints the pair.");
    let mut spark = answer("[1,2]", Some(false), &spark_text);
    spark.evidence = Some("found `[1,2]`: not an object".into());
    spark.completion_tokens = Some(611);
    let mut pair = pair(
        Verdict::Format,
        "both wrong: the same failure, rendered differently",
    );
    pair.kind = Some(DivergenceKind::Format);
    pair.first_divergence = Some(Divergence {
        char_offset: 0,
        token_index: Some(0),
        before: String::new(),
        left: "Here is the object you asked for, built".into(),
        right: "Sure. In Python:  ```python print([1, 2".into(),
    });
    prompt(
        "json_pair",
        "structured_output",
        "json",
        "{\"name\": \"Ada\", \"age\": 36}",
        "Reply with only a JSON object with keys name (Ada) and age (36).",
        pair,
        [full, spark],
    )
}

/// `same`, but spark ran to the budget after the answer: a different finish, a different length
/// class, and an answer read from a cut-off completion.
fn same_but_look() -> PromptResult {
    let full = answer("Paris", Some(true), "Paris.");
    let mut spark = answer(
        "Paris",
        Some(true),
        "Paris. Paris is the capital of France, and its largest city, and",
    );
    spark.finish_reason = Some("length".into());
    spark.truncated = true;
    spark.completion_tokens = Some(1024);
    spark.prompt_tokens = Some(31);
    prompt(
        "paris",
        "factual",
        "exact",
        "Paris",
        "What is the capital of France? One word.",
        pair(Verdict::Same, "both correct"),
        [full, spark],
    )
}
