//! results.json `long_context.token_agreement` (`compare --suite long --logprobs`): each long
//! item's passage teacher-forced whole on every endpoint (`logprobs::passages`), and per pair the
//! per-token figures of `coherence logprobs` (KL over the top-k, p99 KL, same top token) bucketed
//! by the token's position in the passage, so a divergence that grows with depth shows as a
//! slope. Beside them the control: the reference against its own second request of the same
//! passages (0 on a deterministic server; above 0 it is the server's own noise floor).

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::logprobs::forced::{ForcedLine, TOP_K};
use crate::logprobs::metrics::{compare_texts, summary_of, Summary, TokenFigures};
use crate::logprobs::passages::{planned, ScoredPassage};
use crate::logprobs::run::{tokenization_problem, Problem};

/// Where each position bucket starts, in tokens from the start of the passage; the last one has
/// no end.
pub const BUCKET_STARTS: [u64; 5] = [0, 512, 2048, 8192, 32768];

/// A change of the mean KL from the first bucket to the last smaller than this share of the
/// larger of the two reads as flat.
const FLAT_SHARE: f64 = 0.1;

/// The long passages' token-level figures by position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongTokens {
    pub top_k: u32,
    /// Passages the reference scored.
    pub passages: usize,
    /// Each other endpoint against the reference.
    pub pairs: Vec<PositionPair>,
    /// The reference against its own second request of the same passages.
    pub control: PositionPair,
    /// Passages not compared: `request` (a failed scoring request, sent again on `--resume`),
    /// `unsupported`, `text_mismatch`, `alignment`, `tokenization`.
    pub problems: Vec<Problem>,
    /// Scoring requests of the run's long items never answered (an interrupted run): one per
    /// item per endpoint, and the reference's control; `--resume` sends them.
    #[serde(default)]
    pub missing: usize,
}

/// One pair's figures by position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionPair {
    pub reference: String,
    pub other: String,
    pub passages_compared: usize,
    /// Only the buckets that hold tokens, by position.
    pub buckets: Vec<PositionBucket>,
    /// Whether the mean KL grows from the first bucket to the last, and by how much.
    pub statement: String,
}

/// The tokens at positions `[from_tokens, to_tokens)` of every compared passage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionBucket {
    pub from_tokens: u64,
    /// `null` for the last bucket, which has no end.
    pub to_tokens: Option<u64>,
    #[serde(flatten)]
    pub summary: Summary,
}

impl PositionBucket {
    /// The positions it holds, as "512–2k" or "32k+".
    pub fn label(&self) -> String {
        let short = |n: u64| {
            if n >= 1024 && n % 1024 == 0 {
                format!("{}k", n / 1024)
            } else {
                n.to_string()
            }
        };
        match self.to_tokens {
            Some(to) => format!("{}–{}", short(self.from_tokens), short(to)),
            None => format!("{}+", short(self.from_tokens)),
        }
    }
}

impl LongTokens {
    /// Scoring requests that failed (a resume sends them again).
    pub fn request_failures(&self) -> usize {
        self.problems.iter().filter(|p| p.kind == "request").count()
    }
}

/// The scorings the run's long items plan (see [`planned`]) that `answered` has no line for.
fn never_answered<'a>(
    names: &'a [String],
    prompts: &'a [String],
    answered: impl Fn((&'a str, &'a str, bool)) -> bool,
) -> usize {
    let long: Vec<&String> = prompts.iter().collect();
    planned(&long, names.len())
        .filter(|(id, endpoint, control)| !answered((id.as_str(), &names[*endpoint], *control)))
        .count()
}

/// The index in [`BUCKET_STARTS`] of the bucket holding `position`.
fn bucket_of(position: usize) -> usize {
    BUCKET_STARTS
        .iter()
        .rposition(|start| position as u64 >= *start)
        .unwrap_or(0)
}

/// The newest line per (passage, endpoint, control).
enum Latest<'a> {
    Scored(&'a ScoredPassage),
    Problem(&'a Problem),
}

/// The figures of the passages in `lines` of the run's long items `prompts` (lines of other
/// items are left out); `names[0]` is the reference. `None` when no passage was teacher-forced.
pub fn analyze(names: &[String], prompts: &[String], lines: &[ForcedLine]) -> Option<LongTokens> {
    let reference = names.first()?;
    let in_run: HashSet<&str> = prompts.iter().map(String::as_str).collect();
    let mut latest: BTreeMap<(&str, &str, bool), Latest> = BTreeMap::new();
    for line in lines {
        match line {
            ForcedLine::PassageScored(s) => {
                latest.insert((&s.passage, &s.endpoint, s.control), Latest::Scored(s));
            }
            ForcedLine::PassageProblem(p) => {
                let passage = p.problem.passage.as_deref().unwrap_or_default();
                latest.insert(
                    (passage, &p.problem.endpoint, p.control),
                    Latest::Problem(&p.problem),
                );
            }
            _ => {}
        }
    }
    latest.retain(|(passage, _, _), _| in_run.contains(passage));
    if latest.is_empty() {
        return None;
    }
    let missing = never_answered(names, prompts, |key| latest.contains_key(&key));
    let mut problems: Vec<Problem> = latest
        .iter()
        .filter_map(|((_, _, control), l)| match l {
            Latest::Problem(p) if *control => Some(Problem {
                reason: format!("the control (a second request): {}", p.reason),
                ..(*p).clone()
            }),
            Latest::Problem(p) => Some((*p).clone()),
            Latest::Scored(_) => None,
        })
        .collect();
    let passages: Vec<&ScoredPassage> = latest
        .iter()
        .filter(|((_, endpoint, control), _)| endpoint == reference && !control)
        .filter_map(|(_, l)| match l {
            Latest::Scored(s) => Some(*s),
            Latest::Problem(_) => None,
        })
        .collect();
    let scored_by = |passage: &str, endpoint: &str, control: bool| match latest
        .get(&(passage, endpoint, control))
    {
        Some(Latest::Scored(s)) => Some(*s),
        _ => None,
    };
    let pairs = names
        .iter()
        .skip(1)
        .map(|other| {
            position_pair(
                reference,
                other,
                &passages,
                |passage| scored_by(passage, other, false),
                &mut problems,
            )
        })
        .collect();
    let control = position_pair(
        reference,
        reference,
        &passages,
        |passage| scored_by(passage, reference, true),
        &mut problems,
    );
    Some(LongTokens {
        top_k: TOP_K,
        passages: passages.len(),
        pairs,
        control,
        problems,
        missing,
    })
}

/// The reference's passages against `other`'s scoring of the same texts, bucketed by position;
/// a passage split into other tokens goes to `problems`.
fn position_pair<'a>(
    reference: &str,
    other: &str,
    passages: &[&ScoredPassage],
    scored: impl Fn(&str) -> Option<&'a ScoredPassage>,
    problems: &mut Vec<Problem>,
) -> PositionPair {
    let mut by_bucket: BTreeMap<usize, Vec<TokenFigures>> = BTreeMap::new();
    let mut passages_compared = 0;
    for r in passages {
        let Some(o) = scored(&r.passage).filter(|o| o.text_hash == r.text_hash) else {
            continue;
        };
        match compare_texts(&r.tokens, &o.tokens) {
            Ok(figures) => {
                passages_compared += 1;
                for (position, f) in figures.into_iter().enumerate() {
                    by_bucket.entry(bucket_of(position)).or_default().extend(f);
                }
            }
            Err(at) => problems.push(tokenization_problem(reference, other, &r.passage, &at)),
        }
    }
    let buckets: Vec<PositionBucket> = by_bucket
        .into_iter()
        .filter(|(_, f)| !f.is_empty())
        .map(|(i, f)| PositionBucket {
            from_tokens: BUCKET_STARTS[i],
            to_tokens: BUCKET_STARTS.get(i + 1).copied(),
            summary: summary_of(&f),
        })
        .collect();
    PositionPair {
        reference: reference.to_string(),
        other: other.to_string(),
        passages_compared,
        statement: slope(&buckets),
        buckets,
    }
}

/// One sentence: whether the mean KL grows from the first position bucket to the last, and by
/// how much.
fn slope(buckets: &[PositionBucket]) -> String {
    let mean = |b: &PositionBucket| b.summary.mean_kld.unwrap_or(0.0);
    let (Some(first), Some(last)) = (buckets.first(), buckets.last()) else {
        return "no tokens compared".into();
    };
    let (a, b) = (mean(first), mean(last));
    if buckets.iter().all(|x| mean(x) == 0.0) {
        return "mean KL is 0 at every position".into();
    }
    if buckets.len() == 1 {
        return format!(
            "mean KL {a:.4} nats, all at positions {}: no slope to read",
            first.label()
        );
    }
    let trend = if (b - a).abs() <= FLAT_SHARE * a.max(b) {
        "is flat with position"
    } else if b > a {
        "grows with position"
    } else {
        "falls with position"
    };
    let ratio = if a > 0.0 {
        format!(", {:.1}× the first", b / a)
    } else {
        String::new()
    };
    format!(
        "mean KL {trend}: {a:.4} nats at positions {} to {b:.4} at {} ({:+.4} nats{ratio})",
        first.label(),
        last.label(),
        b - a
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logprobs::align::Predicted;
    use crate::logprobs::passages::PassageProblem;

    /// A passage of `n` tokens whose distributions list the token at `lp` up to `change_at`
    /// and at `changed_lp` from there on.
    fn scored(endpoint: &str, control: bool, n: usize, change_at: usize) -> ForcedLine {
        let tokens = (0..n)
            .map(|i| {
                let lp: f64 = if i < change_at { -0.2 } else { -0.9 };
                Predicted {
                    token: format!(" w{i}"),
                    logprob: Some(lp),
                    top: vec![(format!(" w{i}"), lp), (" alt".into(), -2.0)],
                }
            })
            .collect();
        ForcedLine::PassageScored(ScoredPassage {
            passage: "long.1024.d050.00".into(),
            endpoint: endpoint.into(),
            control,
            text_hash: "h".into(),
            tokens,
        })
    }

    fn names() -> Vec<String> {
        vec!["a".into(), "b".into()]
    }

    fn ids() -> Vec<String> {
        vec!["long.1024.d050.00".into()]
    }

    #[test]
    fn requests_never_answered_are_missing_until_scored() {
        // The reference's passage alone: the other endpoint's and the control are missing.
        let mut lines = vec![scored("a", false, 10, usize::MAX)];
        assert_eq!(analyze(&names(), &ids(), &lines).unwrap().missing, 2);
        lines.push(scored("b", false, 10, usize::MAX));
        lines.push(scored("a", true, 10, usize::MAX));
        assert_eq!(analyze(&names(), &ids(), &lines).unwrap().missing, 0);
    }

    #[test]
    fn positions_fall_in_their_buckets() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(511), 0);
        assert_eq!(bucket_of(512), 1);
        assert_eq!(bucket_of(2047), 1);
        assert_eq!(bucket_of(8192), 3);
        assert_eq!(bucket_of(1_000_000), 4);
        let b = |from, to| PositionBucket {
            from_tokens: from,
            to_tokens: to,
            summary: Summary::default(),
        };
        assert_eq!(b(512, Some(2048)).label(), "512–2k");
        assert_eq!(b(32768, None).label(), "32k+");
    }

    #[test]
    fn a_change_past_a_position_reads_zero_before_it_and_grows_after() {
        let lines = [
            scored("a", false, 700, usize::MAX),
            scored("a", true, 700, usize::MAX),
            scored("b", false, 700, 600),
        ];
        let t = analyze(&names(), &ids(), &lines).unwrap();
        assert_eq!(t.passages, 1);
        let pair = &t.pairs[0];
        assert_eq!(pair.passages_compared, 1);
        assert_eq!(pair.buckets.len(), 2, "{pair:?}");
        assert_eq!(pair.buckets[0].summary.tokens, 512);
        assert_eq!(pair.buckets[0].summary.mean_kld, Some(0.0));
        assert_eq!(pair.buckets[1].summary.tokens, 188);
        let late = pair.buckets[1].summary.mean_kld.unwrap();
        // 100 of the 188 tokens past 600 moved.
        assert!(late > 0.0, "{late}");
        assert_eq!(pair.buckets[1].summary.top1_agreement, Some(1.0));
        assert!(
            pair.statement
                .starts_with("mean KL grows with position: 0.0000 nats at positions 0–512 to"),
            "{}",
            pair.statement
        );
        assert_eq!(t.control.other, "a");
        assert_eq!(t.control.passages_compared, 1);
        assert_eq!(t.control.statement, "mean KL is 0 at every position");
        assert!(t.problems.is_empty());
    }

    #[test]
    fn a_failed_request_counts_until_a_newer_line_scores_it() {
        let failed = ForcedLine::PassageProblem(PassageProblem {
            control: true,
            problem: Problem {
                endpoint: "a".into(),
                passage: Some("long.1024.d050.00".into()),
                kind: "request".into(),
                reason: "HTTP 500".into(),
            },
        });
        let mut lines = vec![scored("a", false, 10, 0), scored("b", false, 10, 0), failed];
        let t = analyze(&names(), &ids(), &lines).unwrap();
        assert_eq!(t.request_failures(), 1);
        assert!(
            t.problems[0].reason.starts_with("the control"),
            "{:?}",
            t.problems
        );
        assert_eq!(t.control.passages_compared, 0);
        assert_eq!(t.control.statement, "no tokens compared");
        lines.push(scored("a", true, 10, 0));
        let t = analyze(&names(), &ids(), &lines).unwrap();
        assert_eq!(t.request_failures(), 0);
        assert_eq!(t.control.passages_compared, 1);
        assert!(analyze(&names(), &ids(), &[]).is_none());
        assert!(
            analyze(&names(), &["long.512.d000.00".into()], &lines).is_none(),
            "lines of items outside the run are left out"
        );
    }

    #[test]
    fn other_tokens_are_a_tokenization_problem() {
        let mut other = scored("b", false, 10, usize::MAX);
        if let ForcedLine::PassageScored(s) = &mut other {
            s.tokens[3].token = " x".into();
        }
        let t = analyze(
            &names(),
            &ids(),
            &[scored("a", false, 10, usize::MAX), other],
        )
        .unwrap();
        assert_eq!(t.pairs[0].passages_compared, 0);
        assert_eq!(t.problems[0].kind, "tokenization");
        assert!(
            t.problems[0].reason.contains("at token 3"),
            "{:?}",
            t.problems
        );
    }
}
