//! The behaviour axis ("does it matter?": `equivalent`, `different` or `undecided`) and the one
//! answer to "same model?" that combines it with the identity axis (`numerics.rs`).
//!
//! Behaviour is a claim about someone's deployment, so it never says more than the evidence:
//! - `different` when any pair is shown to differ: the quality verdict is `different` (accuracy
//!   differs, exact McNemar), a family of items is named different after Holm's correction (or,
//!   amended elsewhere, tool calls or long-context answers differ);
//! - `equivalent` when every pair is shown equivalent within the margin and no family differs;
//! - `undecided` otherwise, saying what would decide it.
//!
//! "Same model?" ([`combine`]): `no` when identity is `different` (another artifact: chat
//! template or tokenizer) or behaviour is `different`; `yes` when behaviour is `equivalent` and
//! identity is not `different` (perturbed numerics that change no measured behaviour are the
//! same model); `undecided` otherwise.

use serde::{Deserialize, Serialize};

use super::decision::PairSequential;
use super::families::PairFamilies;
use super::quality::{Quality, QualityVerdict};
use super::sequential::{SequentialDecision, SequentialVerdict};
use crate::analysis::answers::stats::format_p;
use crate::analysis::identity::numerics::{IdentitySummary, IdentityVerdict};

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

/// The behaviour verdict of `summary.behaviour`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BehaviourVerdict {
    Equivalent,
    Undecided,
    Different,
    /// The reference answers no generated family above its floor (`difficulty.rs`): nothing
    /// was measured, so nothing is claimed.
    NotMeasured,
}

impl BehaviourVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            BehaviourVerdict::Equivalent => "equivalent",
            BehaviourVerdict::Undecided => "undecided",
            BehaviourVerdict::Different => "different",
            BehaviourVerdict::NotMeasured => "not measured",
        }
    }
}

/// `summary.behaviour`: does the difference matter, with its reasons (families named).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Behaviour {
    pub verdict: BehaviourVerdict,
    pub because: Vec<String>,
}

impl Behaviour {
    /// The behaviour axis of a decided [`Answer`] (`decide`, amended by tool calls and long
    /// context).
    pub fn of(answer: &Answer) -> Behaviour {
        Behaviour {
            verdict: match answer.answer {
                SameModel::Yes => BehaviourVerdict::Equivalent,
                SameModel::Undecided => BehaviourVerdict::Undecided,
                SameModel::No => BehaviourVerdict::Different,
            },
            because: answer.because.clone(),
        }
    }
}

/// "Same model?" from both axes: `no` when identity is `different` or behaviour `different`;
/// `yes` when behaviour is `equivalent` and identity is not `different`; else `undecided`. The
/// reasons: identity's first ("identity: perturbed — …"), then behaviour's ("behaviour: …").
pub fn combine(identity: Option<&IdentitySummary>, behaviour: &Behaviour) -> Answer {
    let identity_verdict = identity.map(|i| i.verdict);
    let answer = if identity_verdict == Some(IdentityVerdict::Different)
        || behaviour.verdict == BehaviourVerdict::Different
    {
        SameModel::No
    } else if behaviour.verdict == BehaviourVerdict::Equivalent {
        SameModel::Yes
    } else {
        SameModel::Undecided
    };
    let mut because = Vec::new();
    if let Some(i) = identity {
        because.extend(labelled("identity", i.verdict.as_str(), &i.because));
    }
    because.extend(labelled(
        "behaviour",
        behaviour.verdict.as_str(),
        &behaviour.because,
    ));
    Answer { answer, because }
}

/// "axis: verdict — first reason", then the other reasons as they are.
fn labelled(axis: &str, verdict: &str, because: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(because.len().max(1));
    match because.split_first() {
        Some((first, rest)) => {
            out.push(format!("{axis}: {verdict} — {first}"));
            out.extend(rest.iter().cloned());
        }
        None => out.push(format!("{axis}: {verdict}")),
    }
    out
}

/// Decide the behaviour axis over every (reference, other) pair: the worst pair answers.
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
        QualityVerdict::Inconclusive => {
            let decide = match (q.decide_with, q.more_generated_items) {
                (Some(_), Some(more)) => format!(
                    "about {} more generated items would decide it (compare --until-decided adds them until it is decided)",
                    thousands(more)
                ),
                (Some(n), None) => format!(
                    "about {} graded items would decide it (a sample of that size planned in advance; compare --until-decided adds generated items until it is decided)",
                    thousands(n)
                ),
                (None, _) => {
                    open.push(format!(
                        "quality inconclusive on {} graded items",
                        thousands(q.graded)
                    ));
                    return;
                }
            };
            open.push(format!(
                "quality inconclusive: {:+.1} points, 90% interval [{:+.1}, {:+.1}] on {} graded items; {decide}",
                points(q.difference.estimate),
                points(q.difference.low),
                points(q.difference.high),
                thousands(q.graded),
            ));
        }
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
    use crate::analysis::answers::stats::Paired;
    use crate::analysis::behaviour::families::family_verdicts;
    use crate::analysis::behaviour::quality::assess;

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

    #[test]
    fn equivalent_quality_and_agreeing_tokens_say_yes() {
        let q = [quality(1500, 20, 20, 300)];
        let answer = decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
        });
        assert_eq!(answer.answer, SameModel::Yes, "{:?}", answer.because);
        assert_eq!(
            headline(answer.answer, &answer.because),
            "Same model: yes — equivalent within ±5 points on 1,840 graded items"
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

    fn identity(verdict: IdentityVerdict, why: &str) -> IdentitySummary {
        IdentitySummary {
            verdict,
            because: vec![why.to_string()],
            evidence: Vec::new(),
            control_growth: None,
        }
    }

    #[test]
    fn another_chat_template_says_no_even_when_behaviour_is_equivalent() {
        let q = [quality(1500, 20, 20, 300)];
        let behaviour = Behaviour::of(&decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
        }));
        assert_eq!(behaviour.verdict, BehaviourVerdict::Equivalent);
        let different = identity(IdentityVerdict::Different, "prompt tokens differ");
        let answer = combine(Some(&different), &behaviour);
        assert_eq!(answer.answer, SameModel::No);
        assert_eq!(
            answer.because[0],
            "identity: different — prompt tokens differ"
        );
        assert!(answer.because[1].starts_with("behaviour: equivalent — "));
    }

    #[test]
    fn perturbed_numerics_with_equivalent_behaviour_are_the_same_model() {
        let q = [quality(1500, 20, 20, 300)];
        let behaviour = Behaviour::of(&decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
        }));
        let perturbed = identity(IdentityVerdict::Perturbed, "further");
        assert_eq!(combine(Some(&perturbed), &behaviour).answer, SameModel::Yes);
        let lopsided = [quality(60, 30, 2, 8)];
        let different = Behaviour::of(&decide(Evidence {
            quality: &lopsided,
            sequential: &[],
            families: &[],
        }));
        let identical = identity(IdentityVerdict::Identical, "as close");
        assert_eq!(combine(Some(&identical), &different).answer, SameModel::No);
        let open = Behaviour {
            verdict: BehaviourVerdict::Undecided,
            because: Vec::new(),
        };
        assert_eq!(
            combine(Some(&perturbed), &open).answer,
            SameModel::Undecided
        );
        assert_eq!(combine(None, &open).because, ["behaviour: undecided"]);
    }

    #[test]
    fn too_few_items_say_undecided_and_what_would_decide_it() {
        let q = [quality(80, 6, 4, 6)];
        let answer = decide(Evidence {
            quality: &q,
            sequential: &[],
            families: &[],
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
