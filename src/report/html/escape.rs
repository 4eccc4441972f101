//! The one escaping helper of report.html: every string that comes from results (model output is
//! hostile) goes through [`esc`] before it reaches the page.

use std::fmt;

/// Text made safe for HTML element content and quoted attribute values.
pub(super) struct Esc<'a>(&'a str);

/// Escape `s` for HTML text or a double- or single-quoted attribute: `& < > " '`.
pub(super) fn esc(s: &str) -> Esc<'_> {
    Esc(s)
}

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
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

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#).to_string(),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("plain — text").to_string(), "plain — text");
    }
}
