//! `coherence contract`: does an OpenAI-compatible server keep the API's promises? Each probe
//! sends real requests and reads pass, fail or unsupported, with the evidence quoted.

mod ask;
mod probes;
mod sse;

use std::time::Duration;

use serde::Serialize;

use crate::endpoint::{Client, ClientOptions};
use crate::run::PlannedEndpoint;

/// What one probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    /// The server broke the promise (or failed a valid request with a server error).
    Fail,
    /// The server refused the parameter with a client error, or the reply cannot test it.
    Unsupported,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Unsupported => "unsupported",
        }
    }
}

/// One probe's outcome on one endpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeResult {
    pub probe: &'static str,
    pub status: Status,
    pub evidence: String,
}

impl ProbeResult {
    fn new(probe: &'static str, status: Status, evidence: impl Into<String>) -> Self {
        ProbeResult {
            probe,
            status,
            evidence: evidence.into(),
        }
    }
}

/// Every probe of one endpoint, or why none could run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EndpointContract {
    pub name: String,
    pub base_url: String,
    pub model: Option<String>,
    /// Why the endpoint could not be probed (no model listed, not reachable, no probe request
    /// answered: every one refused, authentication included); no probes then.
    pub error: Option<String>,
    pub probes: Vec<ProbeResult>,
}

impl EndpointContract {
    pub fn failed(&self) -> bool {
        self.probes.iter().any(|p| p.status == Status::Fail)
    }
}

/// The probes, in the order they run and are listed.
pub const PROBES: &[(&str, &str)] = probes::PROBES;

/// Probe one endpoint: resolve its model (`GET /models` unless named), then run every probe,
/// all within `deadline`: an endpoint whose replies never end (or come too slowly) is reported
/// as not probed once it is past, whatever the per-request timeout would allow.
pub async fn check(
    e: &PlannedEndpoint,
    opts: &ClientOptions,
    deadline: Duration,
) -> EndpointContract {
    let out = EndpointContract {
        name: e.spec.name.clone(),
        base_url: e.spec.base_url.clone(),
        model: e.spec.model.clone(),
        error: None,
        probes: Vec::new(),
    };
    match tokio::time::timeout(deadline, probe_all(e, opts, out.clone())).await {
        Ok(done) => done,
        Err(_) => EndpointContract {
            error: Some(format!(
                "the probes did not end within the deadline of {} (replies that never end, or \
                 a server too slow for it: give a longer deadline)",
                humantime::format_duration(deadline)
            )),
            ..out
        },
    }
}

/// [`check`] without its deadline, filling `out`.
async fn probe_all(
    e: &PlannedEndpoint,
    opts: &ClientOptions,
    mut out: EndpointContract,
) -> EndpointContract {
    let client = match Client::new(&e.spec.base_url, e.key.clone(), opts.clone()) {
        Ok(c) => c,
        Err(err) => {
            out.error = Some(format!("cannot build a client: {err}"));
            return out;
        }
    };
    let model = match &out.model {
        Some(m) => m.clone(),
        None => match client.models().await {
            Ok(info) => match info.first_model(&out.name) {
                Ok(m) => m,
                Err(why) => {
                    out.error = Some(why);
                    return out;
                }
            },
            Err(f) => {
                out.error = Some(format!("GET /models failed: {f}"));
                return out;
            }
        },
    };
    out.model = Some(model.clone());
    let ask = ask::Asker::new(&client, &model);
    let probes = probes::run(&ask).await;
    match ask.unanswered() {
        Some(why) => out.error = Some(why),
        None => out.probes = probes,
    }
    out
}
