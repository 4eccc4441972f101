//! `coherence smoke`: is the endpoint up and exact? `GET /models` (model ids, `max_model_len`)
//! and a chat that must come back as exactly `COHERENCE SMOKE OK` (trimmed).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::prompts::{chat_body, user};
use super::sample::{measure, Sample, SampleOutcome};
use super::stats::round2;
use crate::endpoint::{Client, ClientOptions, ModelsInfo};
use crate::run::PlannedEndpoint;

pub const PHRASE: &str = "COHERENCE SMOKE OK";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SmokeVerdict {
    Pass,
    /// The endpoint answered, but not with the phrase (or with nothing).
    WrongReply,
    /// The endpoint could not be listed or asked.
    Unreachable,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmokeResult {
    pub name: String,
    pub base_url: String,
    pub models: Vec<String>,
    pub max_model_len: Option<u64>,
    pub model: Option<String>,
    pub reply: Option<String>,
    pub latency_ms: Option<f64>,
    pub completion_tokens: Option<u64>,
    pub verdict: SmokeVerdict,
    /// Why it did not pass.
    pub reason: Option<String>,
    pub notes: Vec<String>,
}

pub async fn smoke(e: &PlannedEndpoint, opts: &ClientOptions, max_tokens: u32) -> SmokeResult {
    let mut out = SmokeResult {
        name: e.spec.name.clone(),
        base_url: e.spec.base_url.clone(),
        models: Vec::new(),
        max_model_len: None,
        model: e.spec.model.clone(),
        reply: None,
        latency_ms: None,
        completion_tokens: None,
        verdict: SmokeVerdict::Unreachable,
        reason: None,
        notes: Vec::new(),
    };
    let client = match Client::new(&e.spec.base_url, e.key.clone(), opts.clone()) {
        Ok(c) => c,
        Err(err) => {
            out.reason = Some(format!("cannot build a client: {err}"));
            return out;
        }
    };
    let info = match client.models().await {
        Ok(info) => info,
        Err(f) => {
            out.reason = Some(format!("GET /models failed: {f}"));
            return out;
        }
    };
    let model = match chosen_model(&mut out, &info) {
        Ok(m) => m,
        Err(reason) => {
            out.reason = Some(reason);
            return out;
        }
    };
    out.model = Some(model.clone());
    let body = chat_body(
        &model,
        user(&format!("Reply exactly: {PHRASE}")),
        max_tokens,
        0.0,
        &Default::default(),
    );
    let s = measure(&client, &body, Instant::now()).await;
    out.latency_ms = Some(round2(s.latency_ms));
    out.completion_tokens = s.completion_tokens;
    out.reply = s.answer.clone();
    (out.verdict, out.reason) = verdict_of(&s);
    out
}

/// What `GET /models` said, recorded; and the model to ask: the one named (noted when the list
/// does not hold it), else the first listed; Err says why there is none.
fn chosen_model(out: &mut SmokeResult, info: &ModelsInfo) -> Result<String, String> {
    out.models = info.ids.clone();
    out.max_model_len = info.max_model_len;
    match &out.model {
        Some(m) => {
            if !out.models.contains(m) {
                out.notes
                    .push(format!("GET /models does not list `{m}` (sent anyway)"));
            }
            Ok(m.clone())
        }
        None => info.first_model(&out.name),
    }
}

/// Pass when the reply is exactly the phrase; why not otherwise.
fn verdict_of(s: &Sample) -> (SmokeVerdict, Option<String>) {
    match s.outcome {
        SampleOutcome::Error => (SmokeVerdict::Unreachable, s.problem_line()),
        SampleOutcome::SoftEmpty => (
            SmokeVerdict::WrongReply,
            Some(format!(
                "empty reply: {} (raise --max-tokens if the endpoint reasons first)",
                s.problem_line().unwrap_or_default()
            )),
        ),
        SampleOutcome::Ok if s.answer.as_deref().map(str::trim) == Some(PHRASE) => {
            (SmokeVerdict::Pass, None)
        }
        SampleOutcome::Ok => (
            SmokeVerdict::WrongReply,
            Some(format!(
                "expected exactly `{PHRASE}`, got `{}`",
                crate::text::clip(s.answer.as_deref().unwrap_or(""), 120)
            )),
        ),
    }
}
