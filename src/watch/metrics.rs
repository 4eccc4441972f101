//! The latest check of every watch as Prometheus metrics: one gauge family per figure, each
//! sample labelled with the watch's `name`, a figure the check did not have left out rather than
//! written as NaN, no timestamps (node_exporter's textfile collector refuses them). The text is
//! both the Prometheus text format 0.0.4 (which that collector reads, `# EOF` a comment to it)
//! and OpenMetrics 1.0 (whose parsers require that last line). A pure serializer: the caller
//! writes the file.

use std::fmt::Write;

use crate::history::{Check, CheckStatus};

/// One gauge family: its name, its help line, and the figure of a check (None: no sample).
struct Family {
    name: &'static str,
    help: &'static str,
    value: fn(&Check) -> Option<f64>,
}

const FAMILIES: &[Family] = &[
    Family {
        name: "coherence_watch_flagged",
        help: "1 when the latest check was flagged (identity perturbed or different, or behaviour different), else 0.",
        value: |c| Some(flag(c.status == CheckStatus::Flagged)),
    },
    Family {
        name: "coherence_watch_incomplete",
        help: "1 when the latest check was incomplete (requests failed or it was interrupted: nothing decided), else 0.",
        value: |c| Some(flag(c.status == CheckStatus::Incomplete)),
    },
    Family {
        name: "coherence_watch_identity_e_value",
        help: "The identity test's e-value of the latest check (evidence against the baseline; flagged at 1/alpha).",
        value: |c| Some(c.e_value),
    },
    Family {
        name: "coherence_watch_substituted_share",
        help: "Estimated share of requests that do not look like the baseline (0 to 1), latest check.",
        value: |c| c.substituted_share,
    },
    Family {
        name: "coherence_watch_substituted_share_lower",
        help: "Lower end of the substituted share's 95% interval (Newcombe), latest check.",
        value: |c| c.substituted_low,
    },
    Family {
        name: "coherence_watch_substituted_share_upper",
        help: "Upper end of the substituted share's 95% interval (Newcombe), latest check.",
        value: |c| c.substituted_high,
    },
    Family {
        name: "coherence_watch_quality_difference_points",
        help: "Accuracy of the endpoint minus the baseline's on the probe's graded items, in percentage points, latest check.",
        value: |c| c.quality_difference.map(points),
    },
    Family {
        name: "coherence_watch_quality_difference_points_lower",
        help: "Lower end of the quality difference's 90% interval, in percentage points, latest check.",
        value: |c| c.quality_low.map(points),
    },
    Family {
        name: "coherence_watch_quality_difference_points_upper",
        help: "Upper end of the quality difference's 90% interval, in percentage points, latest check.",
        value: |c| c.quality_high.map(points),
    },
    Family {
        name: "coherence_watch_requests",
        help: "Requests the latest check sent.",
        value: |c| Some(f64::from(c.requests)),
    },
    Family {
        name: "coherence_watch_failed_requests",
        help: "Requests of the latest check that failed after retries.",
        value: |c| Some(f64::from(c.failed)),
    },
    Family {
        name: "coherence_watch_last_check_timestamp_seconds",
        help: "When the latest check started, in seconds since the Unix epoch.",
        value: |c| {
            chrono::DateTime::parse_from_rfc3339(&c.started_at)
                .ok()
                .map(|t| t.timestamp_millis() as f64 / 1000.0)
        },
    },
];

fn flag(on: bool) -> f64 {
    if on {
        1.0
    } else {
        0.0
    }
}

fn points(fraction: f64) -> f64 {
    100.0 * fraction
}

/// The exposition of `latest` (one check per watch), families in a fixed order, samples in
/// the order given.
pub fn render(latest: &[Check]) -> String {
    let mut out = String::new();
    for family in FAMILIES {
        let _ = writeln!(out, "# HELP {} {}", family.name, help_text(family.help));
        let _ = writeln!(out, "# TYPE {} gauge", family.name);
        for check in latest {
            if let Some(v) = (family.value)(check) {
                let _ = writeln!(
                    out,
                    "{}{{name=\"{}\"}} {}",
                    family.name,
                    label_value(&check.name),
                    number(v)
                );
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

/// A label value escaped as the format asks: `\` `"` and a line feed.
fn label_value(s: &str) -> String {
    s.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

/// A help text escaped as the format asks: `\` and a line feed.
fn help_text(s: &str) -> String {
    s.replace('\\', r"\\").replace('\n', r"\n")
}

/// A sample value: Go's float spelling for the infinities and NaN, else Rust's shortest
/// round-trip form (`1e16`, `0.25`).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_help_and_type_and_each_check_its_labelled_samples() {
        let mut flagged = Check::sample("canary", "2026-12-03T10:00:00Z");
        flagged.status = CheckStatus::Flagged;
        flagged.e_value = 2.3e13;
        flagged.substituted_share = Some(0.98);
        flagged.substituted_low = Some(0.869);
        flagged.substituted_high = Some(0.996);
        flagged.quality_difference = Some(-0.021);
        let mut prod = Check::sample("prod", "2026-12-03T10:00:01.500Z");
        prod.status = CheckStatus::Unchanged;
        prod.substituted_share = None;
        prod.quality_difference = None;
        prod.quality_low = None;
        prod.quality_high = None;
        let text = render(&[flagged, prod]);
        for family in FAMILIES {
            assert!(text.contains(&format!("# HELP {} ", family.name)), "{text}");
            assert!(text.contains(&format!("# TYPE {} gauge\n", family.name)));
        }
        assert!(text.contains("coherence_watch_flagged{name=\"canary\"} 1.0\n"));
        assert!(text.contains("coherence_watch_flagged{name=\"prod\"} 0.0\n"));
        assert!(
            text.contains("coherence_watch_identity_e_value{name=\"canary\"} 23000000000000.0\n")
        );
        assert!(text.contains("coherence_watch_substituted_share_upper{name=\"canary\"} 0.996\n"));
        assert!(text.contains("coherence_watch_quality_difference_points{name=\"canary\"} -2.1"));
        assert!(
            !text.contains("coherence_watch_substituted_share{name=\"prod\"}"),
            "a figure the check lacks has no sample"
        );
        assert!(text.contains(
            "coherence_watch_last_check_timestamp_seconds{name=\"prod\"} 1796292001.5\n"
        ));
        assert!(text.ends_with("\n# EOF\n"));
        // Every line is a comment or `family{name="…"} value`.
        for line in text.lines() {
            assert!(
                line.starts_with("# ") || line.starts_with("coherence_watch_"),
                "{line}"
            );
        }
    }

    #[test]
    fn label_values_and_numbers_are_spelt_as_the_format_asks() {
        assert_eq!(label_value("a\"b\\c\nd"), r#"a\"b\\c\nd"#);
        assert_eq!(help_text("a\\b\nc"), r"a\\b\nc");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(1e300), "1e300");
        assert_eq!(number(0.25), "0.25");
        let mut odd = Check::sample("a\"b", "2026-12-03T10:00:00Z");
        odd.e_value = f64::INFINITY;
        let text = render(&[odd]);
        assert!(text.contains("coherence_watch_identity_e_value{name=\"a\\\"b\"} +Inf\n"));
    }
}
