//! `--fail-on`: the conditions that turn a complete run into exit code 1.
//!
//! A gate is a comma-separated list of `METRIC OP NUMBER` conditions; the gate fails when any
//! condition holds. Metrics: `same`, `diff`, `review`, `fail` (prompts with that verdict),
//! `nondeterministic` (prompt-endpoint pairs whose repeats disagree), `deployment` (prompts whose
//! answers differ beyond the reference's own sampler noise), `p` (the smallest catalogue-wide exact
//! McNemar p-value between the reference and another endpoint). OP is one of `>`, `>=`, `<`, `<=`, `=`.

use serde::{Deserialize, Serialize};

/// The gate of `coherence compare` when `--fail-on` is not given.
pub const DEFAULT_COMPARE_GATE: &str = "diff>0,fail>0";
/// The gate of `coherence determinism` when `--fail-on` is not given.
pub const DEFAULT_DETERMINISM_GATE: &str = "nondeterministic>0,fail>0";

const METRICS: &[&str] = &[
    "same",
    "diff",
    "review",
    "fail",
    "nondeterministic",
    "deployment",
    "p",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    pub metric: String,
    pub op: String,
    pub value: f64,
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}{}", self.metric, self.op, self.value)
    }
}

/// Parse a gate expression; errors name `--fail-on`.
pub fn parse_gate(expr: &str) -> Result<Vec<Condition>, String> {
    expr.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|cond| {
            let at = cond.find(['<', '>', '=']).ok_or_else(|| {
                format!("--fail-on `{cond}`: expected METRIC OP NUMBER, e.g. diff>0")
            })?;
            let metric = cond[..at].trim();
            let rest = &cond[at..];
            let op = ["<=", ">=", "<", ">", "="]
                .into_iter()
                .find(|o| rest.starts_with(o))
                .unwrap_or("=");
            let value: f64 = rest[op.len()..].trim().parse().map_err(|_| {
                format!(
                    "--fail-on `{cond}`: `{}` is not a number",
                    rest[op.len()..].trim()
                )
            })?;
            if !METRICS.contains(&metric) {
                return Err(format!(
                    "--fail-on `{cond}`: unknown metric `{metric}` (known: {})",
                    METRICS.join(", ")
                ));
            }
            Ok(Condition {
                metric: metric.into(),
                op: op.into(),
                value,
            })
        })
        .collect()
}

impl Condition {
    /// Whether the condition holds for this metric value (None: the metric is not defined for
    /// this run, e.g. `p` with a single endpoint, and the condition does not hold).
    pub fn holds(&self, actual: Option<f64>) -> bool {
        let Some(a) = actual else { return false };
        match self.op.as_str() {
            ">" => a > self.value,
            ">=" => a >= self.value,
            "<" => a < self.value,
            "<=" => a <= self.value,
            _ => (a - self.value).abs() < 1e-12,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_evaluates_conditions() {
        let g = parse_gate("diff>0, nondeterministic>=2,p<0.05").unwrap();
        assert_eq!(g.len(), 3);
        assert!(g[0].holds(Some(1.0)) && !g[0].holds(Some(0.0)));
        assert!(g[1].holds(Some(2.0)) && !g[1].holds(Some(1.0)));
        assert!(g[2].holds(Some(0.002)) && !g[2].holds(Some(0.5)) && !g[2].holds(None));
        assert_eq!(g[2].to_string(), "p<0.05");
    }

    #[test]
    fn bad_expressions_name_the_flag() {
        assert!(parse_gate("diff").unwrap_err().contains("--fail-on `diff`"));
        assert!(parse_gate("speed>3")
            .unwrap_err()
            .contains("unknown metric `speed`"));
        assert!(parse_gate("diff>x").unwrap_err().contains("not a number"));
        assert!(
            parse_gate(DEFAULT_COMPARE_GATE).is_ok()
                && parse_gate(DEFAULT_DETERMINISM_GATE).is_ok()
        );
    }
}
