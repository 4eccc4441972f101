//! A run's inputs, read once from its folder: the records, the probes of the load phases and
//! teacher forcing, with the manifest and catalogue the run is scored with, and a note for every
//! line that was read but cannot count (unreadable, or outside the run).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::catalogue::{Catalogue, Prompt};
use crate::logprobs::forced::ForcedLine;
use crate::probes::journal::LoadRecord;
use crate::probes::LoadPlan;
use crate::run::journal;
use crate::run::record::Answered;
use crate::run::Manifest;
use crate::run_folder::compare;

/// Everything the results of one run are built from.
#[derive(Debug)]
pub struct Inputs<'a> {
    pub manifest: &'a Manifest,
    /// The catalogue the answers are scored with (the run's own, or the one given now).
    pub catalogue: &'a Catalogue,
    /// `records.jsonl`, in file order, as scoring keeps it.
    pub records: Vec<Answered>,
    /// `load.jsonl` (the load, cache-state and samples phases; empty for most runs).
    pub probes: Vec<LoadRecord>,
    /// Probes that `load-plan.json` plans and `load.jsonl` does not answer (a load, cache-state
    /// or samples phase stopped part-way); 0 for a run without those phases.
    pub probes_missing: usize,
    /// `teacher_forcing.jsonl` (after `compare --logprobs`; empty otherwise).
    pub forcing: Vec<ForcedLine>,
    /// Notes for results.json `warnings`, in the order they were met.
    pub warnings: Vec<String>,
}

impl<'a> Inputs<'a> {
    /// Read the run folder `dir`. `warnings` are notes met before (while sending); a note that
    /// reading repeats is kept once.
    pub fn read(
        dir: &Path,
        manifest: &'a Manifest,
        catalogue: &'a Catalogue,
        mut warnings: Vec<String>,
    ) -> anyhow::Result<Self> {
        let loaded = journal::load_for_scoring(dir)?;
        for w in loaded.skipped {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        for note in &manifest.notes {
            if !warnings.contains(note) {
                warnings.push(note.clone());
            }
        }
        warnings.extend(outside_the_run(manifest, &loaded.records));
        if !manifest.catalogue.hash.is_empty() && manifest.catalogue.hash != catalogue.hash {
            warnings.push(format!(
                "the catalogue in {} changed since the run (hash {} then, {} now); answers were scored with the current one",
                catalogue.dir.display(),
                short(&manifest.catalogue.hash),
                short(&catalogue.hash)
            ));
        }
        let probes = crate::probes::journal::load(dir)?;
        warnings.extend(probes.skipped);
        let forcing = compare::folder(dir).read_lines(compare::TEACHER_FORCING)?;
        warnings.extend(forcing.skipped);
        let probes_missing = probes_missing(dir, manifest, catalogue, &probes.values)?;
        Ok(Inputs {
            manifest,
            catalogue,
            records: loaded.records,
            probes: probes.values,
            probes_missing,
            forcing: forcing.values,
            warnings,
        })
    }
}

/// The probes the run's load plan sends that `probes` does not answer, over every endpoint.
fn probes_missing(
    dir: &Path,
    manifest: &Manifest,
    catalogue: &Catalogue,
    probes: &[LoadRecord],
) -> anyhow::Result<usize> {
    let Some(plan) = LoadPlan::read(dir)? else {
        return Ok(0);
    };
    let prompts: Vec<&Prompt> = manifest
        .prompts
        .iter()
        .filter_map(|id| catalogue.get(id))
        .collect();
    let answered = crate::probes::journal::answered(probes);
    Ok(manifest
        .endpoint_names()
        .iter()
        .map(|e| plan.missing(e, &prompts, manifest.repeats_of(e), &answered))
        .sum())
}

/// What a record names that the run does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outside {
    Prompt,
    Endpoint,
    Repeat,
}

impl Outside {
    fn noun(self) -> &'static str {
        match self {
            Outside::Prompt => "prompt",
            Outside::Endpoint => "endpoint",
            Outside::Repeat => "repeat",
        }
    }

    /// What the manifest has instead.
    fn in_the_run(self, manifest: &Manifest) -> String {
        match self {
            Outside::Prompt => format!("{} prompts", manifest.prompts.len()),
            Outside::Endpoint => format!("endpoints {}", manifest.endpoint_names().join(", ")),
            Outside::Repeat => format!("{} repeats", manifest.repeats),
        }
    }
}

/// One note per kind of record that names no slot of the run (a prompt, endpoint or repeat the
/// manifest does not have): such records are not scored, and the note says how many and which.
/// A reference answer of the A-vs-A control (`manifest.control`): the identity axis reads it;
/// the per-prompt results, which read the planned repeats, do not.
fn is_control(manifest: &Manifest, r: &Answered) -> bool {
    manifest.control > 0
        && r.repeat == crate::run::CONTROL_REPEAT
        && manifest
            .endpoints
            .first()
            .is_some_and(|e| *e.spec.name == *r.endpoint)
}

fn outside_the_run(manifest: &Manifest, records: &[Answered]) -> Vec<String> {
    let prompts: BTreeSet<&str> = manifest.prompts.iter().map(String::as_str).collect();
    let endpoints: BTreeSet<&str> = manifest
        .endpoints
        .iter()
        .map(|e| e.spec.name.as_str())
        .collect();
    let mut unknown: BTreeMap<Outside, BTreeMap<String, usize>> = BTreeMap::new();
    for r in records {
        let (what, value) = if !prompts.contains(&*r.prompt) {
            (Outside::Prompt, format!("`{}`", r.prompt))
        } else if !endpoints.contains(&*r.endpoint) {
            (Outside::Endpoint, format!("`{}`", r.endpoint))
        } else if r.repeat >= manifest.repeats_of(&r.endpoint) && !is_control(manifest, r) {
            (Outside::Repeat, (u64::from(r.repeat) + 1).to_string())
        } else {
            continue;
        };
        *unknown.entry(what).or_default().entry(value).or_default() += 1;
    }
    unknown
        .into_iter()
        .map(|(what, values)| {
            let count: usize = values.values().sum();
            let shown: Vec<String> = values.keys().take(5).cloned().collect();
            let more = match values.len() - shown.len() {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            format!(
                "{}: {count} record{} for a {} the run does not have ({}{more}; the \
                 manifest has {}) skipped",
                compare::RECORDS,
                if count == 1 { "" } else { "s" },
                what.noun(),
                shown.join(", "),
                what.in_the_run(manifest)
            )
        })
        .collect()
}

/// The first 12 characters of a hash (a hand-edited manifest may hold any text).
fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}
