//! Which suites a run sends: `core` (the catalogue's prompt files) and `generated` (seeded items
//! with exact answers, `generator/`), `long` (the long-context ladder, `long/`), and the one
//! catalogue they make together.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::generator::{self, Version, DEFAULT_SEED, MAX_ITEMS};
use super::long::LongChoice;

/// Generated items when `--items` is not given: enough for a paired accuracy difference of a
/// few points to show, a few minutes against a local server.
pub const DEFAULT_ITEMS: usize = 1000;

/// A suite of prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// The catalogue's prompt files (built in: the 100 prompts of the field report).
    Core,
    /// Seeded items from the generator.
    Generated,
    /// Prompts that offer functions and score the calls (`tools/`).
    Tools,
    /// The long-context retrieval ladder (`long/`).
    Long,
}

impl Suite {
    pub const ALL: [Suite; 4] = [Suite::Core, Suite::Generated, Suite::Tools, Suite::Long];

    pub fn name(self) -> &'static str {
        match self {
            Suite::Core => "core",
            Suite::Generated => "generated",
            Suite::Tools => "tools",
            Suite::Long => "long",
        }
    }

    pub fn parse(name: &str) -> Option<Suite> {
        Suite::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The suite a prompt id belongs to.
    pub fn of(id: &str) -> Suite {
        if generator::is_generated(id) {
            Suite::Generated
        } else if super::tools::is_tool_item(id) {
            Suite::Tools
        } else if super::long::is_long(id) {
            Suite::Long
        } else {
            Suite::Core
        }
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
        assert_eq!(Suite::of("gen.letters.0001"), Suite::Generated);
        assert_eq!(Suite::of("count_letters"), Suite::Core);
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
