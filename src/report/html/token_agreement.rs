//! Token agreement of `compare --logprobs` on the page: per pair, the teacher-forced KL, same top
//! token and Δp overall, per category and for the prompts that part most, and what was not
//! compared.

use std::fmt::Write;

use super::escape::esc;
use super::{open_section, prompt_anchor};
use crate::analysis::Results;
use crate::logprobs::metrics::Summary;
use crate::logprobs::report::num;

fn pct(x: Option<f64>, digits: usize) -> String {
    x.map_or("—".into(), |v| format!("{:.digits$}%", v * 100.0))
}

fn row(out: &mut String, label: &str, s: &Summary) {
    let _ = writeln!(
        out,
        "<tr><td>{label}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        s.tokens,
        num(s.mean_kld, 4),
        num(s.p99_kld, 4),
        pct(s.top1_agreement, 1),
        pct(s.mean_delta_p, 2),
        pct(s.rms_delta_p, 2),
    );
}

pub(super) fn render(results: &Results, out: &mut String) {
    let Some(forcing) = &results.teacher_forcing else {
        return;
    };
    open_section(out, "token-agreement", "Token agreement (teacher-forced)");
    if forcing.prompts_scored == 0 {
        out.push_str(
            "<p>No teacher-forced figures: the reference scored none of its completions.</p>\n",
        );
    } else {
        let _ = writeln!(
        out,
        "<p>Every endpoint re-scored the reference's own completions with prompt logprobs (top-{}), {} prompts. KL(reference ‖ other) in nats over the reference's top-k plus a tail bucket; Δp is p<sub>other</sub> − p<sub>reference</sub> of the completion's token. Identical deployments read 0 and 100%.</p>",
        forcing.top_k, forcing.prompts_scored
    );
    }
    for p in &results.token_agreement {
        let _ = writeln!(
            out,
            "<h3><code>{}</code> against <code>{}</code></h3>\n<table class=\"sortable\"><thead><tr><th></th><th>tokens</th><th>mean KLD</th><th>p99 KLD</th><th>same top token</th><th>mean Δp</th><th>RMS Δp</th></tr></thead><tbody>",
            esc(&p.other),
            esc(&p.reference)
        );
        row(out, "<strong>overall</strong>", &p.summary);
        for c in &p.categories {
            row(out, &esc(&c.category).to_string(), &c.summary);
        }
        for x in p.worst(5) {
            let label = format!(
                "<a href=\"#{}\"><code>{}</code></a> <span class=\"muted\">largest KLD</span>",
                esc(&prompt_anchor(&x.id)),
                esc(&x.id)
            );
            row(out, &label, &x.summary);
        }
        out.push_str("</tbody></table>\n");
    }
    if !forcing.problems.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>{} not compared</summary><ul>",
            forcing.problems.len()
        );
        for p in &forcing.problems {
            let _ = writeln!(
                out,
                "<li><code>{}</code> on <code>{}</code> ({}): {}</li>",
                esc(p.passage.as_deref().unwrap_or("-")),
                esc(&p.endpoint),
                esc(&p.kind),
                esc(&p.reason)
            );
        }
        out.push_str("</ul></details>\n");
    }
    out.push_str("</section>\n");
}
