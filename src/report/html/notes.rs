//! Closing notes: prompts with errors and the warnings met while analysing.

use std::fmt::Write;

use super::escape::esc;
use super::{names, open_section, prompt_anchor};
use crate::analysis::Results;

pub(super) fn render(results: &Results, out: &mut String) {
    let names = names(results);
    let errors: Vec<(String, &str, &str)> = results
        .prompts
        .iter()
        .flat_map(|p| {
            names.iter().filter_map(move |n| {
                let e = p.answers.get(*n)?.error.as_deref()?;
                Some((p.id.clone(), *n, e))
            })
        })
        .collect();
    if errors.is_empty() && results.warnings.is_empty() {
        return;
    }
    open_section(out, "notes", "Errors and warnings");
    if !errors.is_empty() {
        out.push_str("<ul class=\"facts\">\n");
        for (id, name, e) in errors {
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\"><code>{}</code></a> on <code>{}</code>: {}</li>",
                esc(&prompt_anchor(&id)),
                esc(&id),
                esc(name),
                esc(e)
            );
        }
        out.push_str("</ul>\n");
    }
    if !results.warnings.is_empty() {
        out.push_str("<h3>Warnings</h3>\n<ul class=\"facts\">\n");
        for w in &results.warnings {
            let _ = writeln!(out, "<li>{}</li>", esc(w));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}
