//! `manifest.json`: what a run is (endpoints, catalogue, sampling, scope), never a secret.

use std::path::Path;

use anyhow::Context;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::folder::write_atomic;
use crate::endpoint::{EndpointSpec, ModelsInfo};

pub const MANIFEST_FILE: &str = "manifest.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// `coherence <version>`.
    pub tool: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// `running`, `complete`, `incomplete` or `interrupted`.
    pub status: String,
    pub catalogue: CatalogueInfo,
    /// The first endpoint is the reference.
    pub endpoints: Vec<EndpointInfo>,
    pub sampling: Sampling,
    /// Every prompt id in the run's scope (what the report covers).
    pub prompts: Vec<String>,
    pub repeats: u32,
    /// The `--fail-on` gate in force.
    #[serde(default)]
    pub fail_on: String,
    /// Each invocation that wrote to this folder, with its arguments (which never hold a key).
    pub invocations: Vec<Invocation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogueInfo {
    pub dir: String,
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointInfo {
    #[serde(flatten)]
    pub spec: EndpointSpec,
    /// What `GET /models` reported when the run started.
    #[serde(default)]
    pub models: Option<ModelsInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f64,
    pub stream: bool,
    /// The default budget; a prompt's own `max_tokens` applies unless `--max-tokens` was given.
    pub max_tokens: u32,
    /// Extra fields from `--param`, sent identically to every endpoint.
    pub params: Map<String, Value>,
    /// Whether token logprobs are requested (`--logprobs`).
    #[serde(default)]
    pub logprobs: bool,
}

impl Sampling {
    /// temperature 0, no streaming, the given default budget, nothing extra.
    pub fn deterministic(max_tokens: u32) -> Self {
        Sampling {
            temperature: 0.0,
            stream: false,
            max_tokens,
            params: Map::new(),
            logprobs: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    pub at: DateTime<Utc>,
    pub args: Vec<String>,
}

impl Manifest {
    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{} is not a run folder (cannot read {})",
                dir.display(),
                path.display()
            )
        })?;
        serde_json::from_str(&text).with_context(|| format!("{}: invalid manifest", path.display()))
    }

    /// Write atomically (temp file + rename) so a kill never leaves half a manifest.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)? + "\n";
        write_atomic(&dir.join(MANIFEST_FILE), text.as_bytes())
    }

    pub fn endpoint_names(&self) -> Vec<String> {
        self.endpoints.iter().map(|e| e.spec.name.clone()).collect()
    }
}
