//! One load probe as the analysis sees it, and what the under-load, cache-state and samples
//! readings share: probes grouped by condition, their answer histogram and unique completions.

use std::collections::BTreeMap;

use crate::analysis::answers::determinism::FAILED_KEY;
use crate::analysis::answers::quote::quote;
use crate::probes::journal::ProbeCondition;

/// One probe as the analysis sees it.
#[derive(Debug, Clone)]
pub struct Probe {
    pub repeat: u32,
    /// The answer as scored; None when the probe failed.
    pub key: Option<String>,
    pub completion: String,
    pub tokens: Option<Vec<String>>,
    pub fillers_at_send: Option<u32>,
}

impl Probe {
    /// The histogram key: the answer, or `(fail)`.
    pub fn bucket(&self) -> String {
        self.key.clone().unwrap_or_else(|| FAILED_KEY.into())
    }
}

/// A prompt's probes on one endpoint, by condition, each list in repeat order.
pub type ByCondition = BTreeMap<ProbeCondition, Vec<Probe>>;

/// How often each answer came back.
pub fn histogram(probes: &[Probe]) -> BTreeMap<String, u32> {
    let mut h = BTreeMap::new();
    for p in probes {
        *h.entry(quote(p.bucket())).or_default() += 1;
    }
    h
}

/// Distinct completions among usable probes.
pub fn unique_completions(probes: &[Probe]) -> u32 {
    let texts: std::collections::BTreeSet<&str> = probes
        .iter()
        .filter(|p| p.key.is_some())
        .map(|p| p.completion.as_str())
        .collect();
    texts.len() as u32
}
