//! The flips that rest on a weak read, per pair: a flip whose either side was scored from a
//! completion cut off at the token limit, from a number the answer does not tie to the question
//! (read where it ends with no answer phrase, or not stated as the answer at all), or from code
//! that did not run (`Score::weak` says which). A reader checks these first.

use serde::{Deserialize, Serialize};

use crate::analysis::answers::figures::PromptResult;
use crate::analysis::answers::kind::DivergenceKind;

/// One pair's flips that rest on a weak read, in prompt order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairWeakReads {
    pub reference: String,
    pub other: String,
    pub flips: Vec<WeakFlip>,
}

/// One side of one flip scored from a weak read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeakFlip {
    pub prompt: String,
    /// The endpoint whose score rests on the weak read.
    pub endpoint: String,
    pub reason: String,
}

/// Per pair of the reference with another endpoint, its flips with a weak read on either side;
/// pairs with none are left out.
pub fn weak_reads(prompts: &[PromptResult], names: &[String]) -> Vec<PairWeakReads> {
    let Some((reference, others)) = names.split_first() else {
        return Vec::new();
    };
    others
        .iter()
        .map(|other| PairWeakReads {
            reference: reference.clone(),
            other: other.clone(),
            flips: prompts
                .iter()
                .filter(|p| is_flip(p, other))
                .flat_map(|p| weak_sides(p, [reference, other]))
                .collect(),
        })
        .filter(|pair| !pair.flips.is_empty())
        .collect()
}

/// The prompt's pair with `other` is a flip.
fn is_flip(p: &PromptResult, other: &str) -> bool {
    p.pairs
        .iter()
        .any(|x| x.other == other && x.kind == Some(DivergenceKind::Flip))
}

/// The sides, of these two endpoints, whose score on `p` rests on a weak read.
fn weak_sides<'a>(
    p: &'a PromptResult,
    endpoints: [&'a String; 2],
) -> impl Iterator<Item = WeakFlip> + 'a {
    endpoints.into_iter().filter_map(move |name| {
        let reason = p.answers.get(name)?.weak.as_ref()?;
        Some(WeakFlip {
            prompt: p.id.clone(),
            endpoint: name.clone(),
            reason: reason.clone(),
        })
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::analysis::{AnswerResult, PairResult, Verdict};

    const NAMES: [&str; 3] = ["ref", "a", "b"];

    fn side(weak: Option<&str>) -> AnswerResult {
        AnswerResult {
            weak: weak.map(str::to_string),
            ..AnswerResult::default()
        }
    }

    fn pair(other: &str, kind: Option<DivergenceKind>) -> PairResult {
        PairResult {
            reference: NAMES[0].into(),
            other: other.into(),
            verdict: if kind.is_some() {
                Verdict::Diff
            } else {
                Verdict::Same
            },
            reason: String::new(),
            similarity: None,
            kind,
            difference: None,
            first_divergence: None,
            token_divergence: None,
        }
    }

    /// A prompt whose pair with `a` is of `kind_a` and with `b` is a flip, each side's weak read.
    fn prompt(id: &str, kind_a: Option<DivergenceKind>, weak: [Option<&str>; 3]) -> PromptResult {
        PromptResult {
            id: id.into(),
            category: "c".into(),
            question: String::new(),
            expected: "1".into(),
            scorer: "numeric".into(),
            verdict: Verdict::Diff,
            pairs: vec![pair("a", kind_a), pair("b", Some(DivergenceKind::Flip))],
            answers: NAMES
                .iter()
                .zip(weak)
                .map(|(n, w)| (n.to_string(), side(w)))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn each_pair_lists_its_flips_with_a_weak_side() {
        let names: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
        let prompts = [
            prompt(
                "p1",
                Some(DivergenceKind::Flip),
                [Some("cut off at the token limit"), None, None],
            ),
            prompt(
                "p2",
                Some(DivergenceKind::Answer),
                [None, Some("the only number, with no answer phrase"), None],
            ),
            prompt("p3", None, [None, None, None]),
        ];
        let got = weak_reads(&prompts, &names);
        let flip = |prompt: &str, endpoint: &str, reason: &str| WeakFlip {
            prompt: prompt.into(),
            endpoint: endpoint.into(),
            reason: reason.into(),
        };
        // p2's weak side is on an `answer` diff with a and takes no part in the flip with b.
        assert_eq!(
            got,
            vec![
                PairWeakReads {
                    reference: "ref".into(),
                    other: "a".into(),
                    flips: vec![flip("p1", "ref", "cut off at the token limit")],
                },
                PairWeakReads {
                    reference: "ref".into(),
                    other: "b".into(),
                    flips: vec![flip("p1", "ref", "cut off at the token limit")],
                },
            ]
        );
        assert!(weak_reads(&prompts[2..], &names).is_empty());
        let json = serde_json::to_value(&got[0]).unwrap();
        assert_eq!(json["flips"][0]["endpoint"], "ref");
        // A score without a weak read writes no `weak` key: older results.json stay comparable.
        let plain = serde_json::to_value(side(None)).unwrap();
        assert!(plain.get("weak").is_none(), "{plain}");
        let weak = serde_json::to_value(side(Some("cut off at the token limit"))).unwrap();
        assert_eq!(weak["weak"], "cut off at the token limit");
    }
}
