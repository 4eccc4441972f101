//! Saved runs read to be played again (`diff`, `compare --baseline`): an endpoint chosen by
//! name, turned into a planned endpoint that nothing is sent to (and kept so on `--resume`), the
//! prompts several runs all cover, and the refusal of runs whose items differ from each other's
//! or from the catalogue's now.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

use crate::catalogue::Catalogue;
use crate::run::replay::catalogue_mismatch;
use crate::run::{CatalogueInfo, EndpointInfo, Manifest, PlannedEndpoint, ReplaySource, Replayed};

/// A run folder read back: where it is and what its manifest says.
pub(super) struct SavedRun {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl SavedRun {
    /// Read the run in `dir` (its manifest must be valid).
    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        Ok(SavedRun {
            dir: dir.to_path_buf(),
            manifest: Manifest::read(dir)?,
        })
    }

    /// The endpoint called `name`, else the run's only one; `flag` is the flag that names it.
    pub fn endpoint(&self, name: Option<&str>, flag: &str) -> anyhow::Result<&EndpointInfo> {
        let names = self.manifest.endpoint_names().join(", ");
        let endpoints = &self.manifest.endpoints;
        match name {
            Some(n) => endpoints.iter().find(|e| e.spec.name == n).ok_or_else(|| {
                anyhow!(
                    "{flag} {n}: {} has no endpoint `{n}` (it has {names})",
                    self.dir.display()
                )
            }),
            None if endpoints.len() == 1 => Ok(&endpoints[0]),
            None => bail!(
                "{} has endpoints {names}: choose one with {flag} NAME",
                self.dir.display()
            ),
        }
    }

    /// Where `endpoint`'s answers are in this run, for a replayed endpoint's manifest entry.
    pub fn source(&self, endpoint: &EndpointInfo) -> ReplaySource {
        ReplaySource {
            run: self.dir.display().to_string(),
            endpoint: endpoint.spec.name.clone(),
            repeats: self.manifest.repeats_of(&endpoint.spec.name),
            catalogue_hash: self.manifest.catalogue.hash.clone(),
        }
    }

    /// Refuse (naming both catalogue hashes, or seeds, or generator versions) when `other`'s
    /// items are not this run's, unless `allow`; then the mismatch comes back as a note.
    pub fn same_items(&self, other: &SavedRun, allow: bool) -> anyhow::Result<Option<String>> {
        let (a, b) = (self.dir.display(), other.dir.display());
        let Some(why) = catalogue_mismatch(
            (&a.to_string(), &self.manifest.catalogue),
            (&b.to_string(), &other.manifest.catalogue),
        ) else {
            return Ok(None);
        };
        if !allow {
            bail!("{why}; compare the prompts both runs have with --allow-catalogue-change");
        }
        Ok(Some(why))
    }
}

impl SavedRun {
    /// Refuse (naming both catalogue hashes, or seeds, or generator versions) when `catalogue`,
    /// the one the new run scores with, is not the one this run was made with (it changed
    /// since), unless `allow`; then the change comes back as a note.
    pub fn same_catalogue(
        &self,
        catalogue: &Catalogue,
        allow: bool,
    ) -> anyhow::Result<Option<String>> {
        let then = format!("the saved run {}", self.dir.display());
        let now = format!("the catalogue {}", catalogue.dir.display());
        let Some(why) = catalogue_mismatch(
            (&then, &self.manifest.catalogue),
            (&now, &CatalogueInfo::of(catalogue)),
        ) else {
            return Ok(None);
        };
        if !allow {
            bail!("{why}; compare the prompts both have with --allow-catalogue-change");
        }
        Ok(Some(format!(
            "--allow-catalogue-change: {why}; only the prompts both have are compared"
        )))
    }
}

/// `endpoint` (as its first run recorded it) played again as `name` from `sources`, pooled in
/// order: no key, nothing sent.
pub(super) fn replayed(
    name: &str,
    endpoint: &EndpointInfo,
    from: Vec<ReplaySource>,
) -> PlannedEndpoint {
    let mut spec = endpoint.spec.clone();
    spec.name = name.to_string();
    PlannedEndpoint {
        spec,
        key: None,
        replayed: Some(Replayed {
            models: endpoint.models.clone(),
            from,
        }),
    }
}

/// The ids of `first` that every list of `others` also has, in `first`'s order.
pub(super) fn common_prompts(first: &[String], others: &[&[String]]) -> Vec<String> {
    first
        .iter()
        .filter(|id| others.iter().all(|o| o.contains(id)))
        .cloned()
        .collect()
}

/// On `--resume`, the endpoints the run replays stay replayed (nothing is sent to them).
pub(super) fn keep_replayed(endpoints: &mut [PlannedEndpoint], previous: &Manifest) {
    for e in endpoints {
        if let Some(saved) = previous
            .endpoints
            .iter()
            .find(|s| s.spec.name == e.spec.name && s.is_replayed())
        {
            e.replayed = Some(Replayed {
                models: saved.models.clone(),
                from: saved.replayed_from.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prompts_keep_the_first_order_and_drop_what_one_lacks() {
        let a: Vec<String> = ["x", "y", "z"].map(String::from).to_vec();
        let b: Vec<String> = ["z", "x"].map(String::from).to_vec();
        let c: Vec<String> = ["x", "z", "w"].map(String::from).to_vec();
        assert_eq!(common_prompts(&a, &[&b, &c]), ["x", "z"]);
        assert_eq!(common_prompts(&a, &[]), a);
    }
}
