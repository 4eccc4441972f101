//! The one answer to "same model?": `yes`, `no` or `undecided`, with the short reasons behind it.
//!
//! The answer is a claim about someone's deployment, so it never says more than the evidence:
//! - `no` when any pair is shown to differ: the quality verdict is `different` (accuracy differs,
//!   exact McNemar), a family of items is named different after Holm's correction, or the
//!   endpoints count different prompt tokens for the same prompt (another chat template or
//!   tokenizer is being served);
//! - `yes` when every pair is shown equivalent within the margin, no family differs and prompt
//!   tokens agree wherever both sides reported them;
//! - `undecided` otherwise, saying what would decide it.
//!
//! Text identity, stability and token-level agreement are stated beside the answer (they tell
//! how perturbed the generation is), but they do not decide it: two deployments of the same
//! weights at temperature 0 routinely differ in text through kernels and batching.

use serde::{Deserialize, Serialize};

use super::decision::PairSequential;
use super::families::PairFamilies;
use super::quality::{Quality, QualityVerdict};
use super::results::{Identity, Parity};
use super::sequential::{SequentialDecision, SequentialVerdict};
use super::stats::format_p;

/// The answer of the first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SameModel {
    Yes,
    Undecided,
    No,
}

impl SameModel {
    pub fn as_str(self) -> &'static str {
        match self {
            SameModel::Yes => "yes",
            SameModel::Undecided => "undecided",
            SameModel::No => "no",
        }
    }
}

/// What the answer is decided from.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    pub quality: &'a [Quality],
    /// The anytime-valid decisions over the generated items of a `--until-decided` run: where a
    /// pair has one, it decides the quality question in place of the fixed-sample verdict, which
    /// stopping on a look would invalidate.
    pub sequential: &'a [PairSequential],
    pub families: &'a [PairFamilies],
    pub parity: &'a [Parity],
    pub identity: &'a [Identity],
}

/// The answer with its reasons, most decisive first.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub answer: SameModel,
    pub because: Vec<String>,
}

impl Answer {
    /// `no` on evidence decided elsewhere (the tool calls, `tool_calls.rs`), its reasons first;
    /// unchanged when there are none.
    pub fn refuted_by(&mut self, mut reasons: Vec<String>) {
        if reasons.is_empty() {
            return;
        }
        self.answer = SameModel::No;
        reasons.append(&mut self.because);
        self.because = reasons;
    }
}

/// The first line of a summary: "Same model: yes — reason; reason; reason".
pub fn headline(answer: SameModel, because: &[String]) -> String {
    if because.is_empty() {
        format!("Same model: {}", answer.as_str())
    } else {
        format!("Same model: {} — {}", answer.as_str(), because.join("; "))
    }
}

/// Decide "same model?" over every (reference, other) pair: the worst pair answers.
pub fn decide(evidence: Evidence<'_>) -> Answer {
    let mut answer = SameModel::Yes;
    let mut because = Vec::new();
    let several = evidence.quality.len() > 1;
    for q in evidence.quality {
        let (pair_answer, mut reasons) = decide_pair(q, &evidence);
        answer = answer.max(pair_answer);
        if several {
            for r in &mut reasons {
                *r = format!("{}: {r}", q.other);
            }
        }
        because.extend(reasons);
    }
    if evidence.quality.is_empty() {
        answer = SameModel::Undecided;
        because.push(
            "one endpoint: no pair to compare (this run measures its stability; see below)"
                .to_string(),
        );
    }
    Answer { answer, because }
}

fn decide_pair(q: &Quality, evidence: &Evidence<'_>) -> (SameModel, Vec<String>) {
    let of_pair = |reference: &str, other: &str| reference == q.reference && other == q.other;
    let mut no = Vec::new();
    let mut open = Vec::new();
    let mut context = Vec::new();

    let sequential = evidence
        .sequential
        .iter()
        .find(|s| of_pair(&s.reference, &s.other));
    if let Some(s) = sequential {
        sequential_reasons(&s.decision, &mut no, &mut open, &mut context);
    } else {
        quality_reasons(q, &mut no, &mut open, &mut context);
    }

    let pair_families = evidence
        .families
        .iter()
        .filter(|f| of_pair(&f.reference, &f.other));
    for f in pair_families
        .flat_map(|p| &p.verdicts.families)
        .filter(|f| f.different)
    {
        no.push(format!(
            "{}: {:.0}% vs {:.0}% correct on {} items (Holm-adjusted exact McNemar p = {})",
            f.family,
            f.reference.accuracy_percent,
            f.other.accuracy_percent,
            thousands(f.graded_items),
            format_p(f.holm_p_value)
        ));
    }
    for p in evidence
        .parity
        .iter()
        .filter(|p| of_pair(&p.reference, &p.other))
    {
        if p.prompt_tokens_mismatches > 0 {
            no.push(format!(
                "prompt tokens differ on {} of {} prompts: another chat template or tokenizer",
                p.prompt_tokens_mismatches, p.prompt_tokens_compared
            ));
        } else if p.prompt_tokens_compared > 0 {
            context.push("same chat template and tokenizer (prompt tokens agree)".to_string());
        }
    }
    for i in evidence
        .identity
        .iter()
        .filter(|i| of_pair(&i.reference, &i.other))
    {
        let answered = i.identical + i.same_answer + i.diverged;
        if answered > 0 && i.identical < answered {
            context.push(format!(
                "generation perturbed (identical text on {:.0}%)",
                100.0 * i.identical as f64 / answered as f64
            ));
        } else if answered > 0 {
            context.push("identical text on every prompt".to_string());
        }
    }

    let answer = if !no.is_empty() {
        SameModel::No
    } else if !open.is_empty() {
        SameModel::Undecided
    } else {
        SameModel::Yes
    };
    let mut reasons = no;
    reasons.extend(open);
    reasons.extend(context);
    (answer, reasons)
}

/// The anytime-valid verdict's reasons (`sequential.rs`), in place of the fixed-sample ones.
fn sequential_reasons(
    d: &SequentialDecision,
    no: &mut Vec<String>,
    open: &mut Vec<String>,
    context: &mut Vec<String>,
) {
    match d.verdict {
        SequentialVerdict::Different => no.push(format!(
            "accuracy differs by {:+.1} points on {} generated items (anytime-valid {:.0}% interval [{:+.1}, {:+.1}])",
            d.difference_points,
            thousands(d.graded_items),
            100.0 * (1.0 - d.alpha),
            d.lower_points,
            d.upper_points
        )),
        SequentialVerdict::Equivalent => context.push(format!(
            "equivalent within ±{} points on {} generated items (anytime-valid interval [{:+.1}, {:+.1}])",
            trim_points(d.margin_points),
            thousands(d.graded_items),
            d.equivalence_lower_points,
            d.equivalence_upper_points
        )),
        SequentialVerdict::Undecided => open.push(format!(
            "undecided after {} generated items: {:+.1} points, anytime-valid interval [{:+.1}, {:+.1}] against ±{} points{}",
            thousands(d.graded_items),
            d.difference_points,
            d.equivalence_lower_points,
            d.equivalence_upper_points,
            trim_points(d.margin_points),
            d.more_items_to_decide.map_or(String::new(), |n| format!(
                "; about {} more would decide it (raise --max-items)",
                thousands(n)
            ))
        )),
    }
}

/// The fixed-sample quality verdict's reasons (`quality.rs`).
fn quality_reasons(
    q: &Quality,
    no: &mut Vec<String>,
    open: &mut Vec<String>,
    context: &mut Vec<String>,
) {
    let points = |f: f64| f * 100.0;
    match q.verdict {
        QualityVerdict::Different => no.push(format!(
            "accuracy differs by {:+.1} points on {} graded items (exact McNemar p = {})",
            points(q.difference.estimate),
            thousands(q.graded),
            format_p(q.p_value)
        )),
        QualityVerdict::Inconclusive => open.push(match q.decide_with {
            Some(n) => format!(
                "quality inconclusive: {:+.1} points, 90% interval [{:+.1}, {:+.1}] on {} graded items; about {} graded items would decide it (compare --until-decided adds generated items until it is decided)",
                points(q.difference.estimate),
                points(q.difference.low),
                points(q.difference.high),
                thousands(q.graded),
                thousands(n)
            ),
            None => format!(
                "quality inconclusive on {} graded items",
                thousands(q.graded)
            ),
        }),
        QualityVerdict::Equivalent => context.push(format!(
            "equivalent within ±{} points on {} graded items",
            trim_points(q.margin),
            thousands(q.graded)
        )),
    }
}

fn trim_points(m: f64) -> String {
    if m.fract() == 0.0 {
        format!("{m:.0}")
    } else {
        format!("{m}")
    }
}

/// 1840 → "1,840".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::families::family_verdicts;
    use crate::analysis::quality::{assess, Paired};

    fn quality(
        both_correct: u64,
        reference_only: u64,
        other_only: u64,
        both_wrong: u64,
    ) -> Quality {
        assess(
            "a",
            "b",
            Paired {
                both_correct,
                reference_only,
                other_only,
                both_wrong,
            },
            5.0,
        )
    }

    fn parity(mismatches: usize) -> Parity {
        Parity {
            reference: "a".into(),
            other: "b".into(),
            prompt_tokens_compared: 100,
            prompt_tokens_mismatches: mismatches,
            prompt_tokens_examples: vec![],
            finish_reason_mismatches: 0,
            finish_reason_examples: vec![],
            mean_reasoning_chars_delta: None,
        }
    }

    fn identity(identical: usize, same_answer: usize) -> Identity {
        Identity {
            reference: "a".into(),
            other: "b".into(),
            identical,
            same_answer,
            diverged: 0,
            failed: 0,
        }
    }

    #[test]
    fn equivalent_quality_and_agreeing_tokens_say_yes() {
        let q = [quality(1500, 20, 20, 300)];
        let answer = decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
            parity: &[parity(0)],
            identity: &[identity(166, 1674)],
        });
        assert_eq!(answer.answer, SameModel::Yes, "{:?}", answer.because);
        assert_eq!(
            headline(answer.answer, &answer.because),
            "Same model: yes — equivalent within ±5 points on 1,840 graded items; same chat template and tokenizer (prompt tokens agree); generation perturbed (identical text on 9%)"
        );
    }

    #[test]
    fn a_different_family_says_no_even_when_overall_quality_is_equivalent() {
        let q = [quality(1500, 20, 20, 300)];
        let counts = |both_correct, reference_only, other_only, both_wrong| Paired {
            both_correct,
            reference_only,
            other_only,
            both_wrong,
        };
        let families = [PairFamilies {
            reference: "a".into(),
            other: "b".into(),
            verdicts: family_verdicts(
                [
                    ("counting", counts(25, 45, 0, 10)),
                    ("dates", counts(70, 2, 3, 5)),
                ],
                0.05,
            ),
        }];
        let answer = decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &families,
            parity: &[],
            identity: &[],
        });
        assert_eq!(answer.answer, SameModel::No);
        assert!(
            answer.because[0].starts_with("counting: 88% vs 31% correct on 80 items"),
            "{:?}",
            answer.because
        );
        assert_eq!(
            answer.because.len(),
            2,
            "dates is not named: {:?}",
            answer.because
        );
    }

    #[test]
    fn another_chat_template_says_no() {
        let q = [quality(1500, 20, 20, 300)];
        let answer = decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
            parity: &[parity(3)],
            identity: &[],
        });
        assert_eq!(answer.answer, SameModel::No);
        assert!(answer.because[0].contains("prompt tokens differ on 3 of 100"));
    }

    #[test]
    fn too_few_items_say_undecided_and_what_would_decide_it() {
        let q = [quality(80, 6, 4, 6)];
        let answer = decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
            parity: &[parity(0)],
            identity: &[],
        });
        assert_eq!(answer.answer, SameModel::Undecided);
        assert!(
            answer.because[0].contains("would decide it"),
            "{:?}",
            answer.because
        );
        assert!(answer.because[0].contains("--until-decided"));
    }

    #[test]
    fn a_significant_accuracy_difference_says_no() {
        let q = [quality(60, 30, 2, 8)];
        let answer = decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
            parity: &[],
            identity: &[],
        });
        assert_eq!(answer.answer, SameModel::No);
        assert!(answer.because[0].starts_with("accuracy differs by -28.0 points on 100"));
    }

    #[test]
    fn the_worst_pair_answers_for_the_run() {
        let mut other = quality(60, 30, 2, 8);
        other.other = "c".into();
        let q = [quality(1500, 20, 20, 300), other];
        let answer = decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
            parity: &[],
            identity: &[],
        });
        assert_eq!(answer.answer, SameModel::No);
        assert!(answer
            .because
            .iter()
            .any(|r| r.starts_with("c: accuracy differs")));
        assert!(answer
            .because
            .iter()
            .any(|r| r.starts_with("b: equivalent")));
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1840), "1,840");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
