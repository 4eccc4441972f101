//! The artifact in an answer: the HTML page and its scripts, from one HTML file or from fenced
//! blocks (an unterminated fence, as a length-cut answer leaves, runs to the end).

use regex::Regex;
use std::sync::OnceLock;

/// What was extracted from one answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Artifact {
    /// The page (empty when the answer held scripts only).
    pub html: String,
    /// The scripts, in page order: inline `<script>` bodies, else the JavaScript blocks.
    pub scripts: Vec<String>,
}

impl Artifact {
    /// The scripts joined, for static checks.
    pub fn js(&self) -> String {
        self.scripts.join("\n")
    }
}

struct Block {
    lang: String,
    body: String,
}

fn fenced_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix("```") else {
            continue;
        };
        let lang = rest.trim().to_ascii_lowercase();
        let mut body = String::new();
        for inner in lines.by_ref() {
            if inner.trim_start().starts_with("```") {
                break;
            }
            body.push_str(inner);
            body.push('\n');
        }
        blocks.push(Block { lang, body });
    }
    blocks
}

fn looks_like_html(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("<!doctype html")
        || t.contains("<html")
        || t.contains("<canvas")
        || t.contains("<body")
}

fn script_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?is)<script\b([^>]*)>(.*?)(?:</script\s*>|\z)").expect("valid regex")
    })
}

/// The page and its scripts from a model's answer.
pub fn extract(answer: &str) -> Artifact {
    let blocks = fenced_blocks(answer);
    let page = blocks
        .iter()
        .filter(|b| {
            b.lang == "html" || b.lang == "htm" || (b.lang.is_empty() && looks_like_html(&b.body))
        })
        .max_by_key(|b| b.body.len())
        .map(|b| b.body.clone())
        .or_else(|| {
            let lower = answer.to_ascii_lowercase();
            let start = lower.find("<!doctype").or_else(|| lower.find("<html"))?;
            let end = lower
                .rfind("</html>")
                .map_or(answer.len(), |e| e + "</html>".len());
            Some(answer[start..end.max(start)].to_string())
        })
        .unwrap_or_default();
    let mut scripts: Vec<String> = script_re()
        .captures_iter(&page)
        .filter(|c| !c[1].to_ascii_lowercase().contains("src="))
        .filter(|c| {
            let attrs = c[1].to_ascii_lowercase();
            !attrs.contains("type=") || attrs.contains("javascript") || attrs.contains("module")
        })
        .map(|c| c[2].to_string())
        .filter(|s| !s.trim().is_empty())
        .collect();
    if scripts.is_empty() {
        scripts = blocks
            .iter()
            .filter(|b| ["js", "javascript", "mjs", "jsx"].contains(&b.lang.as_str()))
            .map(|b| b.body.clone())
            .collect();
    }
    Artifact {
        html: page,
        scripts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_page_gives_its_inline_scripts() {
        let a = extract("Here:\n```html\n<!DOCTYPE html><canvas id=\"game\"></canvas>\n<script>let x = 1;</script>\n<script src=\"x.js\"></script>\n```\nDone.");
        assert!(a.html.contains("<canvas"));
        assert_eq!(a.scripts, vec!["let x = 1;".to_string()]);
    }

    #[test]
    fn separate_blocks_and_bare_html_are_found() {
        let a = extract("```html\n<html><body><canvas></canvas><script src=\"game.js\"></script></body></html>\n```\n```javascript\nconst y = 2;\n```\n");
        assert_eq!(a.scripts, vec!["const y = 2;\n".to_string()]);
        let bare = extract("Sure! <!DOCTYPE html><html><script>go()</script></html> enjoy");
        assert!(bare.html.ends_with("</html>"));
        assert_eq!(bare.scripts, vec!["go()".to_string()]);
        let cut = extract("```html\n<html><script>function f() {\n");
        assert_eq!(
            cut.scripts.len(),
            1,
            "an unterminated page still gives its script"
        );
        let none = extract("I cannot do that.");
        assert!(none.html.is_empty() && none.scripts.is_empty());
    }
}
