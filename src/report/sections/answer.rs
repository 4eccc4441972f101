//! The headline's answer to "is this the same model?", one bullet per finding in the order a
//! reader needs them: quality per pair, stability per endpoint, output identity per pair, and
//! parity per pair. Each says no more than its evidence: `inconclusive` reads "cannot tell".

use std::fmt::Write;

use super::cells::plural;
use crate::analysis::{format_p, Proportion, Quality, QualityVerdict, Results};
use crate::doc::{t, Line};

/// The quality bullets, one per (reference, other) pair: accuracy with Wilson intervals, flips
/// each way with the exact McNemar p, and the verdict with the difference against the margin.
/// comparison_table.md opens with the same lines.
pub(in crate::report) fn quality_lines(results: &Results) -> Vec<Line> {
    results
        .quality
        .iter()
        .map(|q| quality_sentence(results, q))
        .collect()
}

/// The bullets under the title of the report: quality, stability, identity, parity, token
/// agreement and first divergences.
pub(super) fn answer_lines(results: &Results) -> Vec<Line> {
    let mut out = quality_lines(results);
    out.push(stability_sentence(results));
    for i in &results.identity {
        let failed = if i.failed > 0 {
            format!(", no usable answer on {}", i.failed)
        } else {
            String::new()
        };
        out.push(t(
            &format!(
                "**Output identity**, `$` against `$`: identical text on {}, the same answer in other words on {}, diverged on {}{failed}.",
                plural(i.identical, "prompt"), i.same_answer, i.diverged
            ),
            &[&i.other, &i.reference],
        ));
    }
    for p in &results.parity {
        let finish = if p.finish_reason_mismatches > 0 {
            format!(
                "; `finish_reason` differs on {} (see Endpoints)",
                p.finish_reason_mismatches
            )
        } else {
            String::new()
        };
        let tokens = if p.prompt_tokens_compared == 0 {
            "**Parity**, `$` against `$`: no prompt token counts reported, so a different chat template or tokenizer cannot be ruled out".to_string()
        } else if p.prompt_tokens_mismatches == 0 {
            format!(
                "**Parity**, `$` against `$`: prompt token counts equal on all {} prompts compared (consistent with one chat template and tokenizer)",
                p.prompt_tokens_compared
            )
        } else {
            format!(
                "**Parity warning**, `$` against `$`: `usage.prompt_tokens` differs on {} of {} prompts: a different chat template or tokenizer, which alone can explain every difference below (see Endpoints)",
                p.prompt_tokens_mismatches, p.prompt_tokens_compared
            )
        };
        out.push(t(&format!("{tokens}{finish}."), &[&p.other, &p.reference]));
    }
    for p in &results.token_agreement {
        if let (Some(kld), Some(top1)) = (p.summary.mean_kld, p.summary.top1_agreement) {
            out.push(t(
                &format!(
                    "**Token agreement** (teacher-forced), `$` against `$`: mean KLD {kld:.4} nats, same top token {:.1}%, over {} tokens of {} prompts.",
                    top1 * 100.0,
                    p.summary.tokens,
                    p.passages_compared
                ),
                &[&p.other, &p.reference],
            ));
        }
    }
    for x in &results.token_divergences {
        out.push(t(
            &format!(
                "**First divergences** (token level, `--logprobs`), `$` against `$`: {} near-tie (each side's token in the other's top-k, gaps under {} nats), {} substantive.",
                x.overall.near_tie, x.gap_threshold, x.overall.substantive
            ),
            &[&x.other, &x.reference],
        ));
    }
    out
}

fn quality_sentence(results: &Results, q: &Quality) -> Line {
    let accuracy = |name: &str| {
        results
            .endpoints
            .iter()
            .find(|e| e.name == name)
            .map(|e| format!("`$` {}", proportion(&e.accuracy)))
            .unwrap_or_else(|| "`$` (unknown)".to_string())
    };
    let (r, o) = (q.reference.as_str(), q.other.as_str());
    let mut s = format!(
        "**Quality**, `$` against `$`: accuracy with Wilson 95% intervals {}, {}. ",
        accuracy(r),
        accuracy(o)
    );
    let mut values = vec![o, r, r, o];
    if q.graded == 0 {
        s.push_str(
            "**Inconclusive: cannot tell**: no prompt with ground truth was answered by both.",
        );
        return t(&s, &values);
    }
    let _ = write!(
        s,
        "Of {} prompts both answered with ground truth, {} right only on `$` and {} right only on `$` (exact McNemar p = {}). ",
        q.graded,
        q.reference_only,
        q.other_only,
        format_p(q.p_value)
    );
    values.extend([r, o, o, r]);
    let d = q.difference;
    let difference = format!(
        "the accuracy difference `$` − `$` is {} points, 90% interval [{}, {}]",
        points(d.estimate),
        points(d.low),
        points(d.high)
    );
    let margin = format!("±{} points", trim_number(q.margin));
    match q.verdict {
        QualityVerdict::Equivalent => {
            let _ = write!(
                s,
                "**Equivalent** within {margin}: {difference}, inside the margin (two one-sided tests at α = 0.05)."
            );
        }
        QualityVerdict::Different => {
            let _ = write!(
                s,
                "**Different**: {difference}; flips this lopsided are unlikely by chance (p < 0.05)."
            );
        }
        QualityVerdict::Inconclusive => {
            let _ = write!(
                s,
                "**Inconclusive: cannot tell whether quality is the same**: {difference}, not inside {margin} and not a significant difference."
            );
            match (q.decide_with, q.more_generated_items) {
                (Some(n), Some(more)) => {
                    let _ = write!(
                        s,
                        " About {more} more generated items ({n} graded in all; this run has {}) would decide it at the observed rate of flips, by the anytime-valid decision `compare --until-decided` takes.",
                        q.graded
                    );
                }
                (Some(n), None) => {
                    let _ = write!(
                        s,
                        " About {n} graded prompts (this run has {}) would decide it at the observed rate of flips, as a sample of that size planned in advance.",
                        q.graded
                    );
                }
                (None, _) => {}
            }
            if results.sampling.repeats < 2 {
                s.push_str(" With one repeat per prompt, repeats (`--repeats 3`) would also let sampler noise be told apart from deployment differences.");
            }
        }
    }
    t(&s, &values)
}

/// "19% [12–28%] (18 of 94)".
fn proportion(p: &Proportion) -> String {
    format!(
        "{:.0}% [{:.0}–{:.0}%] ({} of {})",
        p.value * 100.0,
        p.low * 100.0,
        p.high * 100.0,
        p.successes,
        p.trials
    )
}

/// A fraction as signed accuracy points: -0.0106 is "-1.1".
fn points(fraction: f64) -> String {
    let v = fraction * 100.0;
    // -0.04 rounds to "-0.0"; show it as zero.
    if v.abs() < 0.05 {
        "0.0".into()
    } else {
        format!("{v:+.1}")
    }
}

/// 5.0 as "5", 2.5 as "2.5".
fn trim_number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Each endpoint's agreement with itself, or why it was not measured.
fn stability_sentence(results: &Results) -> Line {
    let repeats = results.sampling.repeats;
    if repeats < 2 {
        return t(
            &format!(
                "**Stability**: not measured: {repeats} repeat (`--repeats 3` measures each endpoint against itself)."
            ),
            &[],
        );
    }
    let parts: Vec<String> = results
        .stability
        .iter()
        .map(|s| {
            if s.measured == 0 {
                "`$` not measured (no prompt with two usable repeats)".to_string()
            } else if s.unstable == 0 {
                format!("`$` stable on all {} prompts measured", s.measured)
            } else if s.cache_split > 0 {
                format!(
                    "`$` stable on {} of {} (unstable on {}; on {} of them the answers split by \
                     prompt-cache state: the repeats sent right after the same prompt agree, \
                     those sent after another prompt differ, so the instability may be the \
                     prompt cache, not the model{})",
                    s.stable,
                    s.measured,
                    s.unstable,
                    s.cache_split,
                    if s.back_to_back {
                        "; the repeats were sent back to back: `--repeat-order interleaved` measures it"
                    } else {
                        ""
                    }
                )
            } else {
                format!(
                    "`$` stable on {} of {} (unstable on {})",
                    s.stable, s.measured, s.unstable
                )
            }
        })
        .collect();
    let names: Vec<&str> = results
        .stability
        .iter()
        .map(|s| s.endpoint.as_str())
        .collect();
    t(
        &format!(
            "**Stability** (the same answer on every one of {repeats} repeats): {}.",
            parts.join("; ")
        ),
        &names,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_signed_and_never_minus_zero() {
        assert_eq!(points(-0.010638), "-1.1");
        assert_eq!(points(0.0514), "+5.1");
        assert_eq!(points(-0.0004), "0.0");
        assert_eq!(trim_number(5.0), "5");
        assert_eq!(trim_number(2.5), "2.5");
    }
}
