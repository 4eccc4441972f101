//! results.json `difficulty`: each generated family's level and how it was chosen (calibrated on
//! the reference, `compare/calibrate.rs`, or fixed by `--difficulty`), and what it does to the
//! behaviour axis: a family at the floor (the reference no better than a constant at level 1)
//! is left out of the verdict and named; when every family is at the floor, behaviour is "not
//! measured", never `equivalent`; otherwise the verdict says on how many families and at what
//! reference accuracy it was decided.

use super::families::PairFamilies;
use super::same_model::{Behaviour, BehaviourVerdict};
use crate::catalogue::generator::{self, FamilyLevel, LevelStatus, Version};
use crate::run::Manifest;

/// What behaviour reads when no family is above its floor.
pub const NOT_MEASURED: &str = "the reference answers no family above its floor";

/// The run's families and levels: calibration's outcome, or the levels `--difficulty` fixed
/// (version 3 runs without calibration); none for runs of versions 1 and 2.
pub fn of(manifest: &Manifest) -> Vec<FamilyLevel> {
    if !manifest.difficulty.is_empty() || manifest.target_accuracy.is_some() {
        // Calibrated, or calibrating still (a run stopped before measuring): as recorded.
        return manifest.difficulty.clone();
    }
    let Some(g) = &manifest.catalogue.generated else {
        return Vec::new();
    };
    if Version::from_number(g.generator_version) != Some(Version::V3) {
        return Vec::new();
    }
    generator::families()
        .map(|family| {
            let level = g.levels.of(family);
            FamilyLevel {
                family: family.to_string(),
                level,
                status: LevelStatus::Fixed,
                requests: 0,
                right: 0,
                at_level: (0, 0),
                constant_share: 0.0,
                max_tokens: g
                    .levels
                    .max_tokens_of(family)
                    .or_else(|| generator::max_tokens(family, level))
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The behaviour axis amended by the families' levels: floors named, "not measured" when no
/// family is above its floor, and the families and reference accuracy it was decided on.
pub fn amend(behaviour: &mut Behaviour, levels: &[FamilyLevel], families: &[PairFamilies]) {
    if levels.is_empty() {
        return;
    }
    let floor: Vec<&str> = levels
        .iter()
        .filter(|l| l.status == LevelStatus::Floor)
        .map(|l| l.family.as_str())
        .collect();
    let floor_reason = (!floor.is_empty()).then(|| {
        format!(
            "left out at the floor (the reference does no better than a constant answer at level 1): {}",
            floor.join(", ")
        )
    });
    if floor.len() == levels.len() {
        behaviour.verdict = BehaviourVerdict::NotMeasured;
        behaviour.because = std::iter::once(NOT_MEASURED.to_string())
            .chain(floor_reason)
            .collect();
        return;
    }
    let measured: Vec<&FamilyLevel> = levels
        .iter()
        .filter(|l| l.status != LevelStatus::Floor)
        .collect();
    // The reference's accuracy on the measured families' items (the first pair's graded items).
    let (right, graded) = families
        .first()
        .map(|p| {
            p.verdicts
                .families
                .iter()
                .filter(|f| measured.iter().any(|l| l.family == f.family))
                .fold((0, 0), |(r, g), f| {
                    (r + f.reference.correct, g + f.reference.graded)
                })
        })
        .unwrap_or_default();
    let accuracy = if graded > 0 {
        format!(
            ", reference accuracy {:.0}% ({right} of {graded})",
            right as f64 * 100.0 / graded as f64
        )
    } else {
        String::new()
    };
    let at_levels = match measured.split_first() {
        Some((first, rest)) if rest.iter().all(|l| l.level == first.level) => {
            format!("at level {}", first.level)
        }
        _ => {
            let each: Vec<String> = measured
                .iter()
                .map(|l| format!("{} {}", l.family, l.level))
                .collect();
            format!("at their levels ({})", each.join(", "))
        }
    };
    let decided_on = format!(
        "on {} of {} families {at_levels}{accuracy}",
        measured.len(),
        levels.len()
    );
    let at = behaviour.because.len().min(1);
    behaviour.because.insert(at, decided_on);
    behaviour.because.extend(floor_reason);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(family: &str, status: LevelStatus) -> FamilyLevel {
        FamilyLevel {
            family: family.into(),
            level: 3,
            status,
            requests: 12,
            right: 6,
            at_level: (8, 6),
            constant_share: 0.2,
            max_tokens: 64,
        }
    }

    #[test]
    fn every_family_at_the_floor_is_not_measured_never_equivalent() {
        let mut b = Behaviour {
            verdict: BehaviourVerdict::Equivalent,
            because: vec!["equivalent within ±5 points".into()],
        };
        amend(
            &mut b,
            &[
                level("letters", LevelStatus::Floor),
                level("logic", LevelStatus::Floor),
            ],
            &[],
        );
        assert_eq!(b.verdict, BehaviourVerdict::NotMeasured);
        assert_eq!(b.because[0], NOT_MEASURED);
        assert!(b.because[1].ends_with("letters, logic"), "{:?}", b.because);
    }

    #[test]
    fn floors_are_named_and_the_measured_families_said() {
        let mut b = Behaviour {
            verdict: BehaviourVerdict::Undecided,
            because: vec!["quality inconclusive".into()],
        };
        amend(
            &mut b,
            &[
                level("letters", LevelStatus::Floor),
                level("logic", LevelStatus::Measured),
            ],
            &[],
        );
        assert_eq!(b.verdict, BehaviourVerdict::Undecided);
        assert_eq!(b.because[0], "quality inconclusive");
        assert_eq!(b.because[1], "on 1 of 2 families at level 3");
        assert!(b.because[2].ends_with(": letters"));
    }
}
