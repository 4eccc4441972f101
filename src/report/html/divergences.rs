//! The divergence table: one row per prompt whose verdict is not `same`, with every endpoint's
//! answer, the kind, whether it is sampler noise or a deployment difference, and why. The rows
//! carry their category, verdict, kind and difference as data attributes, which the page's
//! script sorts and filters by (with JavaScript off the table is simply complete).

use std::collections::BTreeSet;
use std::fmt::Write;

use super::chart::clip;
use super::escape::esc;
use super::{names, open_section, prompt_anchor, verdict_badge};
use crate::analysis::{AnswerResult, Difference, PromptResult, Results, Verdict};

/// The table's element id (the filters name it).
const TABLE_ID: &str = "divergence-table";

pub(super) fn render(results: &Results, out: &mut String) {
    open_section(out, "divergences", "Divergences");
    let flagged: Vec<&PromptResult> = results
        .prompts
        .iter()
        .filter(|p| p.verdict != Verdict::Same)
        .collect();
    if flagged.is_empty() {
        out.push_str(
            "<p>None: every prompt got the same verdict on every endpoint.</p>\n</section>\n",
        );
        return;
    }
    let names = names(results);
    let values = |f: &dyn Fn(&PromptResult) -> Vec<String>| -> BTreeSet<String> {
        flagged.iter().flat_map(|p| f(p)).collect()
    };
    filters(
        out,
        &[
            (
                "category",
                "category",
                values(&|p| vec![p.category.clone()]),
            ),
            (
                "verdict",
                "verdict",
                values(&|p| vec![p.verdict.as_str().to_string()]),
            ),
            ("kind", "kind", values(&kinds)),
            ("difference", "difference", values(&differences)),
        ],
    );
    let _ = write!(
        out,
        "<div class=\"scroll\"><table id=\"{TABLE_ID}\" class=\"sortable ends-{}\">\n<thead><tr>\
         <th class=\"c-prompt\">prompt</th><th class=\"c-category\">category</th><th class=\"c-verdict\">verdict</th>\
         <th class=\"c-kind\">kind</th><th class=\"c-difference\">difference</th><th class=\"c-expected\">expected</th>",
        names.len().min(6)
    );
    for n in &names {
        let _ = write!(out, "<th><code>{}</code></th>", esc(n));
    }
    out.push_str("<th class=\"c-why\">why</th></tr></thead>\n<tbody>\n");
    for p in flagged {
        let kinds = kinds(p);
        let differences = differences(p);
        let _ = write!(
            out,
            "<tr data-category=\"{}\" data-verdict=\"{}\" data-kind=\"{}\" data-difference=\"{}\">\
             <td><a href=\"#{}\"><code>{}</code></a></td><td>{}</td><td data-sort=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&p.category),
            p.verdict.as_str(),
            esc(&kinds.join(" ")),
            esc(&differences.join(" ")),
            esc(&prompt_anchor(&p.id)),
            esc(&p.id),
            esc(&p.category),
            severity(p.verdict),
            verdict_badge(p.verdict),
            esc(&kinds.join(", ")),
            esc(&differences.iter().map(|d| d.replace('_', " ")).collect::<Vec<_>>().join(", ")),
            esc(&clip(&p.expected, 40)),
        );
        for n in &names {
            let _ = write!(out, "<td>{}</td>", answer_cell(p.answers.get(*n)));
        }
        let why: Vec<String> = p
            .pairs
            .iter()
            .filter(|x| x.verdict != Verdict::Same)
            .map(|x| {
                if p.pairs.len() == 1 {
                    x.reason.clone()
                } else {
                    format!("{}: {}", x.other, x.reason)
                }
            })
            .collect();
        let _ = writeln!(out, "<td>{}</td></tr>", esc(&why.join("; ")));
    }
    out.push_str("</tbody>\n</table></div>\n</section>\n");
}

/// The filter controls, hidden until the script shows them (they do nothing without it).
fn filters(out: &mut String, selects: &[(&str, &str, BTreeSet<String>)]) {
    let _ = write!(
        out,
        "<div class=\"filters\" data-table=\"{TABLE_ID}\" hidden>"
    );
    for (key, label, values) in selects {
        let _ = write!(
            out,
            "<label>{} <select data-key=\"{}\"><option value=\"\">all</option>",
            esc(label),
            esc(key)
        );
        for v in values {
            let _ = write!(
                out,
                "<option value=\"{}\">{}</option>",
                esc(v),
                esc(&v.replace('_', " "))
            );
        }
        out.push_str("</select></label>");
    }
    out.push_str(
        "<label>text <input type=\"search\" data-key=\"text\" placeholder=\"prompt, answer…\"></label>\
         <span class=\"count\" aria-live=\"polite\"></span></div>\n",
    );
}

/// Sort rank: most severe last, so a descending sort puts failures first.
fn severity(v: Verdict) -> u8 {
    match v {
        Verdict::Same => 0,
        Verdict::Review => 1,
        Verdict::Diff => 2,
        Verdict::Fail => 3,
    }
}

fn kinds(p: &PromptResult) -> Vec<String> {
    let set: BTreeSet<_> = p.pairs.iter().filter_map(|x| x.kind).collect();
    set.into_iter().map(|k| k.as_str().to_string()).collect()
}

fn differences(p: &PromptResult) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for d in p.pairs.iter().filter_map(|x| x.difference) {
        let token = match d {
            Difference::SamplerNoise => "sampler_noise",
            Difference::DeploymentDifference => "deployment_difference",
            Difference::Inconclusive => "inconclusive",
        };
        if !v.iter().any(|x| x == token) {
            v.push(token.to_string());
        }
    }
    v
}

/// The extracted answer with a mark, or the failure; already escaped.
pub(super) fn answer_cell(a: Option<&AnswerResult>) -> String {
    let Some(a) = a else { return "—".into() };
    if let Some(e) = &a.error {
        return format!("<span class=\"fail\">FAIL: {}</span>", esc(&clip(e, 60)));
    }
    let shown = |s: Option<&str>, open: bool| {
        let s = s.map(|x| clip(x, 40)).unwrap_or_else(|| {
            if open {
                String::new()
            } else {
                "(nothing extracted)".into()
            }
        });
        esc(&s).to_string()
    };
    match a.correct {
        Some(true) => format!(
            "{} <span class=\"mark ok\" title=\"correct\">✓</span>",
            shown(a.extracted.as_deref(), false)
        ),
        Some(false) => format!(
            "{} <span class=\"mark bad\" title=\"wrong\">✗</span>",
            shown(a.extracted.as_deref(), false)
        ),
        None => format!(
            "{} <span class=\"muted\">(open)</span>",
            shown(a.answer.as_deref(), true)
        ),
    }
}
