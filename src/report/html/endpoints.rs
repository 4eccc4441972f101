//! The endpoints: who was compared (URL, model served, fingerprints) and each one's scores, with
//! accuracy and its Wilson 95% interval.

use std::fmt::Write;

use super::chart::fmt_num;
use super::escape::esc;
use super::open_section;
use crate::analysis::Results;

pub(super) fn render(results: &Results, out: &mut String) {
    open_section(out, "endpoints", "Endpoints");
    let any_fingerprint = results
        .endpoints
        .iter()
        .any(|e| !e.system_fingerprints.is_empty());
    let _ = write!(
        out,
        "<div class=\"scroll\"><table>\n<thead><tr><th>endpoint</th><th>URL</th><th>served model</th>{}\
         <th>accuracy (95% interval)</th><th>correct</th><th>wrong</th>\
         <th>ungraded</th><th>failed</th><th>mean completion tokens</th></tr></thead>\n<tbody>\n",
        if any_fingerprint { "<th>fingerprint</th>" } else { "" }
    );
    let fingerprints_differ = results
        .endpoints
        .windows(2)
        .any(|w| w[0].system_fingerprints != w[1].system_fingerprints);
    for (i, e) in results.endpoints.iter().enumerate() {
        let role = if i == 0 {
            " <span class=\"badge ref\">reference</span>"
        } else {
            ""
        };
        let a = &e.accuracy;
        let accuracy = if a.trials == 0 {
            "—".to_string()
        } else {
            format!(
                "<b>{}%</b> <span class=\"muted\">({}–{}%, {}/{})</span>",
                fmt_num(a.value * 100.0),
                fmt_num(a.low * 100.0),
                fmt_num(a.high * 100.0),
                a.successes,
                a.trials
            )
        };
        let served = if e.served_models.is_empty() {
            e.model.clone().unwrap_or_default()
        } else {
            e.served_models.join(", ")
        };
        let fingerprint = if any_fingerprint {
            format!(
                "<td{}>{}</td>",
                if fingerprints_differ {
                    " class=\"flag\""
                } else {
                    ""
                },
                esc(&e.system_fingerprints.join(", "))
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code>{role}</td><td><code>{}</code></td><td class=\"nowrap\">{}</td>{fingerprint}\
             <td class=\"nowrap\">{accuracy}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&e.name),
            esc(&e.base_url),
            esc(&served),
            e.correct,
            e.wrong,
            e.ungraded,
            e.failed,
            e.mean_completion_tokens.map(fmt_num).unwrap_or_default(),
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
    if fingerprints_differ {
        out.push_str(
            "<p class=\"callout\">The endpoints report different <code>system_fingerprint</code> values: \
             the serving stack or its configuration differs.</p>\n",
        );
    }
    out.push_str("</section>\n");
}
