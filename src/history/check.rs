//! One watch check as the history keeps it: when, against what, both verdicts and the figures
//! behind them, and the run folder with the full evidence.

use serde::{Deserialize, Serialize};

use crate::doc::{fmt_num, fmt_signed};

/// What a check found, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// Neither identity nor behaviour parted from the baseline.
    Unchanged,
    /// Identity (perturbed, different) or behaviour (different) parted from the baseline.
    Flagged,
    /// Requests failed or the check was interrupted, and nothing parted: nothing decided.
    Incomplete,
}

impl CheckStatus {
    pub const ALL: [CheckStatus; 3] = [Self::Unchanged, Self::Flagged, Self::Incomplete];

    /// The word results, the database and the page use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unchanged => "unchanged",
            Self::Flagged => "flagged",
            Self::Incomplete => "incomplete",
        }
    }

    /// The status a word names, if it names one.
    pub fn parse(word: &str) -> Option<CheckStatus> {
        Self::ALL.into_iter().find(|s| s.as_str() == word)
    }
}

impl std::fmt::Display for CheckStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One check of a watched endpoint against its pinned baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The watch's name (`coherence watch NAME`).
    pub name: String,
    /// When the check started, RFC 3339 in UTC (`2026-12-03T10:00:00Z`).
    pub started_at: String,
    /// The watched endpoint's base URL (never a key).
    pub endpoint: String,
    /// The baseline run folder, as an absolute path.
    pub baseline: String,
    pub status: CheckStatus,
    /// The identity verdict: `identical`, `undecided`, `perturbed` or `different`.
    pub identity: String,
    /// The behaviour verdict: `equivalent`, `undecided` or `different`.
    pub behaviour: String,
    /// One line: why the check reads as it does.
    pub because: String,
    /// The identity test's e-value (evidence against "same as the baseline").
    pub e_value: f64,
    /// Probe prompts where the endpoint was further from the baseline than the baseline's own
    /// repeat, closer, or neither.
    pub pair_further: u32,
    pub control_further: u32,
    pub ties: u32,
    /// The estimated share of requests that do not look like the baseline, with its 95%
    /// interval (absent when no prompt had a control).
    pub substituted_share: Option<f64>,
    pub substituted_low: Option<f64>,
    pub substituted_high: Option<f64>,
    /// Behaviour: the accuracy difference (other − baseline, as a fraction) and its 90%
    /// interval, on `graded` items (absent when none was graded).
    pub quality_difference: Option<f64>,
    pub quality_low: Option<f64>,
    pub quality_high: Option<f64>,
    pub graded: u32,
    /// Requests sent and requests that failed after retries.
    pub requests: u32,
    pub failed: u32,
    /// The check's run folder (a full compare run: report.html, results.json), absolute.
    pub run_dir: String,
}

impl Check {
    /// The substituted share with its interval, in percent: `20% [11–33%]`; `—` when absent.
    pub fn substituted_text(&self) -> String {
        let pct = |x: f64| fmt_num(100.0 * x);
        match (
            self.substituted_share,
            self.substituted_low,
            self.substituted_high,
        ) {
            (Some(s), Some(lo), Some(hi)) => format!("{}% [{}–{}%]", pct(s), pct(lo), pct(hi)),
            (Some(s), _, _) => format!("{}%", pct(s)),
            (None, _, _) => "—".into(),
        }
    }

    /// The quality difference with its interval, in percentage points: `−4 pts [−9, +1]`; `—`
    /// when nothing was graded.
    pub fn quality_text(&self) -> String {
        let pts = |x: f64| fmt_signed(100.0 * x);
        match (self.quality_difference, self.quality_low, self.quality_high) {
            (Some(d), Some(lo), Some(hi)) => {
                format!("{} pts [{}, {}]", pts(d), pts(lo), pts(hi))
            }
            (Some(d), _, _) => format!("{} pts", pts(d)),
            (None, _, _) => "—".into(),
        }
    }

    /// The e-value for people: `350`, `2.5`, `1.2e6`, `∞`, `—` when it is not a number.
    pub fn e_value_text(&self) -> String {
        let e = self.e_value;
        if e.is_nan() {
            "—".into()
        } else if e.is_infinite() {
            if e > 0.0 { "∞" } else { "−∞" }.into()
        } else if e != 0.0 && !(0.01..1e4).contains(&e.abs()) {
            format!("{e:.1e}")
        } else {
            fmt_num(e)
        }
    }
}

impl Check {
    /// A flagged check of the watch `name` with every optional figure present: the one sample
    /// that tests and the trend page's fixture (`examples/history_fixture.rs`) vary.
    pub fn sample(name: &str, started_at: &str) -> Check {
        Check {
            name: name.into(),
            started_at: started_at.into(),
            endpoint: "http://127.0.0.1:8080/v1".into(),
            baseline: "/runs/baseline".into(),
            status: CheckStatus::Flagged,
            identity: "different".into(),
            behaviour: "equivalent".into(),
            because: "the endpoint was further from the baseline on 14 of 20 prompts".into(),
            e_value: 350.5,
            pair_further: 14,
            control_further: 4,
            ties: 2,
            substituted_share: Some(0.2),
            substituted_low: Some(0.11),
            substituted_high: Some(0.33),
            quality_difference: Some(-0.04),
            quality_low: Some(-0.09),
            quality_high: Some(0.01),
            graded: 120,
            requests: 160,
            failed: 1,
            run_dir: format!("/runs/{name}-{started_at}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_as_people_write_them() {
        let c = Check::sample("prod", "2026-12-03T10:00:00Z");
        assert_eq!(c.substituted_text(), "20% [11–33%]");
        assert_eq!(c.quality_text(), "−4 pts [−9, +1]");
        assert_eq!(c.e_value_text(), "350");
        let none = Check {
            substituted_share: None,
            quality_difference: None,
            e_value: 1.3e6,
            ..c.clone()
        };
        assert_eq!(none.substituted_text(), "—");
        assert_eq!(none.quality_text(), "—");
        assert_eq!(none.e_value_text(), "1.3e6");
        let odd = Check {
            substituted_low: None,
            quality_low: None,
            e_value: f64::NAN,
            ..c
        };
        assert_eq!(odd.substituted_text(), "20%");
        assert_eq!(odd.quality_text(), "−4 pts");
        assert_eq!(odd.e_value_text(), "—");
    }
}
