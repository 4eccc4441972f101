//! Saved answers played again: a new run's replayed endpoints (`coherence diff`,
//! `compare --baseline`) get their records copied from the saved runs they come from, the
//! prompts a replayed endpoint has no answer for are left out (nothing can be sent to it), and
//! two saved runs are checked to hold the same items before their answers are compared.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::bail;

use super::journal::{self, effective_in, Journal, Slot};
use super::manifest::{CatalogueInfo, Manifest};
use super::plan::RunPlan;
use super::record::Line;

/// Copy every replayed endpoint's answers into the new run's journal: each source's records of
/// its endpoint for a prompt in the run's scope and a repeat it planned, renamed to the
/// endpoint's name here, repeats numbered after those of the sources before it. Returns how many
/// records were copied.
pub fn copy_answers(manifest: &Manifest, journal: &mut Journal) -> anyhow::Result<usize> {
    let scope: BTreeSet<&str> = manifest.prompts.iter().map(String::as_str).collect();
    let mut copied = 0;
    for endpoint in manifest.endpoints.iter().filter(|e| e.is_replayed()) {
        let mut offset = 0u32;
        for source in &endpoint.replayed_from {
            let loaded = journal::load(Path::new(&source.run))?;
            for mut record in loaded.records.into_iter().filter(|r| {
                r.endpoint == source.endpoint
                    && r.repeat < source.repeats
                    && scope.contains(r.prompt.as_str())
            }) {
                record.endpoint = endpoint.spec.name.clone();
                record.repeat += offset;
                journal.append(record)?;
                copied += 1;
            }
            offset = offset.saturating_add(source.repeats);
        }
    }
    Ok(copied)
}

/// Leave out of the plan the prompts a replayed endpoint has no answer for in some repeat it
/// plays (no record, or only a failed request): nothing is sent to a replayed endpoint, so the
/// run could never complete them. A new run reads the saved runs; a resumed one its own journal,
/// where their answers were copied. A note (results.json `warnings`) says how many and which;
/// when no prompt is left the plan is refused.
pub fn leave_out_unanswered(plan: &mut RunPlan) -> anyhow::Result<()> {
    let mut lacking: BTreeSet<String> = BTreeSet::new();
    let mut notes = Vec::new();
    for e in &plan.endpoints {
        let Some(replayed) = &e.replayed else {
            continue;
        };
        let journals: Vec<(&Path, &str, u32, String)> = if plan.previous.is_some() {
            let repeats = replayed.from.iter().map(|s| s.repeats).sum();
            let label = format!("the replayed endpoint `{}`", e.spec.name);
            vec![(plan.dir.as_path(), e.spec.name.as_str(), repeats, label)]
        } else {
            (replayed.from.iter())
                .map(|s| {
                    let label = format!("the saved run {} (endpoint `{}`)", s.run, s.endpoint);
                    (Path::new(&s.run), s.endpoint.as_str(), s.repeats, label)
                })
                .collect()
        };
        for (dir, endpoint, repeats, label) in journals {
            let none = unanswered(dir, endpoint, repeats, &plan.scope)?;
            if none.len() == plan.scope.len() {
                bail!(
                    "{label} has no answer for any of the {} prompts to compare",
                    plan.scope.len()
                );
            }
            if !none.is_empty() {
                notes.push(format!(
                    "{label} has no answer for {} of the {} prompts ({}); they are left out so the run can complete",
                    none.len(),
                    plan.scope.len(),
                    listed(&none)
                ));
                lacking.extend(none);
            }
        }
    }
    if lacking.is_empty() {
        return Ok(());
    }
    plan.scope.retain(|id| !lacking.contains(id));
    plan.send.retain(|id| !lacking.contains(id));
    if plan.scope.is_empty() {
        bail!("{}; no prompt is left to compare", notes.join("; "));
    }
    plan.notes.extend(notes);
    Ok(())
}

/// The prompts of `scope` (in its order) that `endpoint` has no usable record for in `dir`'s
/// journal in some repeat below `repeats`.
fn unanswered(
    dir: &Path,
    endpoint: &str,
    repeats: u32,
    scope: &[String],
) -> anyhow::Result<Vec<String>> {
    let loaded = journal::load_for_scoring(dir)?;
    let slots = effective_in(&loaded.records);
    let answered = |prompt: &str, repeat: u32| {
        let slot = Slot {
            prompt,
            endpoint,
            repeat,
        };
        slots.get(&slot).is_some_and(|r| !r.is_request_failure())
    };
    Ok(scope
        .iter()
        .filter(|id| (0..repeats).any(|repeat| !answered(id, repeat)))
        .cloned()
        .collect())
}

/// At most ten ids, then how many more.
fn listed(ids: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = ids
        .iter()
        .take(SHOWN)
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text += &format!(" and {} more", ids.len() - SHOWN);
    }
    text
}

/// Why two saved runs' answers cannot be compared item for item: their catalogues differ, or
/// their generated items were made by another generator version or seed. Each message names
/// both values.
pub fn catalogue_mismatch(
    (a_name, a): (&str, &CatalogueInfo),
    (b_name, b): (&str, &CatalogueInfo),
) -> Option<String> {
    if a.hash != b.hash {
        return Some(format!(
            "the catalogues differ: {a_name} has catalogue hash {}, {b_name} has {}",
            display_hash(&a.hash),
            display_hash(&b.hash)
        ));
    }
    match (&a.generated, &b.generated) {
        (Some(x), Some(y)) if x.generator_version != y.generator_version => Some(format!(
            "the generated items differ: {a_name} has generator version {}, {b_name} has {} (catalogue hash {})",
            x.generator_version,
            y.generator_version,
            display_hash(&a.hash)
        )),
        (Some(x), Some(y)) if x.levels != y.levels => Some(format!(
            "the generated items differ: {a_name} has levels {}, {b_name} has {} (catalogue hash {})",
            levels_text(&x.levels),
            levels_text(&y.levels),
            display_hash(&a.hash)
        )),
        (Some(x), Some(y)) if x.seed != y.seed => Some(format!(
            "the generated items differ: {a_name} has seed {}, {b_name} has seed {} (catalogue hash {})",
            x.seed,
            y.seed,
            display_hash(&a.hash)
        )),
        _ => None,
    }
}

/// Levels as the messages show them: `letters=3, logic=5`, or `none` (versions 1 and 2).
fn levels_text(levels: &crate::catalogue::generator::Levels) -> String {
    let text: Vec<String> = levels.iter().map(|(f, l)| format!("{f}={l}")).collect();
    if text.is_empty() {
        "none".into()
    } else {
        text.join(", ")
    }
}

/// A hash as the messages show it (an empty one, from a hand-made manifest, says so).
fn display_hash(hash: &str) -> &str {
    if hash.is_empty() {
        "(none)"
    } else {
        hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::manifest::GeneratedInfo;

    fn info(hash: &str, generated: Option<(u64, u32)>) -> CatalogueInfo {
        CatalogueInfo {
            dir: "prompts".into(),
            hash: hash.into(),
            suites: Vec::new(),
            generated: generated.map(|(seed, generator_version)| GeneratedInfo {
                seed,
                items: 10,
                generator_version,
                levels: Default::default(),
            }),
            long: None,
        }
    }

    #[test]
    fn a_mismatch_names_both_hashes_seeds_or_versions() {
        let same = catalogue_mismatch(("A", &info("h1", None)), ("B", &info("h1", None)));
        assert_eq!(same, None);
        let hashes = catalogue_mismatch(("A", &info("h1", None)), ("B", &info("h2", None)))
            .expect("different hashes");
        assert!(hashes.contains("h1") && hashes.contains("h2"), "{hashes}");
        let seeds = catalogue_mismatch(
            ("A", &info("h", Some((1, 3)))),
            ("B", &info("h", Some((2, 3)))),
        )
        .expect("different seeds");
        assert!(
            seeds.contains("seed 1") && seeds.contains("seed 2"),
            "{seeds}"
        );
        let versions = catalogue_mismatch(
            ("A", &info("h", Some((1, 3)))),
            ("B", &info("h", Some((1, 4)))),
        )
        .expect("different versions");
        assert!(
            versions.contains("version 3") && versions.contains("has 4"),
            "{versions}"
        );
        // More items of the same seed and version are the same items, and more of them.
        let more = catalogue_mismatch(("A", &info("h", Some((1, 3)))), ("B", &info("h", None)));
        assert_eq!(more, None);
    }
}
