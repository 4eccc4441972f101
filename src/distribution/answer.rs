//! The one-line answer of a distribution run ("same model?" with its reasons) and its gate: the
//! metrics it measures, the conditions that hold.
//!
//! - `no` when the pooled test reads `different` (p below alpha);
//! - `yes` when it does not, the run is complete and neither endpoint's A-vs-A control reads
//!   `different` (a control that does says the endpoint's own samples drift, so the test's level
//!   does not hold for it);
//! - `undecided` otherwise (nothing testable, an incomplete run, a failed control).
//!
//! An endpoint that gave one text per open prompt, on every open prompt, is named among the
//! reasons: at a temperature above 0 it seems not to sample (`transformers serve` ignores
//! `temperature`), so the test compares its greedy text, not its distribution.

use super::results::{Distribution, GateOutcome, SamplingParams, Summary, Verdict};
use crate::analysis::{format_p, SameModel};
use crate::gate::{Gate, Metric};

/// Prompts named among the reasons of a `no`.
const NAMED_PROMPTS: usize = 3;

/// The metrics a distribution run measures; a gate on any other never holds, so it is refused.
pub const MEASURED: [Metric; 4] = [
    Metric::DistributionP,
    Metric::DistributionDifferent,
    Metric::NotSameModel,
    Metric::SameModelUndecided,
];

/// The gate of `coherence distribution` when `--fail-on` is not given.
pub fn default_gate() -> Gate {
    "distribution_different>0"
        .parse()
        .expect("the default gate parses")
}

/// The conditions of `gate` on metrics this command does not measure, as written.
pub fn unmeasured(gate: &Gate) -> Vec<String> {
    gate.conditions
        .iter()
        .filter(|c| !MEASURED.contains(&c.metric))
        .map(|c| c.to_string())
        .collect()
}

/// "at temperature T, top_p P, top_k K", naming what was sent.
fn sampling_label(sampling: &SamplingParams) -> String {
    format!(
        "at temperature {}{}{}",
        sampling.temperature,
        sampling
            .top_p
            .map_or(String::new(), |p| format!(", top_p {p}")),
        sampling
            .top_k
            .map_or(String::new(), |k| format!(", top_k {k}"))
    )
}

/// "most different: …": the prompts below the level, smallest p first (None when none is).
fn most_different(d: &Distribution) -> Option<String> {
    let mut named: Vec<(&str, f64)> = d
        .prompts
        .iter()
        .filter_map(|t| t.p.filter(|p| *p < d.alpha).map(|p| (t.id.as_str(), p)))
        .collect();
    named.sort_by(|a, b| a.1.total_cmp(&b.1));
    (!named.is_empty()).then(|| {
        let list: Vec<String> = named
            .iter()
            .take(NAMED_PROMPTS)
            .map(|(id, p)| format!("{id} (p = {})", format_p(*p)))
            .collect();
        format!("most different: {}", list.join(", "))
    })
}

/// Open prompts with two samples or more an endpoint must have for one text on each of them to
/// read as not sampling.
const OPEN_PROMPTS_FOR_NOT_SAMPLING: usize = 2;

/// "`X` gave one text per prompt …" for each endpoint whose every open prompt (two at least, each
/// with two samples or more) got a single distinct text.
fn not_sampling(d: &Distribution, sampling: &SamplingParams) -> Vec<String> {
    d.control
        .iter()
        .enumerate()
        .filter_map(|(e, c)| {
            let open: Vec<_> = d
                .prompts
                .iter()
                .filter(|t| t.kind == "open" && t.samples.get(e).is_some_and(|&n| n >= 2))
                .collect();
            let one_text = open
                .iter()
                .all(|t| t.top_answers.get(e).is_some_and(|a| a.len() == 1));
            (sampling.temperature > 0.0 && open.len() >= OPEN_PROMPTS_FOR_NOT_SAMPLING && one_text)
                .then(|| {
                    format!(
                        "`{}` gave one text per prompt on all {} open prompts {}: it seems not to \
                         sample (coherence contract, probe temperature_honoured), so its greedy \
                         text was tested, not its distribution",
                        c.endpoint,
                        open.len(),
                        sampling_label(sampling)
                    )
                })
        })
        .collect()
}

/// Same model? From the test, its controls and whether every sample arrived.
pub fn summary_of(d: &Distribution, sampling: &SamplingParams, complete: bool) -> Summary {
    let mut because = Vec::new();
    let at = sampling_label(sampling);
    let answer = match (d.verdict, d.p) {
        (Verdict::Different, Some(p)) => {
            because.push(format!(
                "the samples differ {at} (pooled MMD p = {} < {} over {} prompts)",
                format_p(p),
                d.alpha,
                d.prompts_tested
            ));
            because.extend(most_different(d));
            SameModel::No
        }
        (Verdict::Same, Some(p)) => {
            because.push(format!(
                "no difference detected in the samples {at} (pooled MMD p = {} ≥ {} over {} prompts)",
                format_p(p),
                d.alpha,
                d.prompts_tested
            ));
            let drifting: Vec<String> = d
                .control
                .iter()
                .filter(|c| c.different)
                .map(|c| {
                    format!(
                        "{} (control p = {})",
                        c.endpoint,
                        c.p.map_or("–".into(), format_p)
                    )
                })
                .collect();
            if !drifting.is_empty() {
                because.push(format!(
                    "but the A-vs-A control reads different for {}: its own samples are not \
                     exchangeable, so the test's level does not hold",
                    drifting.join(", ")
                ));
                SameModel::Undecided
            } else if !complete {
                because.push("the run is incomplete; --resume it to send what is missing".into());
                SameModel::Undecided
            } else {
                because.push(
                    "a test that finds no difference does not show there is none (at 10 samples \
                     per prompt it misses a sampler that drops top_k 2 in about 4 runs of 10; \
                     docs/src/distribution.md gives its power by N): more --samples narrow what \
                     it can miss, and compare at temperature 0 decides the answers themselves"
                        .into(),
                );
                SameModel::Undecided
            }
        }
        _ => {
            because.push(
                "nothing to test: no prompt has two usable samples from each endpoint".into(),
            );
            SameModel::Undecided
        }
    };
    because.extend(not_sampling(d, sampling));
    if let Some(diff) = &d.accuracy_difference {
        if diff.low > 0.0 || diff.high < 0.0 {
            because.push(format!(
                "accuracy at temperature differs by {:+.0} points (95% interval {:+.0} to {:+.0})",
                100.0 * diff.difference,
                100.0 * diff.low,
                100.0 * diff.high
            ));
        }
    }
    Summary {
        same_model: answer,
        same_model_because: because,
    }
}

/// The value of a measured metric (None: not measured, or nothing tested).
fn metric(m: Metric, d: &Distribution, summary: &Summary) -> Option<f64> {
    let flag = |b: bool| Some(f64::from(u8::from(b)));
    match m {
        Metric::DistributionP => d.p,
        Metric::DistributionDifferent => d.p.and_then(|_| flag(d.verdict == Verdict::Different)),
        Metric::NotSameModel => flag(summary.same_model == SameModel::No),
        Metric::SameModelUndecided => flag(summary.same_model == SameModel::Undecided),
        _ => None,
    }
}

/// The gate applied to the run.
pub fn evaluate(gate: &Gate, d: &Distribution, summary: &Summary) -> GateOutcome {
    GateOutcome {
        expression: gate.to_string(),
        origin: gate.origin,
        failed: gate
            .failed(|m| metric(m, d, summary))
            .iter()
            .map(|c| c.to_string())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribution::results::{AccuracyDifference, Control};

    fn distribution(verdict: Verdict, p: Option<f64>, control_different: bool) -> Distribution {
        Distribution {
            method: "mmd_permutation".into(),
            method_statement: String::new(),
            sample_chars: 2000,
            clipped_samples: 0,
            alpha: 0.05,
            permutations: 1000,
            seed: 0,
            statistic: 0.3,
            p,
            prompts_tested: 16,
            verdict,
            prompts: Vec::new(),
            control: vec![Control {
                endpoint: "a".into(),
                statistic: 0.0,
                p: Some(if control_different { 0.01 } else { 0.6 }),
                prompts_tested: 16,
                different: control_different,
            }],
            accuracy: Vec::new(),
            accuracy_difference: Some(AccuracyDifference {
                difference: 0.3,
                low: 0.1,
                high: 0.5,
                prompts: 8,
            }),
        }
    }

    fn sampling() -> SamplingParams {
        SamplingParams {
            temperature: 0.7,
            top_p: None,
            top_k: Some(20),
            samples: 10,
            max_tokens: None,
            params: Default::default(),
        }
    }

    #[test]
    fn the_answer_follows_the_test_the_controls_and_completeness() {
        let s = summary_of(
            &distribution(Verdict::Different, Some(0.002), false),
            &sampling(),
            true,
        );
        assert_eq!(s.same_model, SameModel::No);
        assert!(s.same_model_because[0].contains("differ at temperature 0.7, top_k 20"));
        assert!(s.same_model_because[0].contains("p = 0.002 < 0.05 over 16 prompts"));
        assert!(s.same_model_because.last().unwrap().contains("+30 points"));
        // No difference found is not sameness shown: the answer stays undecided, saying why.
        let same = distribution(Verdict::Same, Some(0.4), false);
        let s = summary_of(&same, &sampling(), true);
        assert_eq!(s.same_model, SameModel::Undecided);
        assert!(s.same_model_because[1].contains("does not show there is none"));
        assert_eq!(
            summary_of(&same, &sampling(), false).same_model,
            SameModel::Undecided
        );
        let drifting = distribution(Verdict::Same, Some(0.4), true);
        let s = summary_of(&drifting, &sampling(), true);
        assert_eq!(s.same_model, SameModel::Undecided);
        assert!(s.same_model_because[1].contains("a (control p = 0.010)"));
        let none = distribution(Verdict::Untested, None, false);
        assert_eq!(
            summary_of(&none, &sampling(), true).same_model,
            SameModel::Undecided
        );
    }

    fn open_prompt(id: &str, texts: [&[&str]; 2]) -> crate::distribution::results::PromptTest {
        use crate::distribution::results::{AnswerCount, PromptTest};
        let answers = |t: &[&str]| -> Vec<AnswerCount> {
            t.iter()
                .map(|a| AnswerCount {
                    answer: a.to_string(),
                    count: 5,
                })
                .collect()
        };
        PromptTest {
            id: id.into(),
            kind: "open".into(),
            kernel: crate::distribution::kernel::Kernel::CharTrigram,
            question: String::new(),
            samples: vec![10, 10],
            mmd2: Some(0.0),
            p: Some(0.5),
            accuracy: Vec::new(),
            top_answers: vec![answers(texts[0]), answers(texts[1])],
        }
    }

    #[test]
    fn an_endpoint_with_one_text_per_open_prompt_is_said_not_to_sample() {
        let mut d = distribution(Verdict::Different, Some(0.002), false);
        d.control.push(Control {
            endpoint: "b".into(),
            ..d.control[0].clone()
        });
        d.prompts = vec![
            open_prompt("story", [&["x", "y"], &["greedy story"]]),
            open_prompt("poem", [&["p", "q"], &["greedy poem"]]),
        ];
        let s = summary_of(&d, &sampling(), true);
        let named: Vec<&String> = s
            .same_model_because
            .iter()
            .filter(|r| r.contains("seems not to sample"))
            .collect();
        assert_eq!(named.len(), 1, "{:?}", s.same_model_because);
        assert!(named[0]
            .starts_with("`b` gave one text per prompt on all 2 open prompts at temperature 0.7"));
        // One open prompt with one text is not enough, nor is temperature 0.
        d.prompts[1] = open_prompt("poem", [&["p", "q"], &["p", "q"]]);
        let s = summary_of(&d, &sampling(), true);
        assert!(!s
            .same_model_because
            .iter()
            .any(|r| r.contains("seems not to sample")));
    }

    #[test]
    fn the_gate_reads_the_measured_metrics_and_names_the_others() {
        let d = distribution(Verdict::Different, Some(0.002), false);
        let s = summary_of(&d, &sampling(), true);
        let gate: Gate = "distribution_p<0.01,not_same_model>0,same_model_undecided>0"
            .parse()
            .unwrap();
        let outcome = evaluate(&gate, &d, &s);
        assert_eq!(outcome.failed, ["distribution_p<0.01", "not_same_model>0"]);
        assert!(evaluate(&default_gate(), &d, &s).failed == ["distribution_different>0"]);
        let untested = distribution(Verdict::Untested, None, false);
        let s = summary_of(&untested, &sampling(), true);
        assert!(evaluate(&default_gate(), &untested, &s).failed.is_empty());
        let mixed: Gate = "diff>0,distribution_p<0.05".parse().unwrap();
        assert_eq!(unmeasured(&mixed), ["diff>0"]);
        assert!(unmeasured(&default_gate()).is_empty());
    }
}
