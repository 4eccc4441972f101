//! Per-family verdicts: in which families of a suite two endpoints differ, with the chance of
//! naming any family by noise alone held at α.
//!
//! Per family, over the items both endpoints answered with ground truth: each endpoint's
//! accuracy with its Wilson 95% score interval, the flips each way, and the exact McNemar p-value
//! of the flips (`stats.rs`). Across the k families the p-values are adjusted by Holm's step-down
//! method (Holm 1979): sorted ascending, p_(j) becomes max over i ≤ j of min(1, (k − i + 1)·p_(i)).
//! A family is named `different` when its adjusted p-value is below α. This holds the
//! family-wise error rate (the chance of naming at least one family whose two accuracies are in
//! truth equal) at α or below, whatever the dependence between families, and it rejects
//! everything Bonferroni rejects and sometimes more.
//!
//! Beside each family's accuracies, the floor they are read against: the best constant answer
//! (the answer the family's graded items most often expect, and the accuracy of giving it every
//! time), and each endpoint's most common answer with its share of the endpoint's answers there,
//! so an endpoint that scores by repeating one answer shows as such.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::answers::stats::Paired;
use crate::analysis::answers::stats::{mcnemar_exact, wilson};

/// The method, as results.json names it.
pub const METHOD: &str = "exact McNemar test per family, Holm step-down adjustment across families";

/// One endpoint's accuracy on one family, in percent, with its Wilson 95% score interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyAccuracy {
    pub correct: u64,
    pub graded: u64,
    pub accuracy_percent: f64,
    pub low_percent: f64,
    pub high_percent: f64,
    /// The endpoint's most common answer on the family's graded items (as its scorer read it),
    /// absent when the scorer read none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modal_answer: Option<ModalAnswer>,
}

/// An endpoint's most common answer: the graded items that gave it (`count`) of all the
/// family's graded items (`of`, answered or not), and that share in percent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModalAnswer {
    pub answer: String,
    pub share_percent: f64,
    #[serde(default)]
    pub count: usize,
    #[serde(default)]
    pub of: usize,
}

/// The answer a family's graded items most often expect and the accuracy, in percent, of giving
/// it to every one of them: the floor the family's accuracies are read against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestConstant {
    pub answer: String,
    pub accuracy_percent: f64,
}

/// One item of a family that both endpoints answered with ground truth: the answer it expects
/// (where one answer is right) and the answer the scorer read from each endpoint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GradedItem {
    pub expected: Option<String>,
    pub reference: Option<String>,
    pub other: Option<String>,
}

impl FamilyAccuracy {
    fn of(correct: u64, graded: u64) -> FamilyAccuracy {
        let w = wilson(correct, graded);
        FamilyAccuracy {
            correct,
            graded,
            accuracy_percent: w.value * 100.0,
            low_percent: w.low * 100.0,
            high_percent: w.high * 100.0,
            modal_answer: None,
        }
    }
}

/// The comparison of two endpoints on one family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyVerdict {
    pub family: String,
    /// Items of this family both endpoints answered with ground truth.
    pub graded_items: u64,
    pub reference: FamilyAccuracy,
    pub other: FamilyAccuracy,
    /// Reference right, other wrong.
    pub reference_only: u64,
    /// Reference wrong, other right.
    pub other_only: u64,
    /// accuracy(other) − accuracy(reference), in points.
    pub difference_points: f64,
    /// Exact McNemar p-value of the flips, this family alone.
    pub p_value: f64,
    /// The p-value after Holm's adjustment across every family compared.
    pub holm_p_value: f64,
    /// `holm_p_value < alpha`.
    pub different: bool,
    /// The floor: the best constant answer over the graded items, absent when none of them
    /// expects one answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_constant: Option<BestConstant>,
}

impl FamilyVerdict {
    /// The floor and each endpoint's most common answer, from the family's graded `items`.
    pub fn add_answers(&mut self, items: &[GradedItem]) {
        self.best_constant =
            most_common(items.iter().filter_map(|i| i.expected.as_deref())).map(|(answer, n)| {
                BestConstant {
                    answer,
                    accuracy_percent: percent(n, items.len()),
                }
            });
        self.reference.modal_answer = modal_answer(items.iter().map(|i| i.reference.as_deref()));
        self.other.modal_answer = modal_answer(items.iter().map(|i| i.other.as_deref()));
    }
}

/// The most common of the answers read (`None`: none read), with how many of all the items
/// (read or not) gave it.
fn modal_answer<'a>(answers: impl Iterator<Item = Option<&'a str>>) -> Option<ModalAnswer> {
    let answers: Vec<Option<&str>> = answers.collect();
    most_common(answers.iter().flatten().copied()).map(|(answer, n)| ModalAnswer {
        answer,
        share_percent: percent(n, answers.len()),
        count: n,
        of: answers.len(),
    })
}

/// The most common value (the first in sort order among equally common ones) and its count.
fn most_common<'a>(values: impl Iterator<Item = &'a str>) -> Option<(String, usize)> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    counts
        .into_iter()
        .rev()
        .max_by_key(|(_, n)| *n)
        .map(|(v, n)| (v.to_string(), n))
}

/// `n` of `total` in percent (0 of 0 is 0).
fn percent(n: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 / total as f64 * 100.0
    }
}

/// Every family's comparison, in the order the families were given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyVerdicts {
    /// The test and the correction (`METHOD`).
    pub method: String,
    /// The family-wise error rate the `different` families are named at.
    pub alpha: f64,
    pub families: Vec<FamilyVerdict>,
    /// The families named `different`, smallest adjusted p-value first.
    pub different_families: Vec<String>,
}

/// The family verdicts of one (reference, other) pair, as results.json `families` lists them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairFamilies {
    pub reference: String,
    pub other: String,
    #[serde(flatten)]
    pub verdicts: FamilyVerdicts,
}

/// The family-wise error rate families are named at.
pub const ALPHA: f64 = 0.05;

/// Compare two endpoints family by family at family-wise error rate `alpha` (clamped into
/// [0, 1]; a NaN reads as 0, naming nothing).
pub fn family_verdicts<F: Into<String>>(
    families: impl IntoIterator<Item = (F, Paired)>,
    alpha: f64,
) -> FamilyVerdicts {
    let alpha = if alpha.is_nan() {
        0.0
    } else {
        alpha.clamp(0.0, 1.0)
    };
    let counted: Vec<(String, Paired)> = families
        .into_iter()
        .map(|(family, counts)| (family.into(), counts))
        .collect();
    let p_values: Vec<f64> = counted
        .iter()
        .map(|(_, c)| mcnemar_exact(c.reference_only, c.other_only))
        .collect();
    let adjusted = holm_adjusted(&p_values);
    let families: Vec<FamilyVerdict> = counted
        .into_iter()
        .zip(p_values.iter().zip(&adjusted))
        .map(|((family, c), (&p_value, &holm_p_value))| {
            let graded = c.graded();
            let reference_correct = c.both_correct + c.reference_only;
            let other_correct = c.both_correct + c.other_only;
            FamilyVerdict {
                family,
                graded_items: graded,
                reference: FamilyAccuracy::of(reference_correct, graded),
                other: FamilyAccuracy::of(other_correct, graded),
                reference_only: c.reference_only,
                other_only: c.other_only,
                difference_points: if graded == 0 {
                    0.0
                } else {
                    (c.other_only as f64 - c.reference_only as f64) / graded as f64 * 100.0
                },
                p_value,
                holm_p_value,
                different: holm_p_value < alpha,
                best_constant: None,
            }
        })
        .collect();
    let mut named: Vec<&FamilyVerdict> = families.iter().filter(|f| f.different).collect();
    named.sort_by(|a, b| a.holm_p_value.total_cmp(&b.holm_p_value));
    let different_families = named.into_iter().map(|f| f.family.clone()).collect();
    FamilyVerdicts {
        method: METHOD.to_string(),
        alpha,
        families,
        different_families,
    }
}

/// Holm's step-down adjusted p-values, in the order given (a NaN reads as 1).
pub fn holm_adjusted(p_values: &[f64]) -> Vec<f64> {
    let k = p_values.len();
    let clean = |p: f64| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) };
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| clean(p_values[a]).total_cmp(&clean(p_values[b])));
    let mut adjusted = vec![1.0; k];
    let mut running = 0.0_f64;
    for (rank, &index) in order.iter().enumerate() {
        let scaled = ((k - rank) as f64 * clean(p_values[index])).min(1.0);
        running = running.max(scaled);
        adjusted[index] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALPHA: f64 = 0.05;

    /// `items` seeded items of one family: the reference right with chance `reference`, the other
    /// with chance `other`, and, when the two chances are equal, a flip each way with chance
    /// `flip_rate / 2` (independent draws otherwise).
    fn simulate(
        rng: &mut fastrand::Rng,
        items: u64,
        reference: f64,
        other: f64,
        flip_rate: f64,
    ) -> Paired {
        let mut counts = Paired::default();
        for _ in 0..items {
            let (a, b) = if reference == other {
                let u = rng.f64();
                if u < flip_rate / 2.0 {
                    (true, false)
                } else if u < flip_rate {
                    (false, true)
                } else {
                    let both = rng.f64() < (reference - flip_rate / 2.0) / (1.0 - flip_rate);
                    (both, both)
                }
            } else {
                (rng.f64() < reference, rng.f64() < other)
            };
            counts.add(a, b);
        }
        counts
    }

    /// Twelve families of `items` items with equal accuracies (30–85%) and 5–12% flips each way
    /// in all, the first replaced by a counting family at 88% vs 31% when `deficit` is set.
    fn suite(rng: &mut fastrand::Rng, items: u64, deficit: bool) -> Vec<(String, Paired)> {
        (0..12)
            .map(|f| {
                let name = format!("family_{f:02}");
                if deficit && f == 0 {
                    return (
                        "counting".to_string(),
                        simulate(rng, items, 0.88, 0.31, 0.0),
                    );
                }
                let accuracy = 0.30 + 0.05 * f as f64;
                let flip_rate = 0.05 + 0.07 * (f % 4) as f64 / 3.0;
                (name, simulate(rng, items, accuracy, accuracy, flip_rate))
            })
            .collect()
    }

    #[test]
    fn holm_matches_the_textbook_example() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02.
        let adjusted = holm_adjusted(&[0.01, 0.04, 0.03, 0.005]);
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{adjusted:?}");
        }
        assert!(holm_adjusted(&[]).is_empty());
        assert_eq!(holm_adjusted(&[f64::NAN, 0.5, 0.9]), vec![1.0, 1.0, 1.0]);
        assert_eq!(holm_adjusted(&[0.2, 0.2]), vec![0.4, 0.4]);
    }

    #[test]
    fn a_counting_deficit_is_named_with_its_accuracies_and_flips() {
        // 42 counting items: the reference right on 37 (88%), the other on 13 (31%), the
        // other's right answers a subset of the reference's; eleven families without a flip
        // imbalance beside it.
        let counting = Paired {
            both_correct: 13,
            reference_only: 24,
            other_only: 0,
            both_wrong: 5,
        };
        let balanced = Paired {
            both_correct: 20,
            reference_only: 3,
            other_only: 3,
            both_wrong: 16,
        };
        let mut families = vec![("counting", counting)];
        families.extend((0..11).map(|_| ("other", balanced)));
        let v = family_verdicts(families, ALPHA);
        let counting = &v.families[0];
        assert_eq!(v.different_families, vec!["counting".to_string()]);
        assert!((counting.reference.accuracy_percent - 88.095).abs() < 1e-3);
        assert!((counting.other.accuracy_percent - 30.952).abs() < 1e-3);
        assert!(counting.other.high_percent < counting.reference.low_percent);
        assert_eq!((counting.reference_only, counting.other_only), (24, 0));
        // 24 flips all one way: 2 · 2⁻²⁴, then twelve families' worth of Holm.
        assert!((counting.p_value - 2f64.powi(-23)).abs() < 1e-18);
        assert!((counting.holm_p_value - 12.0 * 2f64.powi(-23)).abs() < 1e-15);
        assert!((counting.difference_points + 57.143).abs() < 1e-3);
        assert!(v.families[1..]
            .iter()
            .all(|f| !f.different && f.holm_p_value == 1.0));
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["families"][0]["reference"]["correct"], 37);
        assert_eq!(json["different_families"][0], "counting");
    }

    /// Ten letters items: three expect 1, five other counts, two no single answer. The
    /// reference answers what each expects; the other says 1 to all but one, which it leaves
    /// unread.
    #[test]
    fn a_constant_answer_shows_as_the_modal_answer_beside_the_floor() {
        let expected = ["1", "1", "1", "2", "3", "4", "5", "0"];
        let mut items: Vec<GradedItem> = expected
            .iter()
            .map(|e| GradedItem {
                expected: Some(e.to_string()),
                reference: Some(e.to_string()),
                other: Some("1".into()),
            })
            .collect();
        items.extend(["x", "y"].map(|answer| GradedItem {
            expected: None,
            reference: Some(answer.into()),
            other: Some("1".into()),
        }));
        items[3].other = None;
        let counts = Paired {
            both_correct: 3,
            reference_only: 7,
            ..Paired::default()
        };
        let mut v = family_verdicts([("letters", counts)], ALPHA);
        let f = &mut v.families[0];
        f.add_answers(&items);
        let floor = f.best_constant.clone().unwrap();
        assert_eq!((floor.answer.as_str(), floor.accuracy_percent), ("1", 30.0));
        // Its share is of every graded item: the unread one counts in the whole, not the part.
        let other = f.other.modal_answer.clone().unwrap();
        assert_eq!(
            (
                other.answer.as_str(),
                other.count,
                other.of,
                other.share_percent
            ),
            ("1", 9, 10, 90.0)
        );
        let reference = f.reference.modal_answer.clone().unwrap();
        assert_eq!(
            (
                reference.answer.as_str(),
                reference.count,
                reference.share_percent
            ),
            ("1", 3, 30.0)
        );
        // The other's 30% accuracy is the floor's: no evidence of counting.
        assert_eq!(f.other.accuracy_percent, floor.accuracy_percent);
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["families"][0]["best_constant"]["answer"], "1");
        assert_eq!(
            json["families"][0]["other"]["modal_answer"]["share_percent"],
            90.0
        );
        // Nothing read, nothing expected: neither is claimed.
        let f = &mut v.families[0];
        f.add_answers(&[GradedItem::default()]);
        assert_eq!((&f.best_constant, &f.other.modal_answer), (&None, &None));
    }

    #[test]
    fn nothing_graded_and_nonsense_alpha_name_nothing() {
        let v = family_verdicts([("empty", Paired::default())], ALPHA);
        assert_eq!(v.families[0].p_value, 1.0);
        assert_eq!(v.families[0].difference_points, 0.0);
        assert_eq!(v.families[0].reference.high_percent, 100.0);
        assert!(v.different_families.is_empty());
        let lopsided = [(
            "counting",
            Paired {
                reference_only: 30,
                ..Paired::default()
            },
        )];
        assert!(family_verdicts(lopsided, f64::NAN)
            .different_families
            .is_empty());
        assert_eq!(family_verdicts(lopsided, 7.0).alpha, 1.0);
    }

    /// Twelve families with equal accuracies and flip rates, 100 items each, over 300 seeded
    /// trials: Holm names a family in at most α of the trials (measured 1.0%), where naming
    /// every family with a raw p < α names one in far more (measured 17.3%), which shows the
    /// simulation can fail.
    #[test]
    fn twelve_null_families_are_named_at_most_alpha_of_the_time() {
        let trials = 300;
        let mut rng = fastrand::Rng::with_seed(5);
        let (mut holm, mut raw) = (0, 0);
        for _ in 0..trials {
            let v = family_verdicts(suite(&mut rng, 100, false), ALPHA);
            holm += usize::from(!v.different_families.is_empty());
            raw += usize::from(v.families.iter().any(|f| f.p_value < ALPHA));
        }
        let (holm, raw) = (holm as f64 / trials as f64, raw as f64 / trials as f64);
        println!("family-wise false positives: Holm {holm:.3}, unadjusted {raw:.3}");
        let slack = 3.0 * (ALPHA * (1.0 - ALPHA) / trials as f64).sqrt();
        assert!(
            holm <= ALPHA + slack,
            "Holm family-wise error {holm:.3} > α"
        );
        assert!(
            raw > 2.0 * ALPHA,
            "unadjusted {raw:.3}: the simulation cannot fail"
        );
    }

    /// A counting family at 88% vs 31% among eleven equal ones: named alone, with p < 1e-9 at
    /// 84 items (measured 2e-11); at 40 items it is still named first (measured in 100 of 100
    /// trials), though p < 1e-9 is out of reach there: a 57-point gap over 40 items is about 23
    /// flips, and the exact McNemar p of 23 flips all one way is 2 · 2⁻²³ ≈ 2.4e-7.
    #[test]
    fn a_simulated_counting_deficit_is_found_and_named() {
        let mut rng = fastrand::Rng::with_seed(9);
        let v = family_verdicts(suite(&mut rng, 84, true), ALPHA);
        println!("84 items: counting p = {:e}", v.families[0].p_value);
        assert_eq!(v.different_families, vec!["counting".to_string()]);
        assert!(v.families[0].p_value < 1e-9, "{:?}", v.families[0]);
        let trials = 100;
        let named = (0..trials)
            .filter(|_| {
                let v = family_verdicts(suite(&mut rng, 40, true), ALPHA);
                v.different_families.first().map(String::as_str) == Some("counting")
            })
            .count();
        println!("40 items: counting named first in {named} of {trials} trials");
        assert!(named >= 95, "named in {named} of {trials}");
    }
}
