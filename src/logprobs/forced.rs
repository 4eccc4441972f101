//! Teacher forcing for a compare run (`compare --logprobs`): every endpoint re-scores the
//! reference's own completion of each prompt with prompt logprobs, one request per completion per
//! endpoint within the run's concurrency (on `engine::drive`), journalled to `teacher_forcing.jsonl` so a killed run
//! keeps what was scored and a resumed one sends only what is missing. With `--suite long` the
//! long items' passages go the same way (`passages`): each scored whole as plain text on every
//! endpoint, and a second time on the reference as the control.
//!
//! A chat prompt is scored as the chat template's rendering of its messages followed by the
//! completion (`--chat-template`, kept in the run folder as `chat_template.json`); the rendering
//! is checked against each endpoint's own chat request: the tokens the scoring request counted,
//! less the completion's, must equal the `usage.prompt_tokens` of the chat answer, else that
//! prompt is refused on that endpoint (a `template` problem) rather than scored under a prompt the
//! endpoint never saw.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::align::{lookup, predicted, suffix_span, Predicted};
use super::mode::{score_counted, Mode};
use super::passages::{is_planned, long_passages, PassageProblem, ScoredPassage};
use super::run::{establish, EndpointInfo, LogprobsSettings, Problem, SelfConsistency};
use super::template::ChatTemplate;
use crate::catalogue::{Message, Prompt, PromptRequest, Role};
use crate::engine::{drive, interrupted, Keep, Lane, Progress, Tally};
use crate::run::journal::{self, effective};
use crate::run::request::short_hash;
use crate::run::{Line, Record, RunPlan, Target};
use crate::run_folder::{compare, JsonLines, Lines};

/// Logprobs listed per position when teacher forcing a compare run.
pub const TOP_K: u32 = 10;
/// Tokens each self-consistency prompt generates.
const SELF_CHECK_TOKENS: u32 = 16;

/// One line of `teacher_forcing.jsonl`. The newest line per (prompt, endpoint) and per endpoint
/// wins.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "snake_case")]
pub enum ForcedLine {
    /// What was established about an endpoint in one invocation.
    Endpoint {
        info: EndpointInfo,
        self_consistency: Option<SelfConsistency>,
    },
    Scored(ScoredCompletion),
    Problem(Problem),
    /// A long item's passage scored (`--suite long`).
    PassageScored(ScoredPassage),
    PassageProblem(PassageProblem),
}

/// A problem of this kind is tried again by the next invocation: a failed request, an endpoint
/// that lacked prompt logprobs, a chat prompt without a template.
fn retried(kind: &str) -> bool {
    matches!(kind, "request" | "unsupported" | "no_template")
}

/// One text on one endpoint: (what it is scored for, prompt id, endpoint).
type Slot = (Purpose, String, String);

impl ForcedLine {
    /// The slot a scored line fills, with the hash of the text it scored.
    fn scored(&self) -> Option<(Slot, &str)> {
        match self {
            ForcedLine::Scored(s) => Some((
                (Purpose::Completion, s.prompt.clone(), s.endpoint.clone()),
                &s.text_hash,
            )),
            ForcedLine::PassageScored(s) => Some((
                (
                    Purpose::passage(s.control),
                    s.passage.clone(),
                    s.endpoint.clone(),
                ),
                &s.text_hash,
            )),
            _ => None,
        }
    }

    /// The slot a problem line refuses for a reason a retry cannot change.
    fn refused(&self) -> Option<Slot> {
        let (purpose, p) = match self {
            ForcedLine::Problem(p) => (Purpose::Completion, p),
            ForcedLine::PassageProblem(x) => (Purpose::passage(x.control), &x.problem),
            _ => return None,
        };
        (!retried(&p.kind)).then(|| {
            (
                purpose,
                p.passage.clone().unwrap_or_default(),
                p.endpoint.clone(),
            )
        })
    }
}

/// The reference's completion of one prompt, scored by one endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredCompletion {
    pub prompt: String,
    pub endpoint: String,
    /// The first 16 hex digits of the sha256 of the scored text: lines of different texts are
    /// never compared.
    pub text_hash: String,
    /// Tokens of the rendered prompt, as the scoring request counted them (`null`: not counted).
    pub prompt_tokens: Option<u64>,
    /// Each completion token with the distribution that predicts it (offset applied).
    pub tokens: Vec<Predicted>,
}

/// What a text is scored for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Purpose {
    /// The reference's completion of a prompt, behind its rendered prompt, on every endpoint.
    Completion,
    /// A long item's passage, whole, on every endpoint.
    Passage,
    /// The same passage a second time, on the reference only: its own noise floor.
    Control,
}

impl Purpose {
    fn passage(control: bool) -> Purpose {
        if control {
            Purpose::Control
        } else {
            Purpose::Passage
        }
    }
}

/// One text to score: the reference's completion of a prompt behind its rendered prompt, or a
/// long item's passage.
#[derive(Debug, Clone)]
struct Text {
    prompt: String,
    text: String,
    /// The end of the text whose tokens are compared: the completion, or the whole passage.
    completion: String,
    hash: String,
    /// Rendered with the chat template, or plain text.
    condition: PromptForm,
    purpose: Purpose,
}

impl Text {
    /// The line saying this text could not be scored on `endpoint`.
    fn problem(&self, endpoint: &str, kind: &str, reason: String) -> ForcedLine {
        let problem = Problem {
            endpoint: endpoint.to_string(),
            passage: Some(self.prompt.clone()),
            kind: kind.into(),
            reason,
        };
        match self.purpose {
            Purpose::Completion => ForcedLine::Problem(problem),
            Purpose::Passage | Purpose::Control => ForcedLine::PassageProblem(PassageProblem {
                control: self.purpose == Purpose::Control,
                problem,
            }),
        }
    }

    fn slot(&self, endpoint: &str) -> Slot {
        (self.purpose, self.prompt.clone(), endpoint.to_string())
    }
}

/// One scoring request: the text, how the endpoint is read for its condition, and the prompt
/// tokens the endpoint's own chat answer counted.
struct ScoringJob<'a> {
    /// The index of the endpoint.
    target: usize,
    text: &'a Text,
    mode: Mode,
    offset: usize,
    chat_prompt_tokens: Option<u64>,
}

/// The two ways a text starts, each with its own self-consistency check: a server's position
/// offset can depend on it (llama-cpp-python drops a leading BOS token from echo, which aligns
/// the listing that is otherwise one position off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PromptForm {
    Plain,
    Chat,
}

impl PromptForm {
    fn label(self) -> &'static str {
        match self {
            PromptForm::Plain => "plain",
            PromptForm::Chat => "chat",
        }
    }
}

/// The usable answer of the lowest repeat of `prompt` on `endpoint`.
fn first_answer<'a>(
    slots: &BTreeMap<journal::Slot, &'a Record>,
    prompt: &str,
    endpoint: &str,
) -> Option<&'a Record> {
    slots
        .iter()
        .filter(|(s, r)| s.prompt == prompt && s.endpoint == endpoint && r.is_usable())
        .map(|(_, r)| *r)
        .find(|r| {
            r.completion
                .content
                .as_deref()
                .is_some_and(|c| !c.is_empty())
        })
}

/// Whether `lines` already hold a `kind` problem for `prompt` on `endpoint`.
fn journalled_problem(lines: &[ForcedLine], prompt: &str, endpoint: &str, kind: &str) -> bool {
    lines.iter().any(|l| {
        matches!(l, ForcedLine::Problem(p)
            if p.passage.as_deref() == Some(prompt) && p.endpoint == endpoint && p.kind == kind)
    })
}

/// The text a prompt is teacher-forced with, or why it cannot be.
fn forced_text(
    prompt: &Prompt,
    completion: &str,
    template: Option<&ChatTemplate>,
) -> Result<Text, (&'static str, String)> {
    let (rendered, condition) = match &prompt.request {
        PromptRequest::Completion { prompt } => (prompt.clone(), PromptForm::Plain),
        PromptRequest::Chat { messages } => match template {
            Some(t) => (
                t.render(messages)
                    .map_err(|e| ("template", format!("the chat template failed: {e}")))?,
                PromptForm::Chat,
            ),
            None => {
                return Err((
                    "no_template",
                    "a chat prompt needs --chat-template FILE (the model's GGUF file, its tokenizer_config.json or a Jinja template) to be teacher-forced".into(),
                ))
            }
        },
    };
    let text = format!("{rendered}{completion}");
    Ok(Text {
        prompt: prompt.id.clone(),
        hash: short_hash(text.as_bytes()),
        completion: completion.to_string(),
        text,
        condition,
        purpose: Purpose::Completion,
    })
}

/// Each long item's passage in scope as plain text, to score on every endpoint, then every
/// passage again as the reference's control: queued after the others, so that a server that
/// keeps only its last prompt's state (llama-cpp-python) computes the control afresh rather than
/// reading back what it just computed.
fn passage_texts(plan: &RunPlan) -> Vec<Text> {
    let passages = long_passages(plan);
    [Purpose::Passage, Purpose::Control]
        .into_iter()
        .flat_map(|purpose| {
            passages.iter().map(move |(prompt, text)| Text {
                prompt: prompt.clone(),
                text: text.clone(),
                completion: text.clone(),
                hash: short_hash(text.as_bytes()),
                condition: PromptForm::Plain,
                purpose,
            })
        })
        .collect()
}

/// The share of tokens listed in the top-k that predicts them: near 1 for a greedy completion
/// read at the right offset, low at the wrong one.
fn listed_share(tokens: &[Predicted]) -> f64 {
    let listed = tokens
        .iter()
        .filter(|p| lookup(&p.top, &p.token).is_some())
        .count();
    listed as f64 / tokens.len().max(1) as f64
}

/// Score one text on one endpoint and check the rendering against its chat request.
async fn score_one(
    target: &Target,
    mode: Mode,
    offset: usize,
    t: &Text,
    chat_prompt_tokens: Option<u64>,
) -> ForcedLine {
    let problem = |kind: &str, reason: String| t.problem(&target.name, kind, reason);
    let scoring = match score_counted(&target.client, &target.model, mode, &t.text, TOP_K).await {
        Ok(s) => s,
        Err(e) => return problem("request", e),
    };
    let span = match suffix_span(&scoring.positions, &t.completion) {
        Ok(s) => s,
        Err(m) => return problem("text_mismatch", m.to_string()),
    };
    let prompt_tokens = scoring
        .prompt_tokens
        .map(|n| n.saturating_sub(span.len as u64));
    if let (Some(rendered), Some(chat)) = (prompt_tokens, chat_prompt_tokens) {
        if rendered != chat {
            return problem(
                "template",
                format!(
                    "the rendered prompt is {rendered} tokens where the chat request counted {chat}: the chat template does not reproduce what this endpoint saw"
                ),
            );
        }
    }
    let tokens = predicted(&scoring.positions, span, offset);
    let other = predicted(&scoring.positions, span, 1 - offset.min(1));
    let (listed, listed_other) = (listed_share(&tokens), listed_share(&other));
    if listed < 0.5 && listed_other > listed + 0.25 {
        return problem(
            "alignment",
            format!(
                "under the offset the self-consistency check found ({offset}), {:.0}% of the completion's tokens are in the top-{TOP_K} that predicts them, {:.0}% under the other: this text is not aligned as the check prompts were; not compared",
                listed * 100.0,
                listed_other * 100.0
            ),
        );
    }
    match t.purpose {
        Purpose::Completion => ForcedLine::Scored(ScoredCompletion {
            prompt: t.prompt.clone(),
            endpoint: target.name.clone(),
            text_hash: t.hash.clone(),
            prompt_tokens,
            tokens,
        }),
        Purpose::Passage | Purpose::Control => ForcedLine::PassageScored(ScoredPassage {
            passage: t.prompt.clone(),
            endpoint: target.name.clone(),
            control: t.purpose == Purpose::Control,
            text_hash: t.hash.clone(),
            tokens,
        }),
    }
}

/// The slots already scored, each with its text's hash: they are done.
fn scored_keys(lines: &[ForcedLine]) -> HashSet<(Slot, String)> {
    lines
        .iter()
        .filter_map(ForcedLine::scored)
        .map(|(slot, hash)| (slot, hash.to_string()))
        .collect()
}

/// The slots refused for a reason a retry cannot change; failed requests (and endpoints that
/// lacked prompt logprobs, or a chat template) are tried again.
fn refused_keys(lines: &[ForcedLine]) -> HashSet<Slot> {
    lines.iter().filter_map(ForcedLine::refused).collect()
}

/// The text of every prompt in scope the reference answered; a prompt that cannot be
/// teacher-forced is journalled as a problem of the reference (once: a resume does not repeat it).
fn reference_texts(
    plan: &RunPlan,
    slots: &BTreeMap<journal::Slot, &Record>,
    reference: &str,
    template: Option<&ChatTemplate>,
    existing: &[ForcedLine],
    journal: &mut JsonLines,
) -> anyhow::Result<Vec<Text>> {
    let mut texts = Vec::new();
    for id in &plan.scope {
        let (Some(prompt), Some(answer)) =
            (plan.catalogue.get(id), first_answer(slots, id, reference))
        else {
            continue;
        };
        let completion = answer.completion.content.as_deref().unwrap_or_default();
        match forced_text(prompt, completion, template) {
            Ok(t) => texts.push(t),
            // Said once: a resume without the flag does not say it again.
            Err((kind, _)) if journalled_problem(existing, id, reference, kind) => {}
            Err((kind, reason)) => journal.append(&ForcedLine::Problem(Problem {
                endpoint: reference.to_string(),
                passage: Some(id.clone()),
                kind: kind.into(),
                reason,
            }))?,
        }
    }
    Ok(texts)
}

/// Per endpoint (in `names` order, the reference first), the texts neither scored nor refused
/// there yet; the controls are the reference's only.
fn still_to_score<'a>(
    names: &[&str],
    texts: &'a [Text],
    existing: &[ForcedLine],
) -> Vec<Vec<&'a Text>> {
    let (done, refused) = (scored_keys(existing), refused_keys(existing));
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            texts
                .iter()
                .filter(|t| {
                    let slot = t.slot(name);
                    is_planned(i, t.purpose == Purpose::Control)
                        && !refused.contains(&slot)
                        && !done.contains(&(slot, t.hash.clone()))
                })
                .collect()
        })
        .collect()
}

/// Teacher-force the run's reference completions on every endpoint. Returns whether Ctrl-C or
/// SIGTERM stopped it (every scored line before that is journalled).
pub async fn run(
    plan: &RunPlan,
    targets: &[Target],
    template: Option<&ChatTemplate>,
) -> Result<bool, crate::run::RunError> {
    use crate::run::RunError;
    let dir = &plan.dir;
    let loaded = journal::load(dir).map_err(RunError::Folder)?;
    let slots = effective(&loaded.records);
    let names: Vec<&str> = plan
        .endpoints
        .iter()
        .map(|e| e.spec.name.as_str())
        .collect();
    let Some(reference) = names.first().copied() else {
        return Ok(false);
    };
    let folder = compare::folder(dir);
    let existing: Lines<ForcedLine> = folder
        .read_lines(compare::TEACHER_FORCING)
        .map_err(RunError::Folder)?;
    let mut journal = folder
        .append_to(compare::TEACHER_FORCING)
        .map_err(RunError::Folder)?;
    let mut texts = reference_texts(
        plan,
        &slots,
        reference,
        template,
        &existing.values,
        &mut journal,
    )
    .map_err(RunError::Send)?;
    texts.extend(passage_texts(plan));
    let todo = still_to_score(&names, &texts, &existing.values);
    if todo.iter().all(Vec::is_empty) {
        return Ok(false);
    }
    let work: Vec<(String, u64)> = names
        .iter()
        .zip(&todo)
        .map(|(name, todo)| (name.to_string(), todo.len() as u64))
        .collect();
    let mut progress = Progress::counting(plan.quiet, &work);
    let n: usize = todo.iter().map(Vec::len).sum();
    let passages = todo
        .iter()
        .flatten()
        .filter(|t| t.purpose != Purpose::Completion)
        .count();
    progress.note(&format!(
        "teacher forcing: {n} scoring requests (one per reference completion per endpoint{})",
        if passages > 0 {
            format!(
                "; {passages} of them long passages, one per passage per endpoint and the reference's control"
            )
        } else {
            String::new()
        }
    ));
    let forced = force(
        plan,
        targets,
        template,
        &slots,
        &todo,
        &mut journal,
        &mut progress,
    )
    .await;
    progress.finish();
    forced.map_err(RunError::Send)
}

/// The texts of one endpoint (by index) under one condition.
type Group<'a> = (usize, PromptForm, Vec<&'a Text>);

/// Every (endpoint, condition) with texts to score.
fn groups<'a>(todo: &[Vec<&'a Text>]) -> Vec<Group<'a>> {
    todo.iter()
        .enumerate()
        .flat_map(|(target, todo)| {
            [PromptForm::Chat, PromptForm::Plain].map(|condition| {
                let texts: Vec<&Text> = todo
                    .iter()
                    .copied()
                    .filter(|t| t.condition == condition)
                    .collect();
                (target, condition, texts)
            })
        })
        .filter(|(_, _, texts)| !texts.is_empty())
        .collect()
}

/// Establishes how every group's endpoint is read under its condition, all at once; None when
/// Ctrl-C or SIGTERM stopped it.
async fn establish_groups(
    plan: &RunPlan,
    targets: &[Target],
    template: Option<&ChatTemplate>,
    groups: &[Group<'_>],
) -> Option<Vec<(EndpointInfo, Option<SelfConsistency>)>> {
    let establishing = futures::future::join_all(groups.iter().map(|(i, condition, _)| {
        let settings = LogprobsSettings {
            top_k: TOP_K,
            concurrency: plan.concurrency,
            self_check_tokens: SELF_CHECK_TOKENS,
            self_check_prompts: check_prompts(*condition, template),
        };
        let target = &targets[*i];
        async move { establish(target, &settings).await }
    }));
    tokio::select! {
        e = establishing => Some(e),
        _ = interrupted() => None,
    }
}

/// Journals what was established per group and queues its texts, one queue per endpoint (both
/// conditions in it, so an endpoint never has more than the run's concurrency in flight); texts
/// of an endpoint without usable prompt logprobs are journalled as `unsupported` instead.
fn queue_jobs<'a>(
    targets: &[Target],
    slots: &BTreeMap<journal::Slot, &Record>,
    groups: Vec<Group<'a>>,
    established: Vec<(EndpointInfo, Option<SelfConsistency>)>,
    journal: &mut JsonLines,
    progress: &mut Progress,
) -> anyhow::Result<Vec<Vec<ScoringJob<'a>>>> {
    let mut queues: Vec<Vec<ScoringJob>> = targets.iter().map(|_| Vec::new()).collect();
    for ((i, condition, texts), (mut info, sc)) in groups.into_iter().zip(established) {
        let target = &targets[i];
        info.condition = Some(condition.label().into());
        let (mode, offset) = (info.mode, info.offset.filter(|_| info.usable));
        let unusable = info.notes.join("; ");
        journal.append(&ForcedLine::Endpoint {
            info,
            self_consistency: sc,
        })?;
        let (Some(mode), Some(offset)) = (mode, offset) else {
            for t in texts {
                let line = t.problem(
                    &target.name,
                    "unsupported",
                    format!("no usable prompt logprobs: {unusable}"),
                );
                journal.append(&line)?;
                progress.record(&target.name, tally(&line));
            }
            continue;
        };
        queues[i].extend(texts.into_iter().map(|text| {
            ScoringJob {
                target: i,
                text,
                mode,
                offset,
                chat_prompt_tokens: (text.purpose == Purpose::Completion)
                    .then(|| first_answer(slots, &text.prompt, &target.name))
                    .flatten()
                    .and_then(|r| r.completion.usage.as_ref())
                    .and_then(|u| u.prompt_tokens),
            }
        }));
    }
    Ok(queues)
}

/// Establish how each endpoint is read for each condition with texts to score, then score every
/// text on the engine, one lane per endpoint within the run's concurrency. Returns whether Ctrl-C
/// or SIGTERM stopped it.
async fn force(
    plan: &RunPlan,
    targets: &[Target],
    template: Option<&ChatTemplate>,
    slots: &BTreeMap<journal::Slot, &Record>,
    todo: &[Vec<&Text>],
    journal: &mut JsonLines,
    progress: &mut Progress,
) -> anyhow::Result<bool> {
    let groups = groups(todo);
    let Some(established) = establish_groups(plan, targets, template, &groups).await else {
        return Ok(true);
    };
    let queues = queue_jobs(targets, slots, groups, established, journal, progress)?;
    let lanes = queues
        .into_iter()
        .map(|jobs| Lane::new(jobs, plan.concurrency))
        .collect();
    let driven = drive(
        lanes,
        |j: ScoringJob, _| {
            let target = &targets[j.target];
            async move {
                let line = score_one(target, j.mode, j.offset, j.text, j.chat_prompt_tokens).await;
                (target.name.as_str(), line)
            }
        },
        &mut Keep(|(endpoint, line): (&str, ForcedLine)| {
            journal.append(&line)?;
            progress.record(endpoint, tally(&line));
            Ok(())
        }),
    )
    .await?;
    Ok(driven.interrupted)
}

/// How progress counts a journalled line: a problem is an error.
fn tally(line: &ForcedLine) -> Tally {
    Tally {
        planned: true,
        failed: matches!(line, ForcedLine::Problem(_) | ForcedLine::PassageProblem(_)),
        line: None,
    }
}

/// The self-consistency prompts for a condition: as user messages through the chat template, or
/// as plain text.
fn check_prompts(condition: PromptForm, template: Option<&ChatTemplate>) -> Vec<String> {
    match (condition, template) {
        (PromptForm::Chat, Some(t)) => super::run::SELF_CHECK_PROMPTS
            .iter()
            .filter_map(|p| {
                t.render(&[Message {
                    role: Role::User,
                    content: p.to_string(),
                }])
                .ok()
            })
            .collect(),
        _ => LogprobsSettings::plain_self_check(),
    }
}

/// The chat template for a run: the one `--chat-template` loaded (copied into the run folder),
/// else the copy a previous invocation left there, else none.
pub fn template_for(
    dir: &Path,
    flagged: Option<ChatTemplate>,
) -> anyhow::Result<Option<ChatTemplate>> {
    // Kept with its special tokens, in the `tokenizer_config.json` layout.
    let folder = compare::folder(dir);
    let kept = folder.file(compare::CHAT_TEMPLATE);
    match flagged {
        Some(t) => {
            let json = serde_json::json!({
                "chat_template": t.source,
                "bos_token": t.bos_token,
                "eos_token": t.eos_token,
            });
            folder.write(compare::CHAT_TEMPLATE, (json.to_string() + "\n").as_bytes())?;
            Ok(Some(t))
        }
        None if kept.exists() => ChatTemplate::load(&kept).map(Some),
        None => Ok(None),
    }
}
