//! From saved records to results: score every answer, summarise repeats, decide verdicts, tell
//! sampler noise from deployment differences, paired statistics, the exit gate. Pure: no network,
//! no printing. [`Inputs`] reads a run folder once; [`analyze`] builds the whole `Results` from it,
//! completeness included.

pub mod answers;
pub mod assembly;
pub mod behaviour;
pub mod identity;
pub mod long;
pub mod stability;

use chrono::Utc;

pub use answers::determinism::{Class, Determinism, RepeatDivergence, FAILED_KEY};
pub use answers::divergence::Divergence;
pub use answers::figures::*;
pub use answers::inputs::Inputs;
pub use answers::kind::DivergenceKind;
pub use answers::noise::Difference;
pub use answers::similarity::SAME_SIMILARITY;
pub use answers::stats::{format_p, mcnemar_exact, wilson, McNemarCounts, Paired, Proportion};
pub use answers::verdict::Verdict;
pub use assembly::results::*;
pub use behaviour::quality::{Interval, Quality, QualityVerdict, DEFAULT_MARGIN_POINTS};
pub use behaviour::rounds::Rounds;
use behaviour::same_model::Behaviour;
pub use behaviour::same_model::{headline as same_model_headline, BehaviourVerdict, SameModel};
use behaviour::sequential::SequentialVerdict;
pub use behaviour::weak_reads::{weak_reads, PairWeakReads};
use identity::token_agreement::analyze_forcing;
pub use identity::token_agreement::TeacherForcing;
use stability::load::{analyze_load, LoadResults};
pub use stability::samples::DivergenceUnit;
pub use stability::under_load::UnderLoad;

use crate::catalogue::Suite;
use crate::gate::Gate;
use crate::run::Manifest;
use crate::score::ScoreContext;
use answers::per_prompt::prompt_results;
pub use assembly::run_figures::pair_families;
use assembly::run_figures::{back_to_back_warning, other_budgets, roll_up};
use assembly::tool_calls::ToolCalls;
use behaviour::families::PairFamilies;

/// "Same model?" from the pairs' figures; the sequential decisions count only in an
/// `--until-decided` run (stopping on a look would invalidate the fixed-sample verdict there).
fn same_model_answer(
    manifest: &Manifest,
    figures: &assembly::run_figures::RunFigures,
    families: &[PairFamilies],
    sequential: &[behaviour::decision::PairSequential],
) -> behaviour::same_model::Answer {
    behaviour::same_model::decide(behaviour::same_model::Evidence {
        quality: &figures.quality,
        sequential: if manifest.until_decided.is_some() {
            sequential
        } else {
            &[]
        },
        families,
    })
}

/// Failed requests and missing answers over every phase: the answers, the probes, teacher
/// forcing and the long suite's token agreement.
fn failed_and_missing(
    answers: &answers::per_prompt::PromptResults,
    inputs: &Inputs,
    load: &LoadResults,
    teacher_forcing: Option<&TeacherForcing>,
    long: &long::long_figures::LongContext,
) -> (usize, usize) {
    let long_tokens = long.token_agreement.as_ref();
    let (control_failed, control_missing) =
        identity::numerics::control_gaps(&inputs.records, inputs.manifest);
    let failed = answers.request_failures
        + load.probe_failures
        + teacher_forcing.map_or(0, TeacherForcing::request_failures)
        + long_tokens.map_or(0, long::long_tokens::LongTokens::request_failures)
        + control_failed;
    let missing = answers.missing
        + inputs.probes_missing
        + long_tokens.map_or(0, |t| t.missing)
        + control_missing;
    (failed, missing)
}

/// The behaviour axis from the quality answer: refuted where the tool calls or the long suite
/// part, and, for a selected sample, saying so second.
fn behaviour_of(
    mut answer: behaviour::same_model::Answer,
    tool_calls: Option<&ToolCalls>,
    long: &long::long_figures::LongContext,
    manifest: &Manifest,
    prompts: &[PromptResult],
    generated: &dyn Fn(&str) -> bool,
) -> Behaviour {
    if let Some(t) = tool_calls {
        answer.refuted_by(t.reasons());
    }
    long::long_context::amend(&mut answer, long);
    let names = manifest.endpoint_names();
    if behaviour::selection::is_selected(manifest) && names.len() > 1 {
        let at = answer.because.len().min(1);
        let reason =
            behaviour::selection::selected_reason(prompts, generated, &names[0], &names[1..]);
        answer.because.insert(at, reason);
    }
    Behaviour::of(&answer)
}

/// The sampling the run's manifest states, with the budgets other than the default that were used.
fn run_sampling(inputs: &Inputs, prompts: &[PromptResult]) -> RunSampling {
    let manifest = inputs.manifest;
    RunSampling {
        temperature: manifest.sampling.temperature,
        stream: manifest.sampling.stream,
        max_tokens: manifest.sampling.default_max_tokens,
        max_tokens_override: manifest.sampling.max_tokens_override,
        other_budgets: other_budgets(inputs.catalogue, manifest, prompts),
        repeats: manifest.repeats,
        params: manifest.sampling.params.clone(),
        logprobs: manifest.sampling.logprobs_note.clone(),
    }
}

/// The whole results of a run from its inputs: every answer scored and compared, the probe
/// phases and teacher forcing analysed, the roll-ups, the gate, and whether the run is complete
/// (decided here and nowhere else: nothing missing, and no failed request among the answers,
/// the probes or the teacher-forcing requests).
pub fn analyze(inputs: &Inputs, gate: &Gate, margin: f64) -> Results {
    let (catalogue, manifest) = (inputs.catalogue, inputs.manifest);
    let ctx = ScoreContext::for_catalogue(&catalogue.dir);
    let names = manifest.endpoint_names();
    let answers = prompt_results(inputs, &names, &ctx);
    let load = if inputs.probes.is_empty() {
        LoadResults::default()
    } else {
        analyze_load(catalogue, &names, &manifest.prompts, &inputs.probes, &ctx)
    };
    let (token_agreement, teacher_forcing) =
        analyze_forcing(catalogue, &names, &manifest.prompts, &inputs.forcing);
    let mut warnings = inputs.warnings.clone();
    warnings.extend(answers.warnings.iter().cloned());
    warnings.extend(back_to_back_warning(&answers.prompts));
    let mut figures = roll_up(&answers.prompts, manifest, &inputs.records, &names, margin);
    let expected = |p: &PromptResult| catalogue.get(&p.id).and_then(|c| c.score.expected_answer());
    let families: Vec<PairFamilies> = figures
        .statistics
        .iter()
        .map(|s| pair_families(s, &answers.prompts, expected))
        .collect();
    let generated = |id: &str| catalogue.suite_of(id) == Some(Suite::Generated);
    let sequential = behaviour::decision::decide_pairs(
        &answers.prompts,
        &generated,
        &names,
        margin,
        &manifest.looks,
    );
    for q in &mut figures.quality {
        let pair = sequential
            .iter()
            .find(|s| s.reference == q.reference && s.other == q.other);
        if let Some(s) = pair.filter(|s| s.decision.verdict == SequentialVerdict::Undecided) {
            q.project_sequentially(s.decision.more_items_to_decide);
        }
    }
    let tool_calls = assembly::tool_calls::analyze(&answers.tool_items, &names);
    let clipped = answers.clipped + tool_calls.as_ref().map_or(0, ToolCalls::clipped_texts);
    warnings.extend(answers::quote::warning(clipped));
    let mut long = long::long_context::analyze(&answers.prompts, &names);
    let long_items: Vec<String> = (manifest.prompts.iter())
        .filter(|id| catalogue.suite_of(id) == Some(Suite::Long))
        .cloned()
        .collect();
    long.token_agreement = long::long_tokens::analyze(&names, &long_items, &inputs.forcing);
    let (request_failures, missing) =
        failed_and_missing(&answers, inputs, &load, teacher_forcing.as_ref(), &long);
    let mut behaviour = behaviour_of(
        same_model_answer(manifest, &figures, &families, &sequential),
        tool_calls.as_ref(),
        &long,
        manifest,
        &answers.prompts,
        &generated,
    );
    let difficulty = behaviour::difficulty::of(manifest);
    behaviour::difficulty::amend(&mut behaviour, &difficulty, &families);
    let identity = identity::numerics::decide(
        &inputs.records,
        &names,
        &manifest.prompts,
        &figures.parity,
        identity::numerics::setting_of(manifest),
    )
    .map(|mut i| {
        i.control_growth = identity::numerics::growth_of(manifest);
        i
    });
    let answer = behaviour::same_model::combine(identity.as_ref(), &behaviour);
    let gate = assembly::gate_check::evaluate(
        gate,
        &figures,
        &load,
        &assembly::gate_check::SameModelFigures {
            answer: &answer,
            families: &families,
            tool_calls: tool_calls.as_ref(),
            long: &long,
            identity: identity.as_ref(),
        },
    );
    figures.summary.same_model = Some(answer.answer);
    figures.summary.same_model_because = answer.because;
    figures.summary.identity = identity;
    figures.summary.behaviour = Some(behaviour);
    let complete = request_failures == 0 && missing == 0;
    let until_decided = behaviour::decision::until_decided(
        manifest,
        &generated,
        &sequential,
        &figures.parity,
        complete,
    );
    Results {
        schema_version: SCHEMA_VERSION,
        tool: crate::run_folder::tool_version(),
        generated_at: Utc::now(),
        reference: names.first().cloned().unwrap_or_default(),
        sampling: run_sampling(inputs, &answers.prompts),
        endpoints: figures.endpoints,
        summary: figures.summary,
        nondeterministic: figures.nondeterministic,
        deployment_differences: figures.deployment_differences,
        complete,
        request_failures,
        missing,
        categories: figures.categories,
        quality: figures.quality,
        stability: figures.stability,
        identity: figures.identity,
        parity: figures.parity,
        token_divergences: figures.token_divergences,
        token_agreement,
        teacher_forcing,
        statistics: figures.statistics,
        families,
        sequential,
        until_decided,
        weak_reads: weak_reads(&answers.prompts, &names),
        difficulty,
        tool_calls,
        long_context: (!long.cells.is_empty()).then_some(long),
        gate,
        prompts: answers.prompts,
        warnings,
        load,
    }
}
