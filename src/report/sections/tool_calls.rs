//! The tool-calls section: each endpoint's call faults by bucket, each pair's trigger F1 and
//! flips, and the failing calls quoted side by side with the reference's reply to the same item.

use super::cells::anchor;
use crate::analysis::assembly::tool_calls::ToolCalls;
use crate::analysis::{format_p, Results};
use crate::doc::{code, link, para, text, Block, Part, Table};
use crate::text::clip;

pub(super) fn render(results: &Results) -> Vec<Block> {
    let Some(t) = &results.tool_calls else {
        return Vec::new();
    };
    let mut body = vec![para(vec![text(
        "Tool items (first repeat): calls with invalid JSON arguments, an unknown function or \
         arguments outside the function's schema; items where a call was missed, made unasked, \
         or made with other arguments than expected.",
    )])];
    body.push(buckets(t).into());
    for p in &t.pairs {
        body.push(para(vec![text(format!(
            "{} against {}: trigger F1 {:.3} ({} both called, {} called by {} only, {} by {} only); \
             right on one side only: {} {}, {} {} (exact McNemar p = {}).",
            p.other,
            p.reference,
            p.tool_f1,
            p.both_called,
            p.reference_only_called,
            p.reference,
            p.other_only_called,
            p.other,
            p.reference_only_correct,
            p.reference,
            p.other_only_correct,
            p.other,
            format_p(p.mcnemar_p),
        ))]));
        body.extend(side_by_side(results, t, &p.reference, &p.other));
    }
    vec![Part::section("tool-calls", vec![text("Tool calls")], body).into()]
}

fn buckets(t: &ToolCalls) -> Table {
    let mut table = Table::new(&[
        "endpoint",
        "items",
        "calls",
        "invalid_json",
        "unknown_name",
        "schema_mismatch",
        "missed",
        "unexpected",
        "wrong arguments",
        "schema accuracy",
        "match rate",
    ]);
    for e in &t.endpoints {
        table.text_row(&[
            e.endpoint.clone(),
            e.items.to_string(),
            e.calls.to_string(),
            e.invalid_json.to_string(),
            e.unknown_name.to_string(),
            e.schema_mismatch.to_string(),
            e.missed_calls.to_string(),
            e.unexpected_calls.to_string(),
            e.argument_mismatch.to_string(),
            format!("{:.1}%", 100.0 * e.schema_accuracy),
            format!("{:.1}%", 100.0 * e.match_rate),
        ]);
    }
    table.right(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
}

/// The items either endpoint of the pair failed, each side's reply beside the other's.
fn side_by_side(results: &Results, t: &ToolCalls, reference: &str, other: &str) -> Vec<Block> {
    let failing = |name: &str| {
        t.endpoints
            .iter()
            .filter(|e| e.endpoint == name)
            .flat_map(|e| &e.failing)
            .collect::<Vec<_>>()
    };
    let (ref_failing, other_failing) = (failing(reference), failing(other));
    let mut ids: Vec<&str> = ref_failing
        .iter()
        .chain(&other_failing)
        .map(|f| f.prompt.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Vec::new();
    }
    let reply = |id: &str, name: &str| {
        results
            .prompts
            .iter()
            .find(|p| p.id == id)
            .and_then(|p| p.answers.get(name))
            .and_then(|a| a.as_written.clone().or_else(|| a.answer.clone()))
            .unwrap_or_default()
    };
    let why = |list: &[&crate::analysis::assembly::tool_calls::FailingItem], id: &str| {
        list.iter()
            .find(|f| f.prompt == id)
            .map(|f| f.evidence.clone())
            .unwrap_or_else(|| "passes".to_string())
    };
    let mut table = Table::new(&["item", reference, other, "why"]);
    for id in ids {
        table.row(vec![
            vec![link(anchor(id), vec![code(id)])],
            vec![code(clip(&reply(id, reference), 160))],
            vec![code(clip(&reply(id, other), 160))],
            vec![text(clip(
                &format!(
                    "{reference}: {}; {other}: {}",
                    why(&ref_failing, id),
                    why(&other_failing, id)
                ),
                240,
            ))],
        ]);
    }
    vec![table.into()]
}
