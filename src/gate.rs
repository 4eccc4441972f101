//! `--fail-on`: the typed gate that turns a complete run into exit code 1.
//!
//! A gate is a comma-separated list of `METRIC OP NUMBER` conditions; the gate fails when any
//! condition holds. It is parsed once, at the command line (or from a run's manifest), carried
//! parsed through the run and the analysis, and written back as the same text.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A metric a gate condition can test. Each is a count over the run unless its doc says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Prompts whose verdict is `same`.
    Same,
    /// Prompts whose verdict is `diff`: a different answer (a formatting difference is `format`).
    Diff,
    /// Prompts whose verdict is `review`.
    Review,
    /// Prompts whose verdict is `fail`.
    Fail,
    /// Prompt/endpoint pairs whose repeats disagree.
    Nondeterministic,
    /// Prompts whose answers differ beyond the reference's own sampler noise.
    Deployment,
    /// The smallest catalogue-wide exact McNemar p-value between the reference and another endpoint.
    P,
    /// `diff` prompts where one side is correct and the other not.
    Flip,
    /// `diff` prompts where both are wrong (or ungraded) with different answers.
    Answer,
    /// Prompts whose verdict is `format`: both fail the same way, rendered differently (not a
    /// deployment difference).
    Format,
    /// Prompts whose verdict is `no_answer`: neither side gave an answer (not a deployment
    /// difference either).
    NoAnswer,
    /// Endpoint pairs whose quality verdict is `different`.
    Different,
    /// Endpoint pairs whose quality verdict is `inconclusive`.
    Inconclusive,
    /// Prompts whose `usage.prompt_tokens` differ between the reference and another endpoint.
    Parity,
    /// Endpoints whose `determinism --under-load` verdict is `changes_at_load`: some prompt gave,
    /// amid concurrent requests, an answer it never gave alone. Undefined (the condition does not
    /// hold) for a run without `--under-load`.
    ChangesAtLoad,
    /// Endpoints where some prompt returned, amid concurrent requests, a completion text it never
    /// returned alone, whether its extracted answer changed or not (batch non-invariance in
    /// text). Undefined for a run without `--under-load`.
    TextChangesAtLoad,
    /// Endpoints whose `determinism --cache-states` verdict is `cache_dependent`: the same
    /// request gave another answer depending on what the prompt cache held. Undefined for a run
    /// without `--cache-states`.
    CacheDependent,
    /// 1 when the run's same-model answer is `no`, else 0.
    NotSameModel,
    /// 1 when the run's same-model answer is `undecided`, else 0.
    SameModelUndecided,
    /// (pair, family) combinations named `different` after Holm's correction.
    FamiliesDifferent,
    /// The pooled two-sample p-value of `coherence distribution` (same distribution at the
    /// served temperature). Undefined for any other run.
    DistributionP,
    /// 1 when `coherence distribution` reads the two endpoints' samples as different, else 0.
    /// Undefined for any other run.
    DistributionDifferent,
    /// The lowest tool-call trigger F1 of another endpoint against the reference
    /// (`tool_calls.pairs`). Undefined for a run without tool items.
    ToolF1,
    /// Tool calls with invalid JSON arguments, an unknown function or arguments outside the
    /// function's schema, on every endpoint. Undefined for a run without tool items.
    SchemaInvalid,
    /// Endpoint pairs whose long items (`--suite long`) differ significantly at some length
    /// (Holm-adjusted exact McNemar). Undefined for a run without long items.
    LongDifferent,
    IdentityPerturbed,
    IdentityDifferent,
    IdentityUndecided,
}

impl Metric {
    /// Every metric, in the order the help text lists them.
    pub const ALL: &'static [Metric] = &[
        Metric::Same,
        Metric::Diff,
        Metric::Review,
        Metric::Fail,
        Metric::Nondeterministic,
        Metric::Deployment,
        Metric::P,
        Metric::Flip,
        Metric::Answer,
        Metric::Format,
        Metric::NoAnswer,
        Metric::Different,
        Metric::Inconclusive,
        Metric::Parity,
        Metric::ChangesAtLoad,
        Metric::TextChangesAtLoad,
        Metric::CacheDependent,
        Metric::NotSameModel,
        Metric::SameModelUndecided,
        Metric::FamiliesDifferent,
        Metric::DistributionP,
        Metric::DistributionDifferent,
        Metric::ToolF1,
        Metric::SchemaInvalid,
        Metric::LongDifferent,
        Metric::IdentityPerturbed,
        Metric::IdentityDifferent,
        Metric::IdentityUndecided,
    ];

    /// The name written in `--fail-on`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Same => "same",
            Metric::Diff => "diff",
            Metric::Review => "review",
            Metric::Fail => "fail",
            Metric::Nondeterministic => "nondeterministic",
            Metric::Deployment => "deployment",
            Metric::P => "p",
            Metric::Flip => "flip",
            Metric::Answer => "answer",
            Metric::Format => "format",
            Metric::NoAnswer => "no_answer",
            Metric::Different => "different",
            Metric::Inconclusive => "inconclusive",
            Metric::Parity => "parity",
            Metric::ChangesAtLoad => "changes_at_load",
            Metric::TextChangesAtLoad => "text_changes_at_load",
            Metric::CacheDependent => "cache_dependent",
            Metric::NotSameModel => "not_same_model",
            Metric::SameModelUndecided => "same_model_undecided",
            Metric::FamiliesDifferent => "families_different",
            Metric::DistributionP => "distribution_p",
            Metric::DistributionDifferent => "distribution_different",
            Metric::ToolF1 => "tool_f1",
            Metric::SchemaInvalid => "schema_invalid",
            Metric::LongDifferent => "long_different",
            Metric::IdentityPerturbed => "identity_perturbed",
            Metric::IdentityDifferent => "identity_different",
            Metric::IdentityUndecided => "identity_undecided",
        }
    }

    fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.iter().copied().find(|m| m.name() == name)
    }
}

/// A comparison operator of a gate condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
}

impl Op {
    /// Longest spellings first, so `>=` is not read as `>`.
    const SPELLINGS: &'static [(&'static str, Op)] = &[
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("=", Op::Eq),
    ];

    fn symbol(self) -> &'static str {
        match self {
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Eq => "=",
        }
    }

    fn holds(self, actual: f64, value: f64) -> bool {
        match self {
            Op::Gt => actual > value,
            Op::Ge => actual >= value,
            Op::Lt => actual < value,
            Op::Le => actual <= value,
            Op::Eq => (actual - value).abs() < 1e-12,
        }
    }
}

/// One `METRIC OP NUMBER` condition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    pub metric: Metric,
    pub op: Op,
    pub value: f64,
}

impl Threshold {
    /// Whether the condition holds for this metric value (None: the metric is not defined for
    /// this run, e.g. `p` with a single endpoint, and the condition does not hold).
    pub fn holds(&self, actual: Option<f64>) -> bool {
        actual.is_some_and(|a| self.op.holds(a, self.value))
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}{}",
            self.metric.name(),
            self.op.symbol(),
            self.value
        )
    }
}

impl FromStr for Threshold {
    type Err = String;

    fn from_str(cond: &str) -> Result<Self, String> {
        let cond = cond.trim();
        let at = cond
            .find(['<', '>', '='])
            .ok_or_else(|| format!("`{cond}`: expected METRIC OP NUMBER, e.g. diff>0"))?;
        let name = cond[..at].trim();
        let rest = &cond[at..];
        let (spelling, op) = Op::SPELLINGS
            .iter()
            .copied()
            .find(|(s, _)| rest.starts_with(s))
            .unwrap_or(("=", Op::Eq));
        let number = rest[spelling.len()..].trim();
        let value: f64 = number
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("`{cond}`: `{number}` is not a number"))?;
        let metric = Metric::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
            format!(
                "`{cond}`: unknown metric `{name}` (known: {})",
                known.join(", ")
            )
        })?;
        Ok(Threshold { metric, op, value })
    }
}

/// Where a gate's expression came from: the gate line of the report says it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOrigin {
    /// A `--fail-on` flag.
    Flag,
    /// The run's manifest (the gate the run was started with).
    Manifest,
    /// The command's default gate.
    #[default]
    Default,
}

impl GateOrigin {
    /// "from --fail-on", "from the run's manifest", "the default".
    pub fn describe(self) -> &'static str {
        match self {
            GateOrigin::Flag => "from --fail-on",
            GateOrigin::Manifest => "from the run's manifest",
            GateOrigin::Default => "the default",
        }
    }
}

/// A parsed gate: conditions any one of which fails the run, and where its expression came
/// from. Serialised as its expression; a gate read back (from a run's manifest) is from there.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Gate {
    pub conditions: Vec<Threshold>,
    pub origin: GateOrigin,
}

/// Two gates are equal when their conditions are, wherever they came from.
impl PartialEq for Gate {
    fn eq(&self, other: &Gate) -> bool {
        self.conditions == other.conditions
    }
}

impl Gate {
    /// The gate of `coherence compare` when `--fail-on` is not given: fail when an endpoint's
    /// quality reads `different` from the reference's, or a prompt got no usable answer. Text
    /// differences alone do not fail it (`--fail-on diff>0` makes them).
    pub fn default_compare() -> Gate {
        "different>0,fail>0"
            .parse()
            .expect("the default gate parses")
    }

    /// The same gate, marked as coming from `origin`.
    pub fn with_origin(mut self, origin: GateOrigin) -> Gate {
        self.origin = origin;
        self
    }

    /// The gate of `coherence determinism` when `--fail-on` is not given: fail when a prompt's
    /// repeats disagree, a prompt got no usable answer, or (when those phases ran) answers change
    /// under concurrent load or with the prompt cache.
    pub fn default_determinism() -> Gate {
        "nondeterministic>0,fail>0,changes_at_load>0,cache_dependent>0"
            .parse()
            .expect("the default gate parses")
    }

    /// No condition at all (a manifest written before gates were recorded).
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// The conditions that hold, given how to read each metric.
    pub fn failed(&self, metric: impl Fn(Metric) -> Option<f64>) -> Vec<Threshold> {
        self.conditions
            .iter()
            .filter(|c| c.holds(metric(c.metric)))
            .copied()
            .collect()
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.conditions.iter().map(|c| c.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

impl FromStr for Gate {
    type Err = String;

    fn from_str(expr: &str) -> Result<Self, String> {
        let conditions = expr
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        Ok(Gate {
            conditions,
            origin: GateOrigin::Default,
        })
    }
}

impl Gate {
    /// Parse the value of `--fail-on`: like [`FromStr`], but an expression with no condition
    /// (`""`, `","`, an unset `$GATE` in CI) is refused instead of silently turning the gate off.
    pub fn from_flag(expr: &str) -> Result<Gate, String> {
        let gate = expr.parse::<Gate>()?.with_origin(GateOrigin::Flag);
        if gate.is_empty() {
            return Err(format!(
                "`{expr}` holds no condition; give at least one METRIC OP NUMBER, e.g. diff>0"
            ));
        }
        Ok(gate)
    }
}

impl TryFrom<String> for Gate {
    type Error = String;

    /// A gate read back from a run's manifest: from there, unless it is a command's default
    /// (then it reads as the default, as it did when the run was scored first).
    fn try_from(s: String) -> Result<Self, String> {
        let gate: Gate = s.parse()?;
        let default = gate == Gate::default_compare() || gate == Gate::default_determinism();
        Ok(gate.with_origin(if default {
            GateOrigin::Default
        } else {
            GateOrigin::Manifest
        }))
    }
}

impl From<Gate> for String {
    fn from(g: Gate) -> String {
        g.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_evaluates_conditions() {
        let g: Gate = "diff>0, nondeterministic>=2,p<0.05".parse().unwrap();
        let c = &g.conditions;
        assert_eq!(c.len(), 3);
        assert!(c[0].holds(Some(1.0)) && !c[0].holds(Some(0.0)));
        assert!(c[1].holds(Some(2.0)) && !c[1].holds(Some(1.0)));
        assert!(c[2].holds(Some(0.002)) && !c[2].holds(Some(0.5)) && !c[2].holds(None));
        assert_eq!(g.to_string(), "diff>0,nondeterministic>=2,p<0.05");
    }

    #[test]
    fn bad_expressions_say_what_is_wrong() {
        let err = |s: &str| s.parse::<Gate>().unwrap_err();
        assert!(err("diff").contains("`diff`: expected METRIC OP NUMBER"));
        assert!(err("speed>3").contains("unknown metric `speed`"));
        assert!(err("diff>x").contains("not a number"));
        assert!(err("diff>inf").contains("not a number"));
    }

    #[test]
    fn a_flag_with_no_condition_is_refused() {
        for empty in ["", ",", " , ,"] {
            let err = Gate::from_flag(empty).unwrap_err();
            assert!(err.contains("holds no condition"), "{empty:?}: {err}");
        }
        assert_eq!(Gate::from_flag("diff>0").unwrap().conditions.len(), 1);
        assert!(Gate::from_flag("speed>3").is_err());
    }

    #[test]
    fn serialises_as_its_expression() {
        let g = Gate::default_compare();
        let json = serde_json::to_string(&g).unwrap();
        assert_eq!(json, "\"different>0,fail>0\"");
        assert_eq!(serde_json::from_str::<Gate>(&json).unwrap(), g);
        assert!(serde_json::from_str::<Gate>("\"\"").unwrap().is_empty());
        assert!(serde_json::from_str::<Gate>("\"speed>1\"").is_err());
    }

    #[test]
    fn a_gate_knows_where_its_expression_came_from() {
        assert_eq!(Gate::default_compare().origin, GateOrigin::Default);
        assert_eq!(Gate::default_determinism().origin, GateOrigin::Default);
        assert_eq!(Gate::from_flag("diff>0").unwrap().origin, GateOrigin::Flag);
        let read: Gate = serde_json::from_str("\"diff>0\"").unwrap();
        assert_eq!(read.origin, GateOrigin::Manifest);
        let default: Gate = serde_json::from_str("\"different>0,fail>0\"").unwrap();
        assert_eq!(default.origin, GateOrigin::Default);
        assert_eq!(GateOrigin::Manifest.describe(), "from the run's manifest");
    }

    #[test]
    fn the_probe_verdict_metrics_parse_and_hold_only_when_measured() {
        let g: Gate = "changes_at_load>0,cache_dependent>=1".parse().unwrap();
        assert_eq!(g.conditions[0].metric, Metric::ChangesAtLoad);
        assert_eq!(g.conditions[1].metric, Metric::CacheDependent);
        assert_eq!(g.to_string(), "changes_at_load>0,cache_dependent>=1");
        let c = &g.conditions[0];
        assert!(c.holds(Some(1.0)) && !c.holds(Some(0.0)) && !c.holds(None));
        // The default of `determinism` includes both; a run without the phases reads them as
        // undefined, so only its repeats and failures decide.
        let d = Gate::default_determinism();
        let failed = d.failed(|m| match m {
            Metric::ChangesAtLoad | Metric::CacheDependent => None,
            _ => Some(0.0),
        });
        assert!(failed.is_empty(), "{failed:?}");
        let failed = d.failed(|m| {
            Some(if m == Metric::CacheDependent {
                1.0
            } else {
                0.0
            })
        });
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].to_string(), "cache_dependent>0");
    }

    #[test]
    fn failed_lists_the_conditions_that_hold() {
        let g: Gate = "diff>0,fail>0".parse().unwrap();
        let failed = g.failed(|m| Some(if m == Metric::Diff { 2.0 } else { 0.0 }));
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].to_string(), "diff>0");
    }
}
