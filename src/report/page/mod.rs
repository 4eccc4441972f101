//! report.html: the report's document written as one self-contained page (inline CSS, JS and
//! SVG; nothing fetched). The script only adds sorting and filtering, so the page reads the same
//! with JavaScript off. A Content Security Policy allows only this page's own style and script,
//! by hash, and no network at all.

use std::io::Write;

use base64::Engine;
use sha2::{Digest, Sha256};

use crate::doc::{html_text, written, Block, HtmlWriter};

const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("script.js");

/// The page around a document: `title` in the tab, `footer` at the end.
pub(crate) fn page(title: &str, blocks: &[Block], footer: &str) -> String {
    written(|out| write_page(out, title, footer, |html| html.write(blocks)))
}

/// [`page`] streamed into `out`, its body written by `body` (a few blocks at a time).
pub(crate) fn write_page(
    out: &mut dyn Write,
    title: &str,
    footer: &str,
    body: impl FnOnce(&mut HtmlWriter),
) -> std::io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src '{}'; script-src '{}'; img-src data:; base-uri 'none'; form-action 'none'\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        csp_hash(STYLE),
        csp_hash(SCRIPT),
        html_text(title),
    )?;
    let mut html = HtmlWriter::new(out);
    body(&mut html);
    html.finish()?;
    write!(
        out,
        "<footer>{}</footer>\n</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        html_text(footer)
    )
}

/// `sha256-…` of an inline element's text, as a CSP source.
fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csp_hashes_are_standard_base64_of_sha256() {
        // sha256("") in base64, as browsers compute it for an empty inline element.
        assert_eq!(
            csp_hash(""),
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }
}
