//! The token-agreement section of `compare --logprobs`: every endpoint scored the reference's
//! completions (teacher forcing); per pair, KL over the top-k, same top token and Δp overall, per
//! category and for the prompts that part most, how each endpoint was read, what was not
//! compared, and the published priors to read the figures against.

use std::collections::BTreeMap;

use super::cells::anchor;
use crate::analysis::{Results, TeacherForcing};
use crate::doc::{code, para, t, text, Block, Line, Part};
use crate::logprobs::report::{pair_blocks, priors};

/// Problems listed by name before the rest are only counted.
const LISTED: usize = 5;

pub(super) fn render(results: &Results) -> Vec<Block> {
    let Some(forcing) = &results.teacher_forcing else {
        return Vec::new();
    };
    let mut body = Vec::new();
    if forcing.prompts_scored == 0 {
        body.push(para(vec![text(
            "No teacher-forced figures: the reference scored none of its completions.",
        )]));
    } else {
        body.push(para(vec![text(format!(
            "Every endpoint re-scored the reference's own completions with prompt logprobs (top-{}), {} prompts. KL is KL(reference ‖ other) in nats over the reference's top-k plus one tail bucket; Δp is p_other − p_reference of the completion's token. Identical deployments read 0 KL and 100% same top token.",
            forcing.top_k, forcing.prompts_scored
        ))]));
        for p in &results.token_agreement {
            let title = t("`$` against `$`", &[&p.other, &p.reference]);
            let blocks = pair_blocks(p, "Prompts", &|id| Some(anchor(id)));
            body.push(Part::new(3, None, title, blocks).into());
        }
    }
    endpoints_and_problems(forcing, &mut body);
    if forcing.prompts_scored > 0 {
        body.push(para(vec![text("Published priors:")]));
        body.extend(priors());
    }
    let title = vec![text("Token agreement (teacher-forced)")];
    vec![Part::section("token-agreement", title, body).into()]
}

fn endpoints_and_problems(forcing: &TeacherForcing, body: &mut Vec<Block>) {
    body.push(para(vec![text("How each endpoint was read:")]));
    body.push(Block::List(
        forcing
            .endpoints
            .iter()
            .map(|e| {
                vec![
                    code(&e.name),
                    text(format!(
                        " ({} texts): {}",
                        e.condition.as_deref().unwrap_or("plain"),
                        e.notes.join("; ")
                    )),
                ]
            })
            .collect(),
    ));
    if forcing.problems.is_empty() {
        return;
    }
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &forcing.problems {
        *by_kind.entry(p.kind.as_str()).or_default() += 1;
    }
    let counts: Vec<String> = by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    body.push(para(vec![text(format!(
        "Not compared: {}.",
        counts.join(", ")
    ))]));
    let mut items: Vec<Line> = forcing
        .problems
        .iter()
        .take(LISTED)
        .map(|p| {
            vec![
                code(p.passage.as_deref().unwrap_or("-")),
                text(" on "),
                code(&p.endpoint),
                text(format!(" ({}): {}", p.kind, p.reason)),
            ]
        })
        .collect();
    if forcing.problems.len() > LISTED {
        items.push(t(
            &format!(
                "… {} more in results.json `teacher_forcing.problems`",
                forcing.problems.len() - LISTED
            ),
            &[],
        ));
    }
    body.push(Block::List(items));
}
