//! `token_agreement` of a `compare --logprobs` run: from `teacher_forcing.jsonl`, each other
//! endpoint's teacher-forced distributions over the reference's completions against the
//! reference's own, per prompt, per category and overall (the figures of `coherence logprobs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::catalogue::Catalogue;
use crate::logprobs::corpus::Passage;
use crate::logprobs::forced::{ForcedLine, ScoredCompletion, TOP_K};
use crate::logprobs::run::{pair, EndpointInfo, PairFigures, Problem, Scored, SelfConsistency};

/// How the run was teacher-forced: what each endpoint supports, and what could not be scored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TeacherForcing {
    pub top_k: u32,
    /// Prompts whose reference completion the reference itself scored.
    pub prompts_scored: usize,
    pub endpoints: Vec<EndpointInfo>,
    pub self_consistency: Vec<SelfConsistency>,
    /// `request`, `text_mismatch`, `tokenization`, `template` (the rendered chat prompt is not
    /// what the endpoint saw), `no_template` (a chat prompt, and no `--chat-template`).
    pub problems: Vec<Problem>,
}

impl TeacherForcing {
    /// Scoring requests that failed (a resume sends them again).
    pub fn request_failures(&self) -> usize {
        self.problems.iter().filter(|p| p.kind == "request").count()
    }
}

/// What one invocation established about an endpoint for one condition.
type Established<'a> = (&'a EndpointInfo, &'a Option<SelfConsistency>);

enum Latest<'a> {
    Scored(&'a ScoredCompletion),
    Problem(&'a Problem),
}

/// The pair figures and the teacher-forcing account; nothing when the run was not teacher-forced.
pub fn analyze_forcing(
    catalogue: &Catalogue,
    names: &[String],
    prompts: &[String],
    lines: &[ForcedLine],
) -> (Vec<PairFigures>, Option<TeacherForcing>) {
    let Some(reference) = names.first() else {
        return (Vec::new(), None);
    };
    if lines.is_empty() {
        return (Vec::new(), None);
    }
    let mut endpoints: BTreeMap<(&str, Option<&str>), Established> = BTreeMap::new();
    let mut latest: BTreeMap<(&str, &str), Latest> = BTreeMap::new();
    for line in lines {
        match line {
            ForcedLine::Endpoint {
                info,
                self_consistency,
            } => {
                endpoints.insert(
                    (&info.name, info.condition.as_deref()),
                    (info, self_consistency),
                );
            }
            ForcedLine::Scored(s) => {
                latest.insert((&s.prompt, &s.endpoint), Latest::Scored(s));
            }
            ForcedLine::Problem(p) => {
                let prompt = p.passage.as_deref().unwrap_or_default();
                latest.insert((prompt, &p.endpoint), Latest::Problem(p));
            }
            // The long suite's passages: results.json `long_context.token_agreement`.
            ForcedLine::PassageScored(_) | ForcedLine::PassageProblem(_) => {}
        }
    }
    let mut problems: Vec<Problem> = Vec::new();
    let mut passages = Vec::new();
    let mut reference_hashes = Vec::new();
    for id in prompts {
        match latest.get(&(id.as_str(), reference.as_str())) {
            Some(Latest::Scored(s)) => {
                passages.push(Passage {
                    id: id.clone(),
                    category: catalogue
                        .get(id)
                        .map_or_else(|| "uncategorised".into(), |p| p.category.clone()),
                    text: String::new(),
                });
                reference_hashes.push(s.text_hash.clone());
            }
            Some(Latest::Problem(p)) => problems.push((*p).clone()),
            None => {}
        }
    }
    let scored_by = |name: &str| -> Vec<Scored> {
        passages
            .iter()
            .zip(&reference_hashes)
            .map(|(p, hash)| match latest.get(&(p.id.as_str(), name)) {
                Some(Latest::Scored(s)) if s.text_hash == *hash => Ok(s.tokens.clone()),
                Some(Latest::Scored(_)) => Err(("stale", "scored a different completion".into())),
                Some(Latest::Problem(p)) => Err(("problem", p.reason.clone())),
                None => Err(("missing", "not scored".into())),
            })
            .collect()
    };
    let reference_scored = scored_by(reference);
    let mut pairs = Vec::new();
    for other in names.iter().skip(1) {
        for p in &passages {
            if let Some(Latest::Problem(x)) = latest.get(&(p.id.as_str(), other.as_str())) {
                problems.push((*x).clone());
            }
        }
        let other_scored = scored_by(other);
        pairs.push(pair(
            reference,
            other,
            &passages,
            Some(&reference_scored),
            Some(&other_scored),
            &mut problems,
        ));
    }
    let (infos, self_consistency): (Vec<EndpointInfo>, Vec<Option<SelfConsistency>>) = names
        .iter()
        .flat_map(|n| {
            endpoints
                .iter()
                .filter(move |((name, _), _)| name == n)
                .map(|(_, (i, s))| ((*i).clone(), (*s).clone()))
        })
        .unzip();
    let forcing = TeacherForcing {
        top_k: TOP_K,
        prompts_scored: passages.len(),
        endpoints: infos,
        self_consistency: self_consistency.into_iter().flatten().collect(),
        problems,
    };
    (pairs, Some(forcing))
}
