//! The samples of a run, read and graded, to the `distribution` figures: the two-sample test per
//! prompt and pooled, each endpoint's A-vs-A control, accuracy at temperature and its paired
//! difference.

use std::collections::BTreeMap;

use super::mmd::{self, Samples};
use std::sync::Arc;

use super::kernel::SAMPLE_CHARS;
use super::limits::MAX_STATISTICS_WORK;
use super::prompts::{is_graded, kernel, Reading};
use super::results::{
    Accuracy, AccuracyDifference, AnswerCount, Control, Distribution, PromptTest, Verdict,
};
use crate::catalogue::Prompt;

/// Answers listed per prompt and endpoint.
const TOP_ANSWERS: usize = 3;

/// The longest answer text listed.
const ANSWER_CHARS: usize = 80;

/// The method, as results.json names it.
pub const METHOD: &str = "mmd_permutation";

/// How the test is run: its level and its permutations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestSettings {
    pub alpha: f64,
    pub permutations: u32,
    pub seed: u64,
    /// The permutations asked for, when fewer are made to keep the test within
    /// [`MAX_STATISTICS_WORK`].
    pub reduced_from: Option<u32>,
}

/// The usable samples of one prompt: per endpoint (A, then B), in sample order.
pub type PromptSamples = [Vec<Reading>; 2];

/// What the statistics have done, for progress: the stage (`the test`, `control NAME`) and the
/// permutations it has made.
pub type Tell<'a> = &'a mut dyn FnMut(&str, u32);

/// Test A against B on every prompt and run each endpoint's control, telling `tell` each
/// permutation made.
pub fn analyse(
    items: &[Arc<Prompt>],
    names: [&str; 2],
    samples: &[PromptSamples],
    settings: TestSettings,
    tell: Tell,
) -> Distribution {
    let pairs: Vec<Samples> = items
        .iter()
        .zip(samples)
        .map(|(item, [a, b])| Samples::new(kernel(item), &keys(a.iter()), &keys(b.iter())))
        .collect();
    let pooled = mmd::test_telling(&pairs, mmd_settings(settings, 0), &mut |made| {
        tell("the test", made)
    });
    let prompts = items
        .iter()
        .zip(samples)
        .zip(&pooled.prompts)
        .map(|((item, sides), t)| prompt_test(item, sides, t))
        .collect();
    let control = names
        .iter()
        .enumerate()
        .map(|(e, name)| control(items, samples, e, name, settings, &mut *tell))
        .collect();
    let accuracy = names
        .iter()
        .enumerate()
        .map(|(e, name)| accuracy(items, samples, e, name))
        .collect();
    Distribution {
        method: METHOD.to_string(),
        method_statement: method_statement(settings),
        sample_chars: SAMPLE_CHARS,
        clipped_samples: samples
            .iter()
            .flatten()
            .flatten()
            .filter(|r| r.clipped)
            .count(),
        alpha: settings.alpha,
        permutations: settings.permutations,
        seed: settings.seed,
        statistic: pooled.statistic,
        p: pooled.p,
        prompts_tested: pooled.tested,
        verdict: verdict(pooled.p, settings.alpha),
        prompts,
        control,
        accuracy,
        accuracy_difference: accuracy_difference(items, samples),
    }
}

/// The method in one sentence.
pub fn method_statement(settings: TestSettings) -> String {
    let reduced = settings.reduced_from.map_or(String::new(), |from| {
        format!(
            " (reduced from {from} so the test stays within {MAX_STATISTICS_WORK} kernel look-ups)"
        )
    });
    format!(
        "Per prompt, the unbiased MMD² between the two endpoints' samples (graded prompts: exact \
         match on the scored answer; open prompts: cosine of character trigram counts; each \
         sample's first {SAMPLE_CHARS} characters); pooled as the sum over prompts; p from {}{reduced} \
         permutations of the endpoint labels within each prompt, all prompts permuted together \
         (seed {}), p = (b + 1) / (B + 1); different when p < {}.",
        settings.permutations, settings.seed, settings.alpha
    )
}

fn mmd_settings(settings: TestSettings, stream: u64) -> mmd::Settings {
    mmd::Settings {
        permutations: settings.permutations,
        seed: settings.seed.wrapping_add(stream),
    }
}

fn verdict(p: Option<f64>, alpha: f64) -> Verdict {
    match p {
        None => Verdict::Untested,
        Some(p) if p < alpha => Verdict::Different,
        Some(_) => Verdict::Same,
    }
}

fn keys<'a>(readings: impl Iterator<Item = &'a Reading>) -> Vec<&'a str> {
    readings.map(|r| r.key.as_str()).collect()
}

fn prompt_test(item: &Prompt, sides: &PromptSamples, t: &mmd::PromptTest) -> PromptTest {
    PromptTest {
        id: item.id.clone(),
        kind: if is_graded(item) { "graded" } else { "open" }.to_string(),
        kernel: kernel(item),
        question: item.question().to_string(),
        samples: sides.iter().map(Vec::len).collect(),
        mmd2: t.mmd2,
        p: t.p,
        accuracy: if is_graded(item) {
            sides.iter().map(|s| share_correct(s)).collect()
        } else {
            Vec::new()
        },
        top_answers: sides.iter().map(|s| top_answers(s)).collect(),
    }
}

/// The share of `readings` that are right; `None` without a graded one.
fn share_correct(readings: &[Reading]) -> Option<f64> {
    let graded: Vec<bool> = readings.iter().filter_map(|r| r.correct).collect();
    (!graded.is_empty()).then(|| graded.iter().filter(|c| **c).count() as f64 / graded.len() as f64)
}

fn top_answers(readings: &[Reading]) -> Vec<AnswerCount> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in readings {
        *counts.entry(r.key.as_str()).or_insert(0) += 1;
    }
    let mut counted: Vec<(&str, usize)> = counts.into_iter().collect();
    counted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counted
        .into_iter()
        .take(TOP_ANSWERS)
        .map(|(answer, count)| AnswerCount {
            answer: crate::text::clip(answer, ANSWER_CHARS),
            count,
        })
        .collect()
}

/// Endpoint `e` against itself: its even-numbered samples against its odd-numbered ones.
fn control(
    items: &[Arc<Prompt>],
    samples: &[PromptSamples],
    e: usize,
    name: &str,
    settings: TestSettings,
    tell: Tell,
) -> Control {
    let halves: Vec<Samples> = items
        .iter()
        .zip(samples)
        .map(|(item, sides)| {
            let even = keys(sides[e].iter().step_by(2));
            let odd = keys(sides[e].iter().skip(1).step_by(2));
            Samples::new(kernel(item), &even, &odd)
        })
        .collect();
    let stage = format!("control {name}");
    let pooled = mmd::test_telling(&halves, mmd_settings(settings, 1 + e as u64), &mut |made| {
        tell(&stage, made)
    });
    Control {
        endpoint: name.to_string(),
        statistic: pooled.statistic,
        p: pooled.p,
        prompts_tested: pooled.tested,
        different: verdict(pooled.p, settings.alpha) == Verdict::Different,
    }
}

fn accuracy(items: &[Arc<Prompt>], samples: &[PromptSamples], e: usize, name: &str) -> Accuracy {
    let graded: Vec<bool> = items
        .iter()
        .zip(samples)
        .filter(|(item, _)| is_graded(item))
        .flat_map(|(_, sides)| sides[e].iter().filter_map(|r| r.correct))
        .collect();
    let correct = graded.iter().filter(|c| **c).count();
    Accuracy {
        endpoint: name.to_string(),
        correct,
        graded: graded.len(),
        accuracy: (!graded.is_empty()).then(|| correct as f64 / graded.len() as f64),
    }
}

/// The mean per-prompt accuracy difference (A − B) with a 95% normal interval from the spread of
/// the differences over prompts; with one prompt the interval is the whole range.
fn accuracy_difference(
    items: &[Arc<Prompt>],
    samples: &[PromptSamples],
) -> Option<AccuracyDifference> {
    let diffs: Vec<f64> = items
        .iter()
        .zip(samples)
        .filter(|(item, _)| is_graded(item))
        .filter_map(|(_, [a, b])| Some(share_correct(a)? - share_correct(b)?))
        .collect();
    let k = diffs.len();
    if k == 0 {
        return None;
    }
    let mean = diffs.iter().sum::<f64>() / k as f64;
    let (low, high) = if k < 2 {
        (-1.0, 1.0)
    } else {
        let var = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
        let half = 1.96 * (var / k as f64).sqrt();
        ((mean - half).max(-1.0), (mean + half).min(1.0))
    };
    Some(AccuracyDifference {
        difference: mean,
        low,
        high,
        prompts: k,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribution::prompts::built_in;

    fn reading(key: &str, correct: Option<bool>) -> Reading {
        Reading {
            key: key.into(),
            correct,
            clipped: false,
        }
    }

    fn settings() -> TestSettings {
        TestSettings {
            alpha: 0.05,
            permutations: 200,
            seed: 9,
            reduced_from: None,
        }
    }

    /// Two items of the built-in set: a graded one and an open one.
    fn two_items() -> Vec<Arc<Prompt>> {
        let items = built_in().unwrap();
        let graded = items.iter().find(|i| is_graded(i)).unwrap().clone();
        let open = items.iter().find(|i| !is_graded(i)).unwrap().clone();
        vec![graded, open]
    }

    #[test]
    fn separate_answers_read_different_and_each_control_same() {
        let items = two_items();
        let side = |key: &str, correct: bool| -> Vec<Reading> {
            (0..10).map(|_| reading(key, Some(correct))).collect()
        };
        let open = |word: &str| -> Vec<Reading> { (0..10).map(|_| reading(word, None)).collect() };
        let samples = vec![
            [side("3", true), side("2", false)],
            [open("apple"), open("kiwi")],
        ];
        let d = analyse(&items, ["a", "b"], &samples, settings(), &mut |_, _| {});
        assert_eq!(d.verdict, Verdict::Different, "{:?}", d.p);
        assert_eq!(d.prompts_tested, 2);
        assert!(d
            .control
            .iter()
            .all(|c| !c.different && c.prompts_tested == 2));
        assert_eq!(d.prompts[0].accuracy, vec![Some(1.0), Some(0.0)]);
        assert!(d.prompts[1].accuracy.is_empty());
        assert_eq!(
            d.prompts[0].top_answers[1],
            vec![AnswerCount {
                answer: "2".into(),
                count: 10
            }]
        );
        assert_eq!((d.accuracy[0].correct, d.accuracy[0].graded), (10, 10));
        assert_eq!(d.accuracy[1].accuracy, Some(0.0));
        let diff = d.accuracy_difference.unwrap();
        assert_eq!(
            (diff.difference, diff.low, diff.high, diff.prompts),
            (1.0, -1.0, 1.0, 1)
        );
        assert!(d.method_statement.contains("200 permutations"));
    }

    #[test]
    fn the_same_answers_read_same_and_too_few_samples_untested() {
        let items = two_items();
        let mixed = || -> Vec<Reading> {
            (0..10)
                .map(|i| reading(if i % 2 == 0 { "3" } else { "4" }, Some(i % 2 == 0)))
                .collect()
        };
        let open = || -> Vec<Reading> { (0..10).map(|_| reading("pear", None)).collect() };
        let samples = vec![[mixed(), mixed()], [open(), open()]];
        let d = analyse(&items, ["a", "b"], &samples, settings(), &mut |_, _| {});
        assert_eq!(d.verdict, Verdict::Same, "{:?}", d.p);
        let diff = d.accuracy_difference.unwrap();
        assert_eq!(diff.difference, 0.0);
        let lone = vec![[vec![reading("3", Some(true))], mixed()], [vec![], open()]];
        let d = analyse(&items, ["a", "b"], &lone, settings(), &mut |_, _| {});
        assert_eq!(
            (d.verdict, d.p, d.prompts_tested),
            (Verdict::Untested, None, 0)
        );
        assert_eq!(d.prompts[1].samples, vec![0, 10]);
    }
}
