//! `manifest.json`: what a run is (endpoints, catalogue, sampling, scope), never a secret.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalogue::generator::{FamilyLevel, Levels, Version, GENERATOR_VERSION};
use crate::catalogue::long::{LongChoice, LONG_VERSION};
use crate::catalogue::{Catalogue, Suite, SuiteChoice};
use crate::endpoint::{is_endpoint_name, EndpointSpec, ModelsInfo};
use crate::gate::Gate;
use crate::run_folder::{compare, Checked, RunHeader};

/// The most repeats of each prompt a run may have (`--repeats`, a manifest's `repeats`): far
/// beyond any useful determinism run, small enough that a run's slots always fit in memory.
pub const MAX_REPEATS: u32 = 10_000;

/// How `--until-decided` sends the generated items: `round_items` more after each undecided
/// look, never more than `max_items` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoppingRule {
    pub round_items: usize,
    pub max_items: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The tool, times, status and invocations every manifest opens with.
    #[serde(flatten)]
    pub header: RunHeader,
    pub catalogue: CatalogueInfo,
    /// The first endpoint is the reference.
    pub endpoints: Vec<EndpointInfo>,
    pub sampling: Sampling,
    /// Every prompt id in the run's scope (what the report covers).
    pub prompts: Vec<String>,
    pub repeats: u32,
    /// The A-vs-A control: the first this many prompts of the scope are answered a second time
    /// by the reference (repeat 1), interleaved with the pair's requests, so the identity axis
    /// is judged against the reference's own nondeterminism (`analysis/identity/numerics.rs`). 0: none
    /// (runs made before it, or `--control 0`; with `--repeats 2` or more every prompt has one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub control: usize,
    /// `--control auto`: the control grows, look by look, until identity is decided or it holds
    /// this many prompts (never more than the run's); absent: a fixed control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_max: Option<usize>,
    /// `--control auto`: the control's size at each look, in order (a resumed run adds its
    /// own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub control_looks: Vec<usize>,
    /// The `--fail-on` gate in force (written as its expression).
    #[serde(default)]
    pub fail_on: Gate,
    /// The equivalence margin of the quality verdict, in accuracy points (`--margin`).
    #[serde(default)]
    pub margin: Option<f64>,
    /// The identity test's level when the run chose its own (`watch --alpha`); absent: the
    /// default, `analysis::identity::numerics::ALPHA`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_alpha: Option<f64>,
    /// `--until-decided`: the generated items are sent in rounds until every pair's sequential
    /// verdict is decided or the cap is reached (absent: a fixed set of items).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_decided: Option<StoppingRule>,
    /// `--until-decided`: how many generated items had been sent at each look, in order (a
    /// resumed run adds its own); the report shows each look's interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<usize>,
    /// `--difficulty auto`: each generated family's calibration on the reference (level,
    /// status, requests, budget), written when calibration ends (results.json `difficulty`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub difficulty: Vec<FamilyLevel>,
    /// The target accuracy calibration aimed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_accuracy: Option<f64>,
    /// What the making of the run noted that its results must say, e.g. that a diff across
    /// catalogues compared only the items both runs have (results.json `warnings`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogueInfo {
    pub dir: String,
    pub hash: String,
    /// The suites sent (`core`, `generated`); absent in older runs, which sent the core suite.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suites: Vec<Suite>,
    /// How the generated items were made, so scoring regenerates the same ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<GeneratedInfo>,
    /// How the long items were made (lengths, depths, items per cell, context), so scoring
    /// regenerates the same ones; they use the run's seed (`generated.seed`, else `long_seed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long: Option<LongInfo>,
}

/// The long suite of a run: its shape, seed and version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LongInfo {
    #[serde(flatten)]
    pub choice: LongChoice,
    pub seed: u64,
    pub long_version: u32,
}

/// The generated suite of a run: its seed, item count and generator version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedInfo {
    pub seed: u64,
    pub items: usize,
    pub generator_version: u32,
    /// Each family's level (generator version 3 on) and grown budgets: what its items were made
    /// at, so a re-score, a resume, `--baseline`, `diff` and `watch` make the same items.
    #[serde(flatten)]
    pub levels: Levels,
}

impl CatalogueInfo {
    /// What a run records of the catalogue it sends.
    pub fn of(catalogue: &Catalogue) -> Self {
        let choice = &catalogue.suites;
        CatalogueInfo {
            dir: catalogue.dir.display().to_string(),
            hash: catalogue.hash.clone(),
            // The core suite alone is what a run without this field sent.
            suites: if choice.suites() == [Suite::Core] {
                Vec::new()
            } else {
                choice.suites().to_vec()
            },
            generated: choice.includes(Suite::Generated).then(|| GeneratedInfo {
                seed: choice.seed,
                items: choice.items,
                generator_version: choice.generator_version(),
                levels: choice.levels.clone(),
            }),
            long: choice.includes(Suite::Long).then(|| LongInfo {
                choice: choice.long.clone(),
                seed: choice.seed,
                long_version: LONG_VERSION,
            }),
        }
    }

    /// The suites to regenerate the run's catalogue with, its generated items by the generator
    /// version that made them. A run from a version this coherence cannot make is refused.
    pub fn suite_choice(&self) -> Result<SuiteChoice, String> {
        let default = SuiteChoice::default();
        let (seed, items, generator, levels) = match &self.generated {
            Some(g) => match Version::from_number(g.generator_version) {
                Some(version) => (g.seed, g.items, version, g.levels.clone()),
                None => return Err(format!(
                    "the run's generated items come from generator version {}; this coherence has version {GENERATOR_VERSION} and cannot make them again (score the run with the coherence that made it)",
                    g.generator_version
                )),
            },
            None if self.suites.contains(&Suite::Generated) => {
                return Err("`suites` names `generated` but `generated` (seed, items, generator_version) is missing".into())
            }
            None => (default.seed, default.items, default.generator, Levels::default()),
        };
        let mut choice = SuiteChoice::new(self.suites.clone(), seed, items)?;
        choice.generator = generator;
        choice.levels = levels;
        match &self.long {
            Some(l) if l.long_version != LONG_VERSION => {
                return Err(format!(
                    "the run's long items come from long version {}; this coherence has version {LONG_VERSION} and cannot make them again",
                    l.long_version
                ))
            }
            Some(l) => {
                l.choice.check()?;
                choice.long = l.choice.clone();
                choice.seed = l.seed;
            }
            None if self.suites.contains(&Suite::Long) => {
                return Err("`suites` names `long` but `long` (lengths, depths, per_cell, context) is missing".into())
            }
            None => {}
        }
        Ok(choice)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointInfo {
    #[serde(flatten)]
    pub spec: EndpointSpec,
    /// What `GET /models` reported when the run started.
    #[serde(default)]
    pub models: Option<ModelsInfo>,
    /// Where a replayed endpoint's answers come from (`coherence diff`, `compare --baseline`):
    /// saved runs, in order, never sent again. Empty for an endpoint this run sends to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replayed_from: Vec<ReplaySource>,
}

/// One saved run whose answers a replayed endpoint plays: its repeats are numbered after those
/// of the sources before it, so several runs of one deployment pool into one endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySource {
    /// The saved run folder, as it was named.
    pub run: String,
    /// The endpoint's name in that run.
    pub endpoint: String,
    /// Repeats taken from that run.
    pub repeats: u32,
    /// That run's catalogue hash.
    pub catalogue_hash: String,
}

impl EndpointInfo {
    /// Whether the endpoint's answers come from saved runs (nothing is sent to it).
    pub fn is_replayed(&self) -> bool {
        !self.replayed_from.is_empty()
    }

    /// The repeats this endpoint has: its sources' together when replayed, else `run_repeats`.
    pub fn repeats(&self, run_repeats: u32) -> u32 {
        if self.is_replayed() {
            self.replayed_from
                .iter()
                .fold(0u32, |n, s| n.saturating_add(s.repeats))
        } else {
            run_repeats
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f64,
    pub stream: bool,
    /// The budget of a prompt that sets none of its own.
    #[serde(alias = "max_tokens")]
    pub default_max_tokens: u32,
    /// `--max-tokens` as the run was started: it overrides every prompt's own budget, and a
    /// plain `--resume` keeps it.
    #[serde(default)]
    pub max_tokens_override: Option<u32>,
    /// Extra fields from `--param`, sent identically to every endpoint.
    pub params: Map<String, Value>,
    /// Whether decode logprobs are requested with every answer (on by default where a probe
    /// shows they change nothing; `--logprobs` asks for them, `--no-logprobs` turns them off).
    #[serde(default)]
    pub logprobs: bool,
    /// Whether the reference's completions are teacher-forced on every endpoint (`--logprobs`).
    /// Absent in runs made before decode logprobs came by default: then it follows `logprobs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teacher_forcing: Option<bool>,
    /// How `logprobs` was chosen (the probe's finding, or the flag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs_note: Option<String>,
}

impl Sampling {
    /// temperature 0, no streaming, the given default budget, nothing extra.
    pub fn deterministic(default_max_tokens: u32) -> Self {
        Sampling {
            temperature: 0.0,
            stream: false,
            default_max_tokens,
            max_tokens_override: None,
            params: Map::new(),
            logprobs: false,
            teacher_forcing: None,
            logprobs_note: None,
        }
    }

    /// Whether the run teacher-forces the reference's completions (`--logprobs`).
    pub fn teacher_forces(&self) -> bool {
        self.teacher_forcing.unwrap_or(self.logprobs)
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The first value that occurs twice.
fn first_repeated<'a>(values: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = BTreeSet::new();
    values.into_iter().find(|v| !seen.insert(*v))
}

/// An `http://` or `https://` URL a client can be made for.
pub(crate) fn check_base_url(url: &str) -> Result<(), String> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(()),
        Ok(_) => Err(format!("`{url}` is not an http:// or https:// URL")),
        Err(e) => Err(format!("`{url}` is not a URL: {e}")),
    }
}

/// Why `hash` is not a catalogue's sha256 as a run records it (64 lower-case hex digits, not
/// all zeros), if it is not.
fn check_catalogue_hash(hash: &str) -> Result<(), String> {
    let hex = hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !hex {
        return Err(format!(
            "`{}` is not a sha256 (64 lower-case hex digits)",
            crate::text::clip(&hash.escape_debug().to_string(), 80)
        ));
    }
    if hash.bytes().all(|b| b == b'0') {
        return Err("is all zeros, not the hash of a catalogue".into());
    }
    Ok(())
}

impl Checked for Manifest {
    /// What serde cannot check: at least one endpoint with an http(s) URL, unique names, at
    /// least one prompt, each once, a repeat count within [`MAX_REPEATS`], a margin between 0
    /// and 100 points, a suite choice this coherence can make.
    fn check(&self) -> Result<(), String> {
        if self.endpoints.is_empty() {
            return Err("`endpoints` is empty; a run has at least one endpoint".into());
        }
        if let Some(name) = first_repeated(self.endpoints.iter().map(|e| e.spec.name.as_str())) {
            return Err(format!("endpoint name `{name}` appears twice"));
        }
        for e in &self.endpoints {
            if !is_endpoint_name(&e.spec.name) {
                return Err(format!(
                    "endpoint `name` `{}` is not a name a run gives (letters, digits, `-`, `_` and `.`, not `.` or `..` alone)",
                    e.spec.name.escape_debug()
                ));
            }
            check_base_url(&e.spec.base_url)
                .map_err(|why| format!("endpoint `{}`: `base_url` {why}", e.spec.name))?;
        }
        let sampling = &self.sampling;
        if sampling.default_max_tokens == 0 || sampling.max_tokens_override == Some(0) {
            return Err(
                "`sampling.default_max_tokens` or `sampling.max_tokens_override` is 0; a budget is at least 1 token"
                    .into(),
            );
        }
        check_catalogue_hash(&self.catalogue.hash)
            .map_err(|why| format!("`catalogue.hash` {why}"))?;
        for e in &self.endpoints {
            for source in &e.replayed_from {
                check_catalogue_hash(&source.catalogue_hash).map_err(|why| {
                    format!(
                        "endpoint `{}`: `replayed_from[].catalogue_hash` {why}",
                        e.spec.name
                    )
                })?;
            }
        }
        if self.prompts.is_empty() {
            return Err("`prompts` is empty; a run covers at least one prompt".into());
        }
        if let Some(id) = first_repeated(self.prompts.iter().map(String::as_str)) {
            return Err(format!("prompt `{id}` appears twice in `prompts`"));
        }
        if self.repeats == 0 {
            return Err("`repeats` is 0; a run has at least one repeat".into());
        }
        if self.repeats > MAX_REPEATS {
            return Err(format!(
                "`repeats` is {}; a run has at most {MAX_REPEATS} repeats",
                self.repeats
            ));
        }
        for e in &self.endpoints {
            let n = e.repeats(self.repeats);
            if n == 0 || n > MAX_REPEATS {
                return Err(format!(
                    "endpoint `{}` has {n} repeats from `replayed_from`; give between 1 and {MAX_REPEATS}",
                    e.spec.name
                ));
            }
        }
        if let Some(m) = self.margin.filter(|m| !(0.0..=100.0).contains(m)) {
            return Err(format!(
                "`margin` is {m}; give accuracy points between 0 and 100"
            ));
        }
        if self.control_max == Some(0) {
            return Err("`control_max` is 0; a growing control holds at least 1 prompt".into());
        }
        if let Some(a) = self.identity_alpha.filter(|a| !(*a > 0.0 && *a < 1.0)) {
            return Err(format!(
                "`identity_alpha` is {a}; give a level between 0 and 1"
            ));
        }
        self.catalogue
            .suite_choice()
            .map_err(|e| format!("catalogue: {e}"))?;
        Ok(())
    }
}

impl Manifest {
    /// The manifest of a new run with `header` and `sampling`, before its plan fills it in.
    pub fn new(header: RunHeader, sampling: Sampling) -> Self {
        Manifest {
            header,
            catalogue: CatalogueInfo::default(),
            endpoints: Vec::new(),
            sampling,
            prompts: Vec::new(),
            repeats: 1,
            control: 0,
            control_max: None,
            control_looks: Vec::new(),
            fail_on: Gate::default(),
            margin: None,
            identity_alpha: None,
            until_decided: None,
            looks: Vec::new(),
            difficulty: Vec::new(),
            target_accuracy: None,
            notes: Vec::new(),
        }
    }

    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        compare::folder(dir).read_checked_manifest()
    }

    /// Write atomically (temp file + rename) so a kill never leaves half a manifest.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        compare::folder(dir).write_manifest(self)
    }

    pub fn endpoint_names(&self) -> Vec<String> {
        self.endpoints.iter().map(|e| e.spec.name.clone()).collect()
    }

    /// The repeats endpoint `name` has: a replayed endpoint's own (several saved runs pool
    /// theirs), else the run's.
    pub fn repeats_of(&self, name: &str) -> u32 {
        self.endpoints
            .iter()
            .find(|e| e.spec.name == name)
            .map_or(self.repeats, |e| e.repeats(self.repeats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_committed_compare_manifest_reads_and_writes_its_header_back_as_it_was() {
        for run in ["example-smollm2-kv-q4", "example-smollm2-kv-demo-catalogue"] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("runs").join(run);
            let m = Manifest::read(&dir).unwrap();
            assert_eq!(m.header.status, crate::run_folder::RunStatus::Finished);
            assert_eq!(m.header.invocations[0].at, m.header.created_at, "{run}");
            let old: Value =
                serde_json::from_slice(&std::fs::read(dir.join(compare::MANIFEST)).unwrap())
                    .unwrap();
            let header = |v: &Value| RunHeader::FIELDS.map(|k| v[k].clone());
            assert_eq!(
                header(&serde_json::to_value(&m).unwrap()),
                header(&old),
                "{run}"
            );
        }
    }

    #[test]
    fn a_compare_manifest_opens_with_the_header_then_its_own_fields() {
        let m = Manifest::new(
            RunHeader::begin(None, vec!["c".into()]),
            Sampling::deterministic(8),
        );
        let written = serde_json::to_value(&m).unwrap();
        let keys: Vec<&str> = written
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys[..7],
            [
                "tool",
                "created_at",
                "updated_at",
                "status",
                "invocations",
                "catalogue",
                "endpoints"
            ]
        );
        assert_eq!(written["status"], "running");
        assert_eq!(serde_json::from_value::<Manifest>(written).unwrap(), m);
    }

    fn made_by(generator_version: u32) -> CatalogueInfo {
        CatalogueInfo {
            suites: vec![Suite::Generated],
            generated: Some(GeneratedInfo {
                seed: 2,
                items: 30,
                generator_version,
                levels: Default::default(),
            }),
            ..CatalogueInfo::default()
        }
    }

    /// Runs of version 1 (the committed examples) re-score with version 1's items; new runs
    /// record the current version; a version this coherence cannot make is refused.
    #[test]
    fn a_run_regenerates_its_items_with_its_own_generator_version() {
        assert_eq!(made_by(1).suite_choice().unwrap().generator, Version::V1);
        assert_eq!(made_by(2).suite_choice().unwrap().generator, Version::V2);
        let refused = made_by(999).suite_choice().unwrap_err();
        assert!(refused.contains("generator version 999"), "{refused}");
        let built_in = crate::catalogue::embedded::load_built_in().unwrap();
        let rescored = built_in.with_suites(made_by(1).suite_choice().unwrap());
        let items = crate::catalogue::generator::generate_by(Version::V1, 2, 30);
        let questions = |ps: &[crate::catalogue::Prompt]| -> Vec<String> {
            ps.iter().map(|p| p.question().to_string()).collect()
        };
        assert_eq!(questions(&rescored.prompts), questions(&items));
        let recorded = CatalogueInfo::of(&rescored).generated.unwrap();
        assert_eq!(recorded.generator_version, 1);
    }
}
