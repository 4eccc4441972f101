//! Inline text from a template: `**strong**`, `` `code` `` and `$` for each value, so a sentence
//! reads as it will print while its values (names, answers) are never read as markup.

use super::{Inline, Line, Style};

/// The line a template describes: `**…**` is strong, `` `…` `` is code, and each `$` takes the
/// next of `values` as plain text (inside backticks, as code). Markup is read from the template
/// only, never from a value.
pub fn t(template: &str, values: &[&str]) -> Line {
    let mut values = values.iter();
    let mut out = Line::new();
    let mut strong: Option<Line> = None;
    let mut code: Option<String> = None;
    let mut buf = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => {
                let v = values.next().copied().unwrap_or_default();
                code.as_mut().unwrap_or(&mut buf).push_str(v);
            }
            '`' => match code.take() {
                Some(c) => into(&mut strong, &mut out, Inline::Code(c)),
                None => {
                    flush(&mut buf, &mut strong, &mut out);
                    code = Some(String::new());
                }
            },
            '*' if code.is_none() && chars.peek() == Some(&'*') => {
                chars.next();
                flush(&mut buf, &mut strong, &mut out);
                match strong.take() {
                    Some(inner) => out.push(Inline::Styled(Style::Strong, inner)),
                    None => strong = Some(Line::new()),
                }
            }
            c => code.as_mut().unwrap_or(&mut buf).push(c),
        }
    }
    flush(&mut buf, &mut strong, &mut out);
    if let Some(c) = code {
        into(&mut strong, &mut out, Inline::Code(c));
    }
    if let Some(inner) = strong {
        out.push(Inline::Styled(Style::Strong, inner));
    }
    out
}

fn into(strong: &mut Option<Line>, out: &mut Line, inline: Inline) {
    strong.as_mut().unwrap_or(out).push(inline);
}

fn flush(buf: &mut String, strong: &mut Option<Line>, out: &mut Line) {
    if !buf.is_empty() {
        into(strong, out, Inline::Text(std::mem::take(buf)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{code, strong, text};

    #[test]
    fn markup_comes_from_the_template_and_values_stay_text() {
        assert_eq!(
            t(
                "**Quality**, `$` against $: **$ `$`**",
                &["b*", "**a**", "x", "`y`"]
            ),
            vec![
                strong(vec![text("Quality")]),
                text(", "),
                code("b*"),
                text(" against **a**: "),
                strong(vec![text("x "), code("`y`")]),
            ]
        );
        assert_eq!(t("a $ b", &[]), vec![text("a  b")]);
    }
}
