//! The running state of `compare --until-decided`: each round's answers scored once, when the
//! round ends, into the per-prompt results so far, and the sequential decision and prompt-token
//! parity read from those after every round. A round costs its own answers; the whole run is
//! scored once, when it ends.

use std::collections::HashSet;

use super::decision::{decide_pairs, PairSequential};
use super::sequential::SequentialVerdict;
use crate::analysis::answers::figures::PromptResult;
use crate::analysis::answers::inputs::Inputs;
use crate::analysis::answers::per_prompt::prompt_results;
use crate::analysis::identity::parity::parity;
use crate::catalogue::{Catalogue, Suite};
use crate::run::record::Answered;
use crate::run::Manifest;
use crate::score::ScoreContext;

/// What the rounds so far show.
#[derive(Debug)]
pub struct Rounds {
    names: Vec<String>,
    margin: f64,
    /// The generated items among the prompts so far.
    generated: HashSet<String>,
    /// Every prompt of the rounds so far, scored, in the order the run covers them.
    prompts: Vec<PromptResult>,
    /// No answer is missing and no request failed so far.
    complete: bool,
    /// How many of the run's records the rounds so far have read: a round reads only those
    /// that came after.
    read: usize,
}

impl Rounds {
    /// No round yet, for the endpoints `names` (the reference first) at `margin` points.
    pub fn new(names: Vec<String>, margin: f64) -> Self {
        Rounds {
            names,
            margin,
            prompts: Vec::new(),
            generated: HashSet::new(),
            complete: true,
            read: 0,
        }
    }

    /// Score the round's prompts `round` from their answers among `records` (the run's, as
    /// scoring keeps them, in the order they arrived: those after the last round's are this
    /// round's), as the run's `manifest` plans them.
    pub fn add(
        &mut self,
        manifest: &Manifest,
        catalogue: &Catalogue,
        round: &[String],
        records: &[Answered],
    ) {
        let ids: HashSet<&str> = round.iter().map(String::as_str).collect();
        self.generated.extend(
            round
                .iter()
                .filter(|id| catalogue.suite_of(id) == Some(Suite::Generated))
                .cloned(),
        );
        let round_manifest = Manifest {
            prompts: round.to_vec(),
            ..manifest.clone()
        };
        let inputs = Inputs {
            manifest: &round_manifest,
            catalogue,
            records: records[self.read.min(records.len())..]
                .iter()
                .filter(|r| ids.contains(&*r.prompt))
                .cloned()
                .collect(),
            probes: Vec::new(),
            probes_missing: 0,
            forcing: Vec::new(),
            warnings: Vec::new(),
        };
        self.read = records.len();
        let ctx = ScoreContext::for_catalogue(&catalogue.dir);
        let scored = prompt_results(&inputs, &self.names, &ctx);
        self.complete &= scored.missing == 0 && scored.request_failures == 0;
        self.prompts.extend(scored.prompts);
    }

    /// Every answer so far arrived (a failed request or a missing answer stops the rounds).
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Each pair's sequential decision over the generated items so far.
    pub fn sequential(&self) -> Vec<PairSequential> {
        let generated = |id: &str| self.generated.contains(id);
        decide_pairs(&self.prompts, &generated, &self.names, self.margin, &[])
    }

    /// Every pair is decided: its sequential verdict is reached, or the two endpoints already
    /// count different prompt tokens for the same prompts (another tokenizer or chat template:
    /// `same_model` is `no` whatever more items would show). That evidence is deterministic, not
    /// a test looked at after each round, so stopping on it costs no error rate; the per-family
    /// tests are fixed-sample tests and are not stopped on.
    pub fn decided(&self) -> bool {
        let sequential = self.sequential();
        !sequential.is_empty()
            && sequential.iter().all(|s| {
                s.decision.verdict != SequentialVerdict::Undecided
                    || parity(&self.prompts, &s.reference, &s.other).prompt_tokens_mismatches > 0
            })
    }

    /// "b: −1.2 points, equivalence bounds [−4.0, +1.6]" for each pair still undecided.
    pub fn undecided_pairs(&self) -> String {
        self.sequential()
            .iter()
            .filter(|s| s.decision.verdict == SequentialVerdict::Undecided)
            .map(|s| {
                format!(
                    "{}: {:+.1} points, equivalence bounds [{:+.1}, {:+.1}]",
                    s.other,
                    s.decision.difference_points,
                    s.decision.equivalence_lower_points,
                    s.decision.equivalence_upper_points
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}
