//! Which suites a run sends: `core` (the catalogue's prompt files) and `generated` (seeded items
//! with exact answers, `generator/`), `long` (the long-context ladder, `long/`), and the one
//! catalogue they make together.

use super::generator::{Levels, Version, DEFAULT_SEED, MAX_ITEMS};
use super::long::LongChoice;
pub use super::spec::Suite;

/// Generated items when `--items` is not given: enough for a paired accuracy difference of a
/// few points to show, a few minutes against a local server.
pub const DEFAULT_ITEMS: usize = 1000;

/// The suites of a catalogue, with the generated suite's seed and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteChoice {
    /// Sorted, without repeats, never empty.
    suites: Vec<Suite>,
    pub seed: u64,
    pub items: usize,
    /// The generator version that makes the generated items: the current one, or a resumed or
    /// re-scored run's own.
    pub generator: Version,
    /// Each generated family's level (version 3 on; a family not named is at the default
    /// level): fixed by `--difficulty`, or chosen by calibration on the reference.
    pub levels: Levels,
    /// The long suite's lengths, depths and context (used when `long` is chosen).
    pub long: LongChoice,
}

impl Default for SuiteChoice {
    /// The core catalogue alone (today's default).
    fn default() -> Self {
        SuiteChoice {
            suites: vec![Suite::Core],
            seed: DEFAULT_SEED,
            items: DEFAULT_ITEMS,
            generator: Version::CURRENT,
            levels: Levels::default(),
            long: LongChoice::default(),
        }
    }
}

impl SuiteChoice {
    /// `suites` (none: the core catalogue alone), the generated suite's seed and item count.
    pub fn new(mut suites: Vec<Suite>, seed: u64, items: usize) -> Result<Self, String> {
        suites.sort_unstable();
        suites.dedup();
        if suites.is_empty() {
            suites.push(Suite::Core);
        }
        if suites.contains(&Suite::Generated) && !(1..=MAX_ITEMS).contains(&items) {
            return Err(format!(
                "the generated suite holds 1 to {MAX_ITEMS} items, not {items}"
            ));
        }
        Ok(SuiteChoice {
            suites,
            seed,
            items,
            generator: Version::CURRENT,
            levels: Levels::default(),
            long: LongChoice::default(),
        })
    }

    pub fn suites(&self) -> &[Suite] {
        &self.suites
    }

    pub fn includes(&self, suite: Suite) -> bool {
        self.suites.contains(&suite)
    }

    /// The number of the generator version that makes the generated items.
    pub fn generator_version(&self) -> u32 {
        self.generator.number()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_are_sorted_deduplicated_and_default_to_core() {
        let c =
            SuiteChoice::new(vec![Suite::Generated, Suite::Core, Suite::Generated], 1, 5).unwrap();
        assert_eq!(c.suites(), &[Suite::Core, Suite::Generated]);
        assert_eq!(
            SuiteChoice::new(vec![], 1, 0).unwrap(),
            SuiteChoice {
                seed: 1,
                items: 0,
                ..SuiteChoice::default()
            }
        );
        assert!(SuiteChoice::new(vec![Suite::Generated], 1, 0).is_err());
        assert_eq!(Suite::parse("generated"), Some(Suite::Generated));
        assert_eq!(Suite::parse("gen"), None);
    }

    #[test]
    fn every_prompt_carries_the_suite_that_made_it() {
        let core = crate::catalogue::embedded::load_built_in().unwrap();
        let all = core.with_suites(SuiteChoice::new(Suite::ALL.to_vec(), 3, 30).unwrap());
        let mut seen = std::collections::BTreeSet::new();
        for p in &all.prompts {
            let named = match p.id.split('.').next() {
                Some("gen") => Suite::Generated,
                Some("tools") => Suite::Tools,
                Some("long") => Suite::Long,
                _ => Suite::Core,
            };
            assert_eq!(p.suite, named, "{}", p.id);
            assert_eq!(all.suite_of(&p.id), Some(named));
            seen.insert(p.suite);
        }
        assert_eq!(seen.len(), Suite::ALL.len(), "{seen:?}");
        assert_eq!(all.suite_of("no such prompt"), None);
    }

    #[test]
    fn the_generated_suite_alone_replaces_the_core_prompts() {
        let core = crate::catalogue::embedded::load_built_in().unwrap();
        let n = core.prompts.len();
        let both = core
            .clone()
            .with_suites(SuiteChoice::new(vec![Suite::Core, Suite::Generated], 3, 30).unwrap());
        assert_eq!(both.prompts.len(), n + 30);
        assert!(both.get("gen.letters.0000").is_some());
        assert!(both.get("count_letters").is_some());
        let generated_only =
            core.with_suites(SuiteChoice::new(vec![Suite::Generated], 3, 30).unwrap());
        assert_eq!(generated_only.prompts.len(), 30);
        assert!(generated_only.get("count_letters").is_none());
        assert_eq!(generated_only.suites.items, 30);
    }
}
