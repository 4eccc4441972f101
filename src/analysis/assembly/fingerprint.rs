//! Which deployment fingerprints (served model, system_fingerprint, max_model_len, server) of each
//! compared endpoint differ from the reference's.

use super::results::Results;
use crate::analysis::answers::figures::EndpointSummary;

/// One fingerprint field that differs between the reference and another endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FingerprintDifference {
    /// The field, as the report's endpoint table names it ("served model", "system_fingerprint", …).
    pub field: &'static str,
    pub reference: String,
    /// The reference's value; empty when the endpoint did not report it.
    pub reference_value: String,
    pub other: String,
    /// The other endpoint's value; empty when the endpoint did not report it.
    pub other_value: String,
}

/// Every fingerprint field of every compared endpoint that differs from the reference (the first
/// endpoint), in endpoint order, then field order.
pub fn differences(results: &Results) -> Vec<FingerprintDifference> {
    let Some((reference, others)) = results.endpoints.split_first() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for o in others {
        for ((field, a), (_, b)) in fields(reference).into_iter().zip(fields(o)) {
            if a != b {
                found.push(FingerprintDifference {
                    field,
                    reference: reference.name.clone(),
                    reference_value: a,
                    other: o.name.clone(),
                    other_value: b,
                });
            }
        }
    }
    found
}

/// The compared fields of one endpoint, each as one string (lists joined with ", ").
fn fields(e: &EndpointSummary) -> [(&'static str, String); 4] {
    [
        ("served model", e.served_models.join(", ")),
        ("system_fingerprint", e.system_fingerprints.join(", ")),
        (
            "max_model_len",
            e.max_model_len.map(|n| n.to_string()).unwrap_or_default(),
        ),
        ("server", e.servers.join(", ")),
    ]
}
