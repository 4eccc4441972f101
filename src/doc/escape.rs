//! What both writers do to every string: control characters (ESC, NUL, DEL, C1 …) shown as
//! visible symbols, so a server's bytes cannot drive a terminal or hide text; and the escaping
//! of each format: HTML entities, Markdown backslashes.

use std::borrow::Cow;
use std::fmt;

/// `s` with `\r\n` as `\n` and every other control character but `\n` and `\t` shown as a
/// visible symbol: C0 as its Control Pictures sign (ESC as ␛), DEL as ␡, C1 and the bidi
/// controls that reorder text on screen (U+202E and its kin) as �. What every report, table and
/// quote of a server's text passes through before a terminal or a browser shows it.
pub(crate) fn visible(s: &str) -> Cow<'_, str> {
    let control = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c);
    if !s.chars().any(control) {
        return Cow::Borrowed(s);
    }
    let s = s.replace("\r\n", "\n");
    Cow::Owned(
        s.chars()
            .map(|c| match c {
                '\n' | '\t' => c,
                '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
                '\u{7f}' => '\u{2421}',
                c if c.is_control() || is_bidi_control(c) => '\u{fffd}',
                c => c,
            })
            .collect(),
    )
}

/// The invisible characters that change the order text is shown in: marks, embeddings,
/// overrides and isolates (the "Trojan Source" characters).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Text made safe for HTML element content and quoted attribute values.
pub(super) struct Esc<'a>(Cow<'a, str>);

/// Escape `s` for HTML text or a quoted attribute: `& < > " '`, control characters visible.
pub(super) fn esc(s: &str) -> Esc<'_> {
    Esc(visible(s))
}

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest: &str = &self.0;
        while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..i])?;
            f.write_str(match rest.as_bytes()[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[i + 1..];
        }
        f.write_str(rest)
    }
}

/// Markdown text on one line: control characters visible, line breaks as spaces, and a
/// backslash before each character that would start markup: `\ ` *` (code, emphasis), a `]`
/// that would close a link, an image or a link definition (followed by `(`, `[` or `:`), and a
/// `<` that could open a tag, a comment or an autolink (followed by a letter, `/`, `!` or `?`).
/// Brackets, `<` and `>` in ordinary text (`[12–28%]`, `p < 0.05`, `fail>0`) stay as they are.
pub(super) fn markdown_text(s: &str) -> String {
    let s = visible(s);
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().unwrap_or(' ');
        match c {
            '\n' | '\r' => out.push(' '),
            '<' if next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?') => {
                out.push_str("\\<")
            }
            ']' if matches!(next, '(' | '[' | ':') => out.push_str("\\]"),
            '\\' | '`' | '*' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// An id or anchor safe in an attribute and a URL fragment: letters, digits, `-`, `_`, `.`
/// kept, anything else as `-`.
pub(super) fn anchor(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#).to_string(),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("plain — text").to_string(), "plain — text");
    }

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(
            visible("a\u{1b}[31mred\r\nb\u{7f}\u{85}\tc"),
            "a␛[31mred\nb␡�\tc"
        );
        assert!(matches!(visible("plain\ntext"), Cow::Borrowed(_)));
        assert_eq!(
            visible("a\u{202e}cba\u{2066}\u{200f}\u{9b}31m\u{7}"),
            "a\u{fffd}cba\u{fffd}\u{fffd}\u{fffd}31m\u{2407}"
        );
        assert_eq!(esc("\u{1b}<").to_string(), "␛&lt;");
    }

    #[test]
    fn markdown_text_cannot_open_markup() {
        assert_eq!(
            markdown_text("</script><img src=x> ![i](http://x) *a* `c`\nnext"),
            "\\</script>\\<img src=x> ![i\\](http://x) \\*a\\* \\`c\\` next"
        );
        assert_eq!(
            markdown_text("p < 0.05, fail>0, [1–2%] <!-- x --> <?php <https://x> [a][b] [c]: u"),
            "p < 0.05, fail>0, [1–2%] \\<!-- x --> \\<?php \\<https://x> [a\\][b] [c\\]: u"
        );
        assert_eq!(anchor("prompt-a b\"<"), "prompt-a-b--");
    }
}
