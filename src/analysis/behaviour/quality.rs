//! The quality answer: is the other endpoint as accurate as the reference?
//!
//! Over the prompts both endpoints answered with ground truth (graded), the accuracy difference
//! d = accuracy(other) − accuracy(reference) is a paired difference of proportions. Its 90%
//! confidence interval is Newcombe's hybrid score interval for paired data (Newcombe 1998,
//! method 10: Wilson intervals of each accuracy combined through the phi correlation of the
//! pairs), which stays inside [−1, 1] and behaves at small counts where the Wald interval does not.
//!
//! The verdict, against a margin m (`--margin`, in accuracy points):
//! - `different`: the exact McNemar test of the discordant pairs gives p < 0.05;
//! - `equivalent`: otherwise, when the 90% interval lies inside (−m, +m). This is TOST, two
//!   one-sided tests at α = 0.05: the difference is shown to be above −m and below +m;
//! - `inconclusive`: neither. The data cannot tell; `decide_with` estimates how many graded
//!   prompts would (the interval narrows as 1/√n at the observed discordance), by whichever
//!   verdict comes first: `different` (the 95% interval clears 0) or `equivalent` (the 90%
//!   interval fits the margin). That is the size of a fixed sample planned in advance; a run
//!   with generated items carries the anytime-valid projection instead (`sequential.rs`: adding
//!   items after a look and testing again at a fixed size would void the fixed-sample error
//!   rates), so the report's figures and results.json `sequential` say one number.

use serde::{Deserialize, Serialize};

use crate::analysis::answers::stats::{mcnemar_exact, wilson_at, Paired, Z90, Z95};

/// The default equivalence margin, in accuracy points.
pub const DEFAULT_MARGIN_POINTS: f64 = 5.0;

/// The quality verdict of one endpoint pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QualityVerdict {
    Equivalent,
    Inconclusive,
    Different,
}

impl QualityVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            QualityVerdict::Equivalent => "equivalent",
            QualityVerdict::Inconclusive => "inconclusive",
            QualityVerdict::Different => "different",
        }
    }
}

/// An estimate with its confidence interval, as fractions (0.05 is 5 points).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// The quality comparison of one (reference, other) pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    pub reference: String,
    pub other: String,
    pub verdict: QualityVerdict,
    /// The equivalence margin, in accuracy points.
    pub margin: f64,
    /// Prompts both endpoints answered with ground truth.
    pub graded: u64,
    /// Reference right, other wrong.
    pub reference_only: u64,
    /// Reference wrong, other right.
    pub other_only: u64,
    /// Exact McNemar p-value of reference_only against other_only.
    pub p_value: f64,
    /// accuracy(other) − accuracy(reference), with its 90% interval (the TOST interval).
    pub difference: Interval,
    /// For an inconclusive verdict: about how many graded prompts would decide it at the
    /// observed discordance rate (None when no estimate can be made, e.g. nothing graded). With
    /// generated items: these graded prompts and the `more_generated_items`.
    pub decide_with: Option<u64>,
    /// With generated items: the anytime-valid projection of `compare --until-decided`
    /// (results.json `sequential[].more_items_to_decide`), the generated items to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_generated_items: Option<u64>,
}

impl Quality {
    /// An inconclusive pair projected by its anytime-valid decision over generated items: about
    /// `more` items to add (None: no decision in sight), as `compare --until-decided` would.
    pub fn project_sequentially(&mut self, more: Option<u64>) {
        if self.verdict == QualityVerdict::Inconclusive {
            self.more_generated_items = more;
            self.decide_with = more.map(|m| self.graded + m);
        }
    }
}

/// Newcombe's hybrid score interval (method 10) for accuracy(other) − accuracy(reference) at
/// normal quantile `z`.
pub fn paired_difference(c: Paired, z: f64) -> Interval {
    let n = c.graded();
    if n == 0 {
        return Interval {
            estimate: 0.0,
            low: -1.0,
            high: 1.0,
        };
    }
    let nf = n as f64;
    let (a, b, cc, d) = (
        c.both_correct as f64,
        c.reference_only as f64,
        c.other_only as f64,
        c.both_wrong as f64,
    );
    let reference = wilson_at(c.both_correct + c.reference_only, n, z);
    let other = wilson_at(c.both_correct + c.other_only, n, z);
    let (p1, l1, u1) = (reference.value, reference.low, reference.high);
    let (p2, l2, u2) = (other.value, other.low, other.high);
    let denominator = (a + b) * (cc + d) * (a + cc) * (b + d);
    // Newcombe's phi with his continuity correction of a positive association (as in Altman
    // et al., Statistics with Confidence, 2000): ad − bc is reduced by n/2 when above it.
    let association = a * d - b * cc;
    let corrected = if association > nf / 2.0 {
        association - nf / 2.0
    } else if association < 0.0 {
        association
    } else {
        0.0
    };
    let phi = if denominator > 0.0 {
        corrected / denominator.sqrt()
    } else {
        0.0
    };
    let estimate = (cc - b) / nf;
    let below = ((p2 - l2).powi(2) - 2.0 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1).powi(2))
        .max(0.0)
        .sqrt();
    let above = ((u2 - p2).powi(2) - 2.0 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1).powi(2))
        .max(0.0)
        .sqrt();
    Interval {
        estimate,
        low: (estimate - below).max(-1.0),
        high: (estimate + above).min(1.0),
    }
}

/// The quality verdict of one pair against `margin_points`.
pub fn assess(reference: &str, other: &str, counts: Paired, margin_points: f64) -> Quality {
    let margin = margin_points / 100.0;
    let graded = counts.graded();
    let p_value = mcnemar_exact(counts.reference_only, counts.other_only);
    let difference = paired_difference(counts, Z90);
    let verdict = if graded > 0 && p_value < 0.05 {
        QualityVerdict::Different
    } else if graded > 0 && difference.low > -margin && difference.high < margin {
        QualityVerdict::Equivalent
    } else {
        QualityVerdict::Inconclusive
    };
    let decide_with = (verdict == QualityVerdict::Inconclusive)
        .then(|| prompts_to_decide(counts, difference, margin))
        .flatten();
    Quality {
        reference: reference.to_string(),
        other: other.to_string(),
        verdict,
        margin: margin_points,
        graded,
        reference_only: counts.reference_only,
        other_only: counts.other_only,
        p_value,
        difference,
        decide_with,
        more_generated_items: None,
    }
}

/// Graded prompts that would decide an inconclusive pair if the discordance stayed as observed:
/// the fewer of enough for the 95% interval to exclude zero (`different`, checked first) and,
/// when the estimate is inside the margin, enough for the 90% interval to fit inside it.
fn prompts_to_decide(counts: Paired, interval: Interval, margin: f64) -> Option<u64> {
    let n = counts.graded() as f64;
    let discordant = (counts.reference_only + counts.other_only) as f64;
    if n == 0.0 || discordant == 0.0 {
        // No discordance seen: only the sample size limits the interval; the Wilson interval of
        // a zero count shrinks like 1/n, roughly z²/n for each side.
        return (margin > 0.0).then(|| ((Z90 * Z90) / margin).ceil().max(n + 1.0) as u64);
    }
    let half = (interval.high - interval.low) / 2.0;
    let estimate = interval.estimate.abs();
    let gap = margin - estimate;
    let equivalent = (gap > 0.0).then(|| n * (half / gap).powi(2));
    let different = (estimate > 0.0).then(|| n * (half * Z95 / Z90 / estimate).powi(2));
    let needed = match (equivalent, different) {
        (Some(e), Some(d)) => e.min(d),
        (e, d) => e.or(d)?,
    };
    needed
        .is_finite()
        .then(|| needed.ceil().max(n + 1.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_graded_prompt_lands_in_one_cell() {
        let mut c = Paired::default();
        for (a, b) in [
            (true, true),
            (true, false),
            (true, false),
            (false, true),
            (false, false),
        ] {
            c.add(a, b);
        }
        assert_eq!(c, paired(1, 2, 1, 1));
        assert_eq!(c.graded(), 5);
    }

    fn paired(both_correct: u64, reference_only: u64, other_only: u64, both_wrong: u64) -> Paired {
        Paired {
            both_correct,
            reference_only,
            other_only,
            both_wrong,
        }
    }

    #[test]
    fn newcombe_agrees_with_the_wald_interval_at_large_n_and_mirrors() {
        // At n = 10,000 the score interval and the Wald interval of a paired difference meet:
        // d ± z·sqrt((b + c)/n² − (b − c)²/n³).
        let c = paired(3000, 600, 500, 5900);
        let i = paired_difference(c, Z95);
        let n = 10_000.0_f64;
        let se = ((1100.0 / (n * n)) - (100.0_f64.powi(2) / n.powi(3))).sqrt();
        assert!((i.estimate - -0.01).abs() < 1e-12);
        assert!((i.low - (-0.01 - Z95 * se)).abs() < 5e-4, "{i:?}");
        assert!((i.high - (-0.01 + Z95 * se)).abs() < 5e-4, "{i:?}");
        // Swapping the endpoints mirrors the interval.
        let m = paired_difference(paired(3000, 500, 600, 5900), Z95);
        assert!((m.low + i.high).abs() < 1e-9 && (m.high + i.low).abs() < 1e-9);
        // Small counts stay inside [-1, 1] and around the estimate.
        let s = paired_difference(paired(0, 3, 0, 0), Z95);
        assert!(s.low >= -1.0 && s.high <= 1.0 && s.low < -0.5 && s.high > -1.0);
    }

    #[test]
    fn identical_endpoints_over_100_prompts_are_equivalent() {
        let q = assess("a", "b", paired(60, 0, 0, 40), DEFAULT_MARGIN_POINTS);
        assert_eq!(q.verdict, QualityVerdict::Equivalent, "{q:?}");
        assert_eq!(q.p_value, 1.0);
        assert!(q.difference.low > -0.05 && q.difference.high < 0.05);
    }

    #[test]
    fn a_systemic_deficit_is_different() {
        // The field report: counting prompts, reference right and other wrong on 10 of 13.
        let q = assess("full", "spark", paired(3, 10, 0, 0), DEFAULT_MARGIN_POINTS);
        assert_eq!(q.verdict, QualityVerdict::Different);
        assert!(q.p_value < 0.01);
        assert!(q.difference.high < 0.0);
    }

    #[test]
    fn balanced_flips_on_a_small_catalogue_are_inconclusive_and_say_what_would_decide() {
        // The committed example: 18 vs 17 correct of 95, flips 6 one way and 5 the other.
        let q = assess("f16", "q4", paired(12, 6, 5, 72), DEFAULT_MARGIN_POINTS);
        assert_eq!(q.verdict, QualityVerdict::Inconclusive, "{q:?}");
        assert_eq!(q.p_value, 1.0);
        let n = q.decide_with.unwrap();
        assert!(n > 95 && n < 2000, "{n}");
        // At that size, with the same discordance, the interval fits the margin.
        let k = n as f64 / 95.0;
        let scaled = paired(
            (12.0 * k) as u64,
            (6.0 * k) as u64,
            (5.0 * k) as u64,
            (72.0 * k) as u64,
        );
        let later = assess("f16", "q4", scaled, DEFAULT_MARGIN_POINTS);
        assert_eq!(later.verdict, QualityVerdict::Equivalent, "{later:?}");
    }

    #[test]
    fn the_projection_is_the_first_decision_to_come() {
        // runs/example-smollm2-kv-demo before issue 48: 7 flips one way and 2 the other over
        // 140 items, -3.6 points. The equivalence route alone said 1,033 items; the interval
        // clears 0 long before the 90% interval fits ±5 points.
        let counts = paired(0, 7, 2, 131);
        let q = assess("f16", "q4", counts, DEFAULT_MARGIN_POINTS);
        assert_eq!(q.verdict, QualityVerdict::Inconclusive);
        let n = q.decide_with.unwrap();
        assert!(n < 400, "{n}");
        let k = n as f64 / 140.0 * 1.05;
        let scaled = paired(0, (7.0 * k) as u64, (2.0 * k) as u64, (131.0 * k) as u64);
        let later = assess("f16", "q4", scaled, DEFAULT_MARGIN_POINTS);
        assert_eq!(later.verdict, QualityVerdict::Different, "{later:?}");
    }

    #[test]
    fn a_sequential_projection_replaces_the_fixed_one() {
        let mut q = assess("f16", "q4", paired(0, 7, 2, 131), DEFAULT_MARGIN_POINTS);
        q.project_sequentially(Some(559));
        assert_eq!(
            (q.decide_with, q.more_generated_items),
            (Some(699), Some(559))
        );
        q.project_sequentially(None);
        assert_eq!((q.decide_with, q.more_generated_items), (None, None));
        let mut decided = assess("f16", "q4", paired(3, 10, 0, 0), DEFAULT_MARGIN_POINTS);
        decided.project_sequentially(Some(5));
        assert_eq!(
            decided.decide_with, None,
            "only an inconclusive pair is projected"
        );
    }

    #[test]
    fn nothing_graded_is_inconclusive() {
        let q = assess("a", "b", Paired::default(), DEFAULT_MARGIN_POINTS);
        assert_eq!(q.verdict, QualityVerdict::Inconclusive);
    }

    #[test]
    fn a_wide_margin_accepts_what_a_narrow_one_cannot() {
        let counts = paired(12, 6, 5, 72);
        assert_eq!(
            assess("a", "b", counts, 10.0).verdict,
            QualityVerdict::Equivalent
        );
        assert_eq!(
            assess("a", "b", counts, 2.0).verdict,
            QualityVerdict::Inconclusive
        );
    }
}
