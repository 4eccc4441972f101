//! Speculative-decoding acceptance from a Prometheus `/metrics` page (vLLM's
//! `vllm:spec_decode_num_accepted_tokens_total` and `vllm:spec_decode_num_draft_tokens_total`):
//! the counters are read before and after the measured phases, and the rate is the ratio of the
//! differences, so earlier traffic on the server does not count.

use serde::{Deserialize, Serialize};

use crate::endpoint::{ApiKey, Client, ClientOptions};

const ACCEPTED: &str = "spec_decode_num_accepted_tokens";
const DRAFTED: &str = "spec_decode_num_draft_tokens";
/// Number of draft proposals (steps), for the mean acceptance length.
const DRAFTS: &str = "spec_decode_num_drafts";

/// Counter totals summed over every label set (engines, models).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SpecCounters {
    pub accepted: f64,
    pub drafted: f64,
    pub drafts: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecStatus {
    /// Both readings had the counters and tokens were drafted in between.
    Measured,
    /// No `/metrics`, or it has no speculative-decoding counters.
    NotExposed,
    /// The counters exist but did not move: speculative decoding is off.
    NoDrafts,
    /// A counter went down between the readings (the server restarted?).
    Reset,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecDecode {
    pub status: SpecStatus,
    pub url: String,
    /// accepted / drafted over the measured window (0..=1).
    pub acceptance: Option<f64>,
    pub accepted: Option<f64>,
    pub drafted: Option<f64>,
    /// 1 + accepted tokens per draft step, when the server counts steps.
    pub mean_acceptance_length: Option<f64>,
    pub note: Option<String>,
}

/// Where `/metrics` lives: at the server root, i.e. the base URL without a trailing `/v1`.
pub fn default_metrics_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    format!("{root}/metrics")
}

/// Reads the spec-decode counters from one metrics URL.
pub struct MetricsProbe {
    client: Client,
    path: String,
    pub url: String,
}

impl MetricsProbe {
    pub fn new(url: &str, key: Option<ApiKey>, opts: &ClientOptions) -> anyhow::Result<Self> {
        let (base, path) = url.rsplit_once('/').unwrap_or((url, ""));
        let mut opts = opts.clone();
        // A missing /metrics is common; do not spend minutes retrying it.
        opts.retry.retries = opts.retry.retries.min(1);
        Ok(MetricsProbe {
            client: Client::new(base, key, opts)?,
            path: path.to_string(),
            url: url.to_string(),
        })
    }

    /// The counters now, or why they cannot be read.
    pub async fn read(&self) -> Result<SpecCounters, String> {
        let ex = self.client.get(&self.path).await;
        if let Some(f) = ex.failure {
            return Err(f.to_string());
        }
        parse_counters(ex.body.as_deref().unwrap_or(""))
            .ok_or_else(|| "no spec_decode counters on the page".to_string())
    }
}

/// Sum the speculative-decoding counters of a Prometheus text page. None when the accepted or
/// drafted counter is absent.
pub fn parse_counters(page: &str) -> Option<SpecCounters> {
    let (mut accepted, mut drafted, mut drafts) = (None, None, None);
    for line in page.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = sample(line) else {
            continue;
        };
        let family = name.strip_suffix("_total").unwrap_or(name);
        let slot = if family.ends_with(ACCEPTED) {
            &mut accepted
        } else if family.ends_with(DRAFTED) {
            &mut drafted
        } else if family.ends_with(DRAFTS) {
            &mut drafts
        } else {
            continue;
        };
        *slot = Some(slot.unwrap_or(0.0) + value);
    }
    Some(SpecCounters {
        accepted: accepted?,
        drafted: drafted?,
        drafts,
    })
}

/// `name{labels} value [timestamp]` to (name, value).
fn sample(line: &str) -> Option<(&str, f64)> {
    let (name, rest) = match line.find('{') {
        Some(open) => {
            let close = line.rfind('}')?;
            (&line[..open], &line[close + 1..])
        }
        None => line.split_once(char::is_whitespace)?,
    };
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some((name.trim(), value))
}

/// The acceptance over the window between two readings.
pub fn acceptance(
    url: &str,
    before: Result<SpecCounters, String>,
    after: Result<SpecCounters, String>,
) -> SpecDecode {
    let mut out = SpecDecode {
        status: SpecStatus::NotExposed,
        url: url.to_string(),
        acceptance: None,
        accepted: None,
        drafted: None,
        mean_acceptance_length: None,
        note: None,
    };
    let (b, a) = match (before, after) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => {
            out.note = Some(e);
            return out;
        }
    };
    let accepted = a.accepted - b.accepted;
    let drafted = a.drafted - b.drafted;
    if accepted < 0.0 || drafted < 0.0 {
        out.status = SpecStatus::Reset;
        out.note = Some("a counter went down during the run (server restart?)".into());
        return out;
    }
    out.accepted = Some(accepted);
    out.drafted = Some(drafted);
    if drafted == 0.0 {
        out.status = SpecStatus::NoDrafts;
        out.note = Some("no tokens were drafted: speculative decoding looks disabled".into());
        return out;
    }
    out.status = SpecStatus::Measured;
    out.acceptance = Some(accepted / drafted);
    out.mean_acceptance_length = match (a.drafts, b.drafts) {
        (Some(x), Some(y)) if x > y => Some(1.0 + accepted / (x - y)),
        _ => None,
    };
    out.note = Some("counters are server-wide: other traffic during the run is included".into());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 13000.0
vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 335.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 999.0
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 21210.0
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 4242.0
vllm:spec_decode_num_drafts_created{engine="0",model_name="m"} 1.7e9
vllm:num_requests_running{model_name="m"} 1.0
"#;

    #[test]
    fn counters_are_summed_over_labels_and_near_names_are_ignored() {
        let c = parse_counters(PAGE).unwrap();
        assert_eq!(c.accepted, 13335.0);
        assert_eq!(c.drafted, 21210.0);
        assert_eq!(c.drafts, Some(4242.0));
        assert!(parse_counters("vllm:num_requests_running 1\n").is_none());
    }

    #[test]
    fn acceptance_is_over_the_window_only() {
        let before = SpecCounters {
            accepted: 1000.0,
            drafted: 5000.0,
            drafts: Some(1000.0),
        };
        let after = SpecCounters {
            accepted: 1600.0,
            drafted: 6000.0,
            drafts: Some(1200.0),
        };
        let s = acceptance("u", Ok(before), Ok(after));
        assert_eq!(s.status, SpecStatus::Measured);
        assert_eq!(s.acceptance, Some(0.6));
        assert_eq!(s.mean_acceptance_length, Some(4.0));
        assert_eq!(
            acceptance("u", Ok(after), Ok(after)).status,
            SpecStatus::NoDrafts
        );
        assert_eq!(
            acceptance("u", Ok(after), Ok(before)).status,
            SpecStatus::Reset
        );
        let missing = acceptance("u", Err("HTTP 404".into()), Ok(after));
        assert_eq!(missing.status, SpecStatus::NotExposed);
        assert_eq!(missing.note.as_deref(), Some("HTTP 404"));
    }

    #[test]
    fn metrics_live_at_the_server_root() {
        assert_eq!(
            default_metrics_url("http://h:8000/v1"),
            "http://h:8000/metrics"
        );
        assert_eq!(
            default_metrics_url("http://h:8000/v1/"),
            "http://h:8000/metrics"
        );
        assert_eq!(default_metrics_url("http://h/api"), "http://h/api/metrics");
    }
}
