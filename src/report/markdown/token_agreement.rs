//! The token-agreement section of `compare --logprobs`: every endpoint scored the reference's
//! completions (teacher forcing); per pair, KL over the top-k, same top token and Δp overall, per
//! category and for the prompts that part most, how each endpoint was read, what was not
//! compared, and the published priors to read the figures against.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::analysis::{Results, TeacherForcing};
use crate::logprobs::report::{pair_tables, priors};

/// Problems listed by name before the rest are only counted.
const LISTED: usize = 5;

pub(super) fn render(results: &Results, out: &mut String) {
    let Some(forcing) = &results.teacher_forcing else {
        return;
    };
    out.push_str("\n## Token agreement (teacher-forced)\n\n");
    if forcing.prompts_scored == 0 {
        out.push_str(
            "No teacher-forced figures: the reference scored none of its completions.\n\n",
        );
    } else {
        intro_and_pairs(results, forcing.top_k, forcing.prompts_scored, out);
    }
    endpoints_and_problems(forcing, out);
    if forcing.prompts_scored > 0 {
        out.push_str("\nPublished priors:\n\n");
        out.push_str(&priors());
    }
}

fn intro_and_pairs(results: &Results, top_k: u32, prompts: usize, out: &mut String) {
    let _ = writeln!(
        out,
        "Every endpoint re-scored the reference's own completions with prompt logprobs (top-{}), {} prompts. KL is KL(reference ‖ other) in nats over the reference's top-k plus one tail bucket; Δp is p_other − p_reference of the completion's token. Identical deployments read 0 KL and 100% same top token.\n",
        top_k, prompts
    );
    for p in &results.token_agreement {
        let _ = writeln!(out, "### `{}` against `{}`\n", p.other, p.reference);
        out.push_str(&pair_tables(p, "Prompts"));
        out.push('\n');
    }
}

fn endpoints_and_problems(forcing: &TeacherForcing, out: &mut String) {
    out.push_str("How each endpoint was read:\n\n");
    for e in &forcing.endpoints {
        let _ = writeln!(
            out,
            "- `{}` ({} texts): {}",
            e.name,
            e.condition.as_deref().unwrap_or("plain"),
            e.notes.join("; ")
        );
    }
    if !forcing.problems.is_empty() {
        let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
        for p in &forcing.problems {
            *by_kind.entry(p.kind.as_str()).or_default() += 1;
        }
        let counts: Vec<String> = by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(out, "\nNot compared: {}.\n", counts.join(", "));
        for p in forcing.problems.iter().take(LISTED) {
            let _ = writeln!(
                out,
                "- `{}` on `{}` ({}): {}",
                p.passage.as_deref().unwrap_or("-"),
                p.endpoint,
                p.kind,
                p.reason
            );
        }
        if forcing.problems.len() > LISTED {
            let _ = writeln!(
                out,
                "- … {} more in results.json `teacher_forcing.problems`",
                forcing.problems.len() - LISTED
            );
        }
    }
}
