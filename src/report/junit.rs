//! junit.xml for CI systems: one testcase per prompt and endpoint pair; a diff is a failure, a
//! fail verdict an error. A single-endpoint run has one testcase per prompt, failing when its
//! repeats disagree.

use std::fmt::Write;

use crate::analysis::{Class, Results, Verdict};

pub fn render_junit(results: &Results) -> String {
    let mut suites = Vec::new();
    let pairs: Vec<(String, String)> = results
        .prompts
        .first()
        .map(|p| {
            p.pairs
                .iter()
                .map(|x| (x.reference.clone(), x.other.clone()))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        for e in &results.endpoints {
            let cases = results.prompts.iter().map(|p| {
                let a = p.answers.get(&e.name);
                let failure = match a {
                    Some(a) if a.error.is_some() => {
                        Some(("error", "fail", a.error.clone().unwrap_or_default()))
                    }
                    Some(a) => a
                        .determinism
                        .as_ref()
                        .filter(|d| d.class == Class::Nondeterministic)
                        .map(|d| {
                            (
                                "failure",
                                "nondeterministic",
                                format!("answers across repeats: {:?}", d.histogram),
                            )
                        }),
                    None => None,
                };
                (p.category.clone(), p.id.clone(), failure)
            });
            suites.push(suite(&e.name, cases.collect()));
        }
    } else {
        for (reference, other) in &pairs {
            let cases = results.prompts.iter().map(|p| {
                let pair = p.pairs.iter().find(|x| &x.other == other);
                let failure = pair.and_then(|x| {
                    let detail = p
                        .answers
                        .iter()
                        .filter(|(n, _)| *n == reference || *n == other)
                        .map(|(n, a)| {
                            format!(
                                "{n}: {}",
                                a.extracted.clone().or(a.error.clone()).unwrap_or_default()
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    match x.verdict {
                        Verdict::Diff => {
                            Some(("failure", "diff", format!("{}\n{detail}", x.reason)))
                        }
                        Verdict::Fail => Some(("error", "fail", format!("{}\n{detail}", x.reason))),
                        _ => None,
                    }
                });
                (p.category.clone(), p.id.clone(), failure)
            });
            suites.push(suite(&format!("{reference} vs {other}"), cases.collect()));
        }
    }
    let (tests, failures, errors) = suites
        .iter()
        .fold((0, 0, 0), |acc, s| (acc.0 + s.1, acc.1 + s.2, acc.2 + s.3));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, "<testsuites name=\"coherence\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">");
    for s in suites {
        out.push_str(&s.0);
    }
    out.push_str("</testsuites>\n");
    out
}

type Case = (String, String, Option<(&'static str, &'static str, String)>);

/// (xml, tests, failures, errors)
fn suite(name: &str, cases: Vec<Case>) -> (String, usize, usize, usize) {
    let failures = cases
        .iter()
        .filter(|c| matches!(c.2, Some(("failure", ..))))
        .count();
    let errors = cases
        .iter()
        .filter(|c| matches!(c.2, Some(("error", ..))))
        .count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">",
        xml(name),
        cases.len()
    );
    for (category, id, failure) in &cases {
        let open = format!(
            "    <testcase classname=\"coherence.{}\" name=\"{}\"",
            xml(category),
            xml(id)
        );
        match failure {
            None => {
                let _ = writeln!(out, "{open}/>");
            }
            Some((element, kind, text)) => {
                let message = text.lines().next().unwrap_or("");
                let _ = writeln!(
                    out,
                    "{open}>\n      <{element} type=\"{kind}\" message=\"{}\">{}</{element}>\n    </testcase>",
                    xml(message),
                    xml(text)
                );
            }
        }
    }
    out.push_str("  </testsuite>\n");
    (out, cases.len(), failures, errors)
}

/// Escape text for XML, dropping characters XML 1.0 cannot carry.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_and_drops_control_characters() {
        assert_eq!(xml("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
    }
}
