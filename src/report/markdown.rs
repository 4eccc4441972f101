//! report.md and comparison_table.md: pure functions of the results.

use std::fmt::Write;

use super::diff::inline_word_diff;
use super::table::markdown_table;
use crate::analysis::fingerprint::{self, FingerprintDifference};
use crate::analysis::{
    format_p, AnswerResult, Class, Difference, PromptResult, Results, Verdict, SAME_SIMILARITY,
};
use crate::score::clip;

/// The longest answer quoted in the per-prompt detail.
const QUOTE_CHARS: usize = 1500;

fn names(results: &Results) -> Vec<&str> {
    results.endpoints.iter().map(|e| e.name.as_str()).collect()
}

/// One cell: the extracted answer with a mark, or the failure.
fn answer_cell(a: Option<&AnswerResult>) -> String {
    let Some(a) = a else { return "—".into() };
    if let Some(e) = &a.error {
        return format!("FAIL: {}", clip(e, 60));
    }
    let shown = a
        .extracted
        .as_deref()
        .map(|x| clip(x, 40))
        .unwrap_or_else(|| "(nothing extracted)".into());
    match a.correct {
        Some(true) => format!("{shown} ✓"),
        Some(false) => format!("{shown} ✗"),
        None => format!("{} (open)", clip(a.answer.as_deref().unwrap_or(""), 40)),
    }
}

fn verdict_cell(v: Verdict) -> String {
    match v {
        Verdict::Same => "same".into(),
        other => format!("**{}**", other.as_str()),
    }
}

fn difference_label(d: Option<Difference>) -> &'static str {
    match d {
        Some(Difference::SamplerNoise) => "within sampler noise",
        Some(Difference::DeploymentDifference) => "deployment difference",
        None => "",
    }
}

pub fn render_table(results: &Results) -> String {
    let names = names(results);
    let mut out = String::new();
    let _ = writeln!(out, "# Comparison table: {}\n", names.join(" vs "));
    let _ = writeln!(out, "**{}**\n", results.summary.headline());
    out.push_str(&prompt_table(results, &names));
    out
}

fn prompt_table(results: &Results, names: &[&str]) -> String {
    let mut headers = vec!["prompt", "category", "expected"];
    headers.extend(names.iter().copied());
    headers.push("verdict");
    let rows: Vec<Vec<String>> = results
        .prompts
        .iter()
        .map(|p| {
            let mut row = vec![
                format!("`{}`", p.id),
                p.category.clone(),
                clip(&p.expected, 40),
            ];
            row.extend(names.iter().map(|n| answer_cell(p.answers.get(*n))));
            row.push(verdict_cell(p.verdict));
            row
        })
        .collect();
    markdown_table(&headers, &rows)
}

pub fn render_report(results: &Results) -> String {
    let names = names(results);
    let mut out = String::new();
    headline(&mut out, results, &names);
    endpoints(&mut out, results);
    categories(&mut out, results, &names);
    divergence_table(&mut out, results, &names);
    determinism(&mut out, results, &names);
    statistics(&mut out, results);
    details(&mut out, results, &names);
    out.push_str("\n## All prompts\n\n");
    out.push_str(&prompt_table(results, &names));
    errors(&mut out, results);
    caveats(&mut out, results);
    out
}

fn headline(out: &mut String, results: &Results, names: &[&str]) {
    let _ = writeln!(out, "# coherence report: {}\n", names.join(" vs "));
    let _ = writeln!(
        out,
        "**{}** over {} prompts; reference endpoint `{}`.\n",
        results.summary.headline(),
        results.prompts.len(),
        results.reference
    );
    let gate = if results.gate.failed.is_empty() {
        format!("Gate `{}`: passed.", results.gate.expression)
    } else {
        format!(
            "Gate `{}`: **failed** ({}).",
            results.gate.expression,
            results.gate.failed.join(", ")
        )
    };
    let _ = writeln!(
        out,
        "{gate} Non-deterministic prompt/endpoint pairs: {}. Deployment differences (beyond the reference's own sampler noise): {}.\n",
        results.nondeterministic, results.deployment_differences
    );
    let retried: Vec<String> = results
        .endpoints
        .iter()
        .filter(|e| e.reasoning_retries > 0)
        .map(|e| format!("`{}` on {} prompt(s)", e.name, e.reasoning_retries))
        .collect();
    if !retried.is_empty() {
        let _ = writeln!(
            out,
            "> **Reasoning retries:** the reasoning used the whole token budget and left no answer, so these prompts were re-run automatically at a larger budget and the report uses the re-run: {}. Both attempts are in records.jsonl.\n",
            retried.join(", ")
        );
    }
    if !results.complete {
        let _ = writeln!(
            out,
            "> **Incomplete run:** {} request failure(s) and {} missing answer(s). Continue it with \
             `coherence compare --resume <this run folder>`; only what is missing is sent.\n",
            results.request_failures, results.missing
        );
    }
}

fn endpoints(out: &mut String, results: &Results) {
    out.push_str("## Endpoints\n\n");
    let rows: Vec<Vec<String>> = results
        .endpoints
        .iter()
        .enumerate()
        .map(|(i, e)| {
            vec![
                format!("`{}`", e.name),
                if i == 0 {
                    "reference".into()
                } else {
                    "compared".into()
                },
                e.base_url.clone(),
                e.served_models.join(", "),
                e.system_fingerprints.join(", "),
                e.max_model_len.map(|n| n.to_string()).unwrap_or_default(),
                e.servers.join(", "),
            ]
        })
        .collect();
    out.push_str(&markdown_table(
        &[
            "endpoint",
            "role",
            "URL",
            "served model",
            "system_fingerprint",
            "max_model_len",
            "server",
        ],
        &rows,
    ));
    for d in fingerprint::differences(results) {
        let _ = writeln!(
            out,
            "\n> **Fingerprints differ:** {}",
            fingerprint_sentence(&d)
        );
    }
    let s = &results.sampling;
    let params = if s.params.is_empty() {
        String::new()
    } else {
        format!(
            ", extra fields {}",
            serde_json::Value::Object(s.params.clone())
        )
    };
    let _ = writeln!(
        out,
        "\nSampling, identical on every endpoint: temperature {}, stream {}, max_tokens {} (unless a prompt sets its own), {} repeat(s){params}.\n",
        s.temperature, s.stream, s.max_tokens, s.repeats
    );
    let rows: Vec<Vec<String>> = results
        .endpoints
        .iter()
        .map(|e| {
            let det = e
                .determinism
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                format!("`{}`", e.name),
                format!(
                    "{} / {} / {} / {}",
                    e.correct, e.wrong, e.ungraded, e.failed
                ),
                format!(
                    "{:.0}% [{:.0}–{:.0}%]",
                    e.accuracy.value * 100.0,
                    e.accuracy.low * 100.0,
                    e.accuracy.high * 100.0
                ),
                e.mean_completion_tokens
                    .map(|t| format!("{t:.0}"))
                    .unwrap_or_default(),
                det,
            ]
        })
        .collect();
    out.push_str(&markdown_table(
        &[
            "endpoint",
            "correct / wrong / open / failed",
            "accuracy [Wilson 95%]",
            "mean completion tokens",
            "determinism",
        ],
        &rows,
    ));
}

/// "served model: a `m1` vs b (not reported)": one fingerprint field that differs.
fn fingerprint_sentence(d: &FingerprintDifference) -> String {
    let show = |s: &str| {
        if s.is_empty() {
            "(not reported)".to_string()
        } else {
            format!("`{s}`")
        }
    };
    format!(
        "{}: {} {} vs {} {}",
        d.field,
        d.reference,
        show(&d.reference_value),
        d.other,
        show(&d.other_value)
    )
}

fn categories(out: &mut String, results: &Results, names: &[&str]) {
    out.push_str("\n## Categories\n\n");
    let mut headers = vec!["category", "prompts", "same", "diff", "review", "fail"];
    let correct_headers: Vec<String> = names.iter().map(|n| format!("{n} correct")).collect();
    headers.extend(correct_headers.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = results
        .categories
        .iter()
        .map(|c| {
            let mut row = vec![
                c.category.clone(),
                c.prompts.to_string(),
                c.summary.same.to_string(),
                c.summary.diff.to_string(),
                c.summary.review.to_string(),
                c.summary.fail.to_string(),
            ];
            row.extend(
                names
                    .iter()
                    .map(|n| c.correct.get(*n).copied().unwrap_or(0).to_string()),
            );
            row
        })
        .collect();
    out.push_str(&markdown_table(&headers, &rows));
}

fn flagged(results: &Results) -> Vec<&PromptResult> {
    results
        .prompts
        .iter()
        .filter(|p| p.verdict != Verdict::Same)
        .collect()
}

fn divergence_table(out: &mut String, results: &Results, names: &[&str]) {
    out.push_str("\n## Divergences\n\n");
    let flagged = flagged(results);
    if flagged.is_empty() {
        out.push_str("None: every prompt got the same verdict on every endpoint.\n");
        return;
    }
    let mut headers = vec!["prompt", "category", "verdict", "expected"];
    headers.extend(names.iter().copied());
    headers.extend(["why", "difference"]);
    let rows: Vec<Vec<String>> = flagged
        .iter()
        .map(|p| {
            let mut row = vec![
                format!("[`{}`](#{})", p.id, anchor(&p.id)),
                p.category.clone(),
                verdict_cell(p.verdict),
                clip(&p.expected, 30),
            ];
            row.extend(names.iter().map(|n| answer_cell(p.answers.get(*n))));
            row.push(
                p.pairs
                    .iter()
                    .filter(|x| x.verdict != Verdict::Same)
                    .map(|x| format!("{}: {}", x.other, x.reason))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            row.push(
                p.pairs
                    .iter()
                    .map(|x| difference_label(x.difference))
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            row
        })
        .collect();
    out.push_str(&markdown_table(&headers, &rows));
}

/// GitHub's heading anchor for a prompt's detail section.
fn anchor(id: &str) -> String {
    format!("prompt-{id}")
}

fn determinism(out: &mut String, results: &Results, names: &[&str]) {
    if results.sampling.repeats < 2 {
        return;
    }
    let _ = writeln!(
        out,
        "\n## Determinism ({} repeats at temperature 0)\n",
        results.sampling.repeats
    );
    let mut rows = Vec::new();
    for p in &results.prompts {
        for n in names {
            let Some(d) = p.answers.get(*n).and_then(|a| a.determinism.as_ref()) else {
                continue;
            };
            if d.class != Class::Nondeterministic && d.unique_completions < 2 {
                continue;
            }
            let histogram = histogram_cell(&d.histogram);
            let divergence = d
                .first_divergence
                .as_ref()
                .map(|x| {
                    let token =
                        x.at.token_index
                            .map(|t| format!(", token {t}"))
                            .unwrap_or_default();
                    format!(
                        "repeats {} and {} at char {}{token}: …{}⟨{} | {}⟩",
                        x.repeats[0],
                        x.repeats[1],
                        x.at.char_offset,
                        clip(&x.at.before, 30),
                        clip(&x.at.left, 20),
                        clip(&x.at.right, 20)
                    )
                })
                .unwrap_or_default();
            rows.push(vec![
                format!("`{}`", p.id),
                n.to_string(),
                histogram,
                d.unique_completions.to_string(),
                format!("{:.0}%", d.modal_share * 100.0),
                d.class.label().to_string(),
                divergence,
            ]);
        }
    }
    if rows.is_empty() {
        out.push_str(
            "Every endpoint returned the same completion on every repeat of every prompt.\n",
        );
    } else {
        out.push_str("Prompts whose repeats differed in any way (every other prompt returned a byte-identical completion on every repeat). A different answer is non-determinism; the same answer in other words is only a different completion.\n\n");
        out.push_str(&markdown_table(
            &[
                "prompt",
                "endpoint",
                "answers",
                "unique completions",
                "modal share",
                "class",
                "first divergence",
            ],
            &rows,
        ));
    }
}

fn statistics(out: &mut String, results: &Results) {
    if results.statistics.is_empty() {
        return;
    }
    out.push_str("\n## Statistics\n\n");
    out.push_str("Paired over prompts with ground truth that both endpoints answered; p is the exact McNemar test.\n\n");
    for s in &results.statistics {
        let _ = writeln!(out, "- **{}**", s.overall.statement);
        for c in &s.categories {
            if c.reference_only + c.other_only > 0 {
                let _ = writeln!(out, "- {}", c.statement);
            }
        }
        let rows: Vec<Vec<String>> = s
            .categories
            .iter()
            .filter(|c| c.graded > 0)
            .map(|c| {
                vec![
                    c.category.clone().unwrap_or_default(),
                    c.graded.to_string(),
                    c.both_correct.to_string(),
                    c.reference_only.to_string(),
                    c.other_only.to_string(),
                    c.both_wrong.to_string(),
                    format_p(c.p_value),
                ]
            })
            .collect();
        out.push('\n');
        let only_ref = format!("{} only", s.reference);
        let only_other = format!("{} only", s.other);
        out.push_str(&markdown_table(
            &[
                "category",
                "graded",
                "both right",
                &only_ref,
                &only_other,
                "both wrong",
                "p",
            ],
            &rows,
        ));
        out.push('\n');
    }
}

fn details(out: &mut String, results: &Results, names: &[&str]) {
    let flagged = flagged(results);
    if flagged.is_empty() {
        return;
    }
    out.push_str("\n## Prompt details\n");
    for p in flagged {
        let _ = writeln!(
            out,
            "\n### <a id=\"{}\"></a>`{}` ({}): {}\n",
            anchor(&p.id),
            p.id,
            p.category,
            p.verdict.as_str()
        );
        let _ = writeln!(out, "> {}\n", clip(&p.question, 500));
        let _ = writeln!(out, "Expected: {} ({} scorer).\n", p.expected, p.scorer);
        let mut headers = vec![""];
        headers.extend(names.iter().copied());
        let row = |label: &str, f: &dyn Fn(&AnswerResult) -> String| {
            let mut r = vec![label.to_string()];
            r.extend(
                names
                    .iter()
                    .map(|n| p.answers.get(*n).map(f).unwrap_or_default()),
            );
            r
        };
        let rows = vec![
            row("answer", &|a| answer_cell(Some(a))),
            row("evidence", &|a| {
                a.evidence.clone().or(a.error.clone()).unwrap_or_default()
            }),
            row("finish", &|a| {
                let reasoning = if a.reasoning_chars > 0 {
                    format!(" · {} reasoning chars", a.reasoning_chars)
                } else {
                    String::new()
                };
                format!(
                    "{} · {} of {} tokens{reasoning}",
                    a.finish_reason.as_deref().unwrap_or("?"),
                    a.completion_tokens
                        .map(|n| n.to_string())
                        .unwrap_or("?".into()),
                    a.max_tokens.map(|n| n.to_string()).unwrap_or("?".into())
                )
            }),
            row("text", &|a| {
                let text = a
                    .answer
                    .as_deref()
                    .map(|t| clip_keep_lines(t, QUOTE_CHARS))
                    .unwrap_or_else(|| "(no answer)".into());
                text.replace('\n', "<br>")
            }),
        ];
        out.push_str(&markdown_table(&headers, &rows));
        for n in names {
            if let Some(note) = p.answers.get(*n).and_then(|a| a.note.as_ref()) {
                let _ = writeln!(out, "\n{n}: {note}");
            }
        }
        for pair in &p.pairs {
            let (Some(a), Some(b)) = (p.answers.get(&pair.reference), p.answers.get(&pair.other))
            else {
                continue;
            };
            let (Some(ta), Some(tb)) = (a.answer.as_deref(), b.answer.as_deref()) else {
                continue;
            };
            if ta == tb {
                continue;
            }
            let at = pair
                .first_divergence
                .as_ref()
                .map(|d| {
                    format!(
                        " (first difference at character {}{})",
                        d.char_offset,
                        d.token_index
                            .map(|t| format!(", token {t}"))
                            .unwrap_or_default()
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "\nWord diff {} → {}{at}:\n\n> {}",
                pair.reference,
                pair.other,
                inline_word_diff(ta, tb)
            );
        }
    }
}

/// `{9: 4, 5: 1}`; long answers are shown from just before where they differ from each other,
/// so two answers that share a long opening stay tell-apart.
fn histogram_cell(histogram: &std::collections::BTreeMap<String, u32>) -> String {
    const SHOWN: usize = 24;
    let keys: Vec<Vec<char>> = histogram.keys().map(|k| k.chars().collect()).collect();
    let shared = |i: usize| {
        keys.iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, other)| {
                keys[i]
                    .iter()
                    .zip(other)
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0)
    };
    let cells: Vec<String> = histogram
        .values()
        .enumerate()
        .map(|(i, count)| {
            let key = &keys[i];
            let start = shared(i).saturating_sub(8).min(key.len());
            let shown: String = key[start..].iter().take(SHOWN).collect();
            let lead = if start > 0 { "…" } else { "" };
            let tail = if key.len() > start + SHOWN { "…" } else { "" };
            format!(
                "{lead}{}{tail}: {count}",
                shown.split_whitespace().collect::<Vec<_>>().join(" ")
            )
        })
        .collect();
    format!("{{{}}}", cells.join(", "))
}

/// Like `clip`, but keeps line breaks.
fn clip_keep_lines(s: &str, max: usize) -> String {
    let trimmed = s.trim();
    if trimmed.chars().count() <= max {
        trimmed.to_string()
    } else {
        format!("{}…", trimmed.chars().take(max).collect::<String>())
    }
}

fn errors(out: &mut String, results: &Results) {
    let errors: Vec<Vec<String>> = results
        .prompts
        .iter()
        .flat_map(|p| {
            p.answers.iter().filter_map(move |(n, a)| {
                a.error
                    .clone()
                    .map(|e| vec![format!("`{}`", p.id), n.clone(), clip(&e, 200)])
            })
        })
        .collect();
    if !errors.is_empty() {
        out.push_str("\n## Errors\n\n");
        out.push_str(&markdown_table(&["prompt", "endpoint", "error"], &errors));
    }
    if !results.warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in &results.warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
}

fn caveats(out: &mut String, results: &Results) {
    out.push_str("\n## Scorer caveats\n\n");
    out.push_str("- Numbers are extracted from free text with a fixed precedence: the last `\\boxed{}`, then the last \"answer is X\", then the last bold number, then the last number (digits, fractions, `\\frac`, number words). An answer that states the right number and then keeps writing other numbers can be misread; the evidence column shows what was taken.\n");
    let _ = writeln!(
        out,
        "- Open-ended prompts (creative, summarization, translation) have no single right answer: they pass when the sanity checks pass, and two endpoints are `same` when their texts are at least {:.0}% similar word by word, else `review`.",
        SAME_SIMILARITY * 100.0
    );
    out.push_str("- `same` for two wrong answers means both gave the same wrong answer: the deployments agree, the model is wrong.\n");
    out.push_str("- Code is scored by running the model's function against unit tests in a sandboxed JavaScript engine with time and memory limits; a crash or timeout is a failed test.\n");
    if results.sampling.repeats < 2 {
        out.push_str("- One repeat per prompt: a single difference cannot be told apart from sampler noise. Run with `--repeats 3` or more.\n");
    }
}
