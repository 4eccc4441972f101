//! The one endpoint a bench or soak measures: its model resolved through `GET /models` (shared
//! with `compare`), and what the run records about it (never the key).

use serde::{Deserialize, Serialize};

use super::error::BenchError;
use crate::endpoint::ClientOptions;
use crate::run::{resolve_targets, PlannedEndpoint, RunError, Target};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointSummary {
    pub name: String,
    pub base_url: String,
    pub model: String,
    /// From `GET /models`, when the server reports it.
    pub max_model_len: Option<u64>,
    /// The `Server` header of `GET /models`.
    pub server: Option<String>,
}

/// Resolve the model (from `--model` or `GET /models`) and describe the endpoint.
pub async fn resolve(
    endpoint: &PlannedEndpoint,
    options: &ClientOptions,
) -> Result<(Target, EndpointSummary), BenchError> {
    let (target, info) = resolve_targets(std::slice::from_ref(endpoint), options)
        .await
        .map_err(|e| match e {
            RunError::Config(e) | RunError::Folder(e) => BenchError::Setup(e),
            RunError::Endpoint(e) | RunError::Send(e) => BenchError::Endpoint(e),
        })?
        .remove(0);
    let summary = EndpointSummary {
        name: target.name.clone(),
        base_url: endpoint.spec.base_url.clone(),
        model: target.model.clone(),
        max_model_len: info.as_ref().and_then(|i| i.max_model_len),
        server: info.and_then(|i| i.server),
    };
    Ok((target, summary))
}
