//! Difficulty levels of the generated suite (generator version 3): every family has levels
//! [`LOWEST`] to [`HIGHEST`], level 1 within reach of a 135M model where the skill allows it and
//! the top level beyond a frontier model. A run makes each family's items at one level, its
//! [`Levels`], chosen by calibration on the reference or fixed by `--difficulty`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The easiest level.
pub const LOWEST: u8 = 1;
/// The hardest level.
pub const HIGHEST: u8 = 8;
/// The level of a family no choice names (`prompts list` without `--difficulty`).
pub const DEFAULT_LEVEL: u8 = 4;

/// The value of `table` at `level` (clamped to the levels there are).
pub(super) fn by_level<T: Copy>(level: u8, table: [T; HIGHEST as usize]) -> T {
    table[usize::from(level.clamp(LOWEST, HIGHEST) - 1)]
}

/// Each family's level (a family it does not name is at [`DEFAULT_LEVEL`]) and the budgets
/// calibration grew (a family it does not name keeps its own).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Levels {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    levels: BTreeMap<String, u8>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    max_tokens: BTreeMap<String, u32>,
}

impl Levels {
    /// Every family at `level`.
    pub fn all_at(level: u8) -> Levels {
        Levels {
            levels: super::families().map(|f| (f.to_string(), level)).collect(),
            max_tokens: BTreeMap::new(),
        }
    }

    /// `family` at `level`, the others as they were.
    pub fn set(&mut self, family: &str, level: u8) {
        self.levels.insert(family.to_string(), level);
    }

    /// `family`'s budget, grown by calibration.
    pub fn set_max_tokens(&mut self, family: &str, max_tokens: u32) {
        self.max_tokens.insert(family.to_string(), max_tokens);
    }

    /// The level of `family`.
    pub fn of(&self, family: &str) -> u8 {
        self.levels.get(family).copied().unwrap_or(DEFAULT_LEVEL)
    }

    /// The budget calibration gave `family`, if it grew one.
    pub fn max_tokens_of(&self, family: &str) -> Option<u32> {
        self.max_tokens.get(family).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.levels.is_empty() && self.max_tokens.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u8)> {
        self.levels.iter().map(|(f, l)| (f.as_str(), *l))
    }

    /// `N` (every family) or `family=N,family=N` (the others at `base`'s levels); an error names
    /// what is wrong.
    pub fn parse(text: &str, base: &Levels) -> Result<Levels, String> {
        let level = |s: &str| -> Result<u8, String> {
            s.trim()
                .parse::<u8>()
                .ok()
                .filter(|l| (LOWEST..=HIGHEST).contains(l))
                .ok_or_else(|| format!("a level is {LOWEST} to {HIGHEST}, not `{}`", s.trim()))
        };
        if !text.contains('=') {
            return Ok(Levels::all_at(level(text)?));
        }
        let mut levels = base.clone();
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let (family, l) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not family=level"))?;
            let family = family.trim();
            if !super::families().any(|f| f == family) {
                return Err(format!(
                    "no generated family is called `{family}` (families: {})",
                    super::families().collect::<Vec<_>>().join(", ")
                ));
            }
            levels.set(family, level(l)?);
        }
        Ok(levels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_as_one_number_or_per_family_naming_what_is_wrong() {
        assert_eq!(
            Levels::parse("3", &Levels::default())
                .unwrap()
                .of("letters"),
            3
        );
        let some = Levels::parse("letters=2, arithmetic=7", &Levels::all_at(5)).unwrap();
        assert_eq!(
            (some.of("letters"), some.of("arithmetic"), some.of("logic")),
            (2, 7, 5)
        );
        assert!(Levels::parse("9", &Levels::default())
            .unwrap_err()
            .contains("1 to 8"));
        assert!(Levels::parse("letterz=2", &Levels::default())
            .unwrap_err()
            .contains("letterz"));
        assert!(Levels::parse("letters", &Levels::default()).is_err());
        assert_eq!(Levels::default().of("sorting"), DEFAULT_LEVEL);
    }
}

/// Where a family was measured (results.json `difficulty[].status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LevelStatus {
    /// Measured at the level where the reference is nearest the target accuracy.
    Measured,
    /// The reference does no better than the family's best constant answer at level 1: its
    /// items are not sent and it is left out of the behaviour verdict.
    Floor,
    /// The reference is at the target or above at the top level: measured there.
    Ceiling,
    /// Fixed by `--difficulty` (no calibration).
    Fixed,
}

impl LevelStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LevelStatus::Measured => "measured",
            LevelStatus::Floor => "floor",
            LevelStatus::Ceiling => "ceiling",
            LevelStatus::Fixed => "fixed",
        }
    }
}

/// One family's calibration: its level, status, the calibration requests and how many the
/// reference got right (at every level and at the chosen one), and its budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyLevel {
    pub family: String,
    pub level: u8,
    pub status: LevelStatus,
    /// Calibration requests sent to the reference (never to another endpoint).
    pub requests: usize,
    /// Of them, answered right.
    pub right: usize,
    /// Calibration answers at the chosen level, and how many were right.
    pub at_level: (usize, usize),
    /// The best constant answer's share of the family's level-1 items (what `floor` compares).
    pub constant_share: f64,
    pub max_tokens: u32,
}
