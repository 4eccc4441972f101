//! Every relative link in README.md, ARCHITECTURE.md and docs/**/*.md resolves: the file or folder
//! exists, and a `file.md#anchor` (or `#anchor`) names a heading of that Markdown file by its
//! GitHub slug. Web and mail links, and links inside fenced code blocks or code spans, are not
//! checked. Only std, so this target builds in seconds.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The Markdown files whose links are checked, relative to the repository root.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        let entries = fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", folder.display()));
        for entry in entries {
            let path = entry.expect("a readable folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|x| x == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Each line of `text` with a flag saying whether it is inside a fenced code block (fence lines
/// included). A fence is three or more backticks or tildes; it closes on a line of the same
/// character, at least as long, with nothing else on it.
fn lines_outside_code(text: &str) -> Vec<(usize, &str, bool)> {
    let mut open: Option<(char, usize)> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let fence = ['`', '~'].into_iter().find_map(|c| {
            let n = trimmed.chars().take_while(|&x| x == c).count();
            (n >= 3).then_some((c, n))
        });
        let in_code = match (open, fence) {
            (None, Some(f)) => {
                open = Some(f);
                true
            }
            (Some((c, n)), Some((fc, fnum))) if c == fc && fnum >= n => {
                if trimmed.trim_end().chars().all(|x| x == c) {
                    open = None;
                }
                true
            }
            (Some(_), _) => true,
            (None, None) => false,
        };
        out.push((i + 1, line, in_code));
    }
    out
}

/// `line` with the contents of its code spans (`` `…` ``, any number of backticks) blanked, so
/// that a link written inside one is not read as a link.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&c| c == '`').count();
        // The closing run: exactly `run` backticks.
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let n = chars[j..].iter().take_while(|&&c| c == '`').count();
                if n == run {
                    close = Some(j);
                    break;
                }
                j += n;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                out.push(' ');
                i = j + run;
            }
            None => {
                out.extend(&chars[i..i + run]);
                i += run;
            }
        }
    }
    out
}

/// The link targets of a Markdown text with their line numbers: inline links and images
/// (`[text](target "title")`, `![alt](<target>)`) and reference definitions (`[label]: target`).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (number, line, in_code) in lines_outside_code(text) {
        if in_code {
            continue;
        }
        let line = without_code_spans(line);
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            if let Some(end) = trimmed.find("]:") {
                let target = trimmed[end + 2..].split_whitespace().next().unwrap_or("");
                out.push((number, target.trim_matches(['<', '>']).to_string()));
                continue;
            }
        }
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            // The target ends at the parenthesis that closes the one opened by `](`.
            let mut depth = 1;
            let mut end = after.len();
            for (k, c) in after.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let inside = after[..end].trim();
            let target = if let Some(angled) = inside.strip_prefix('<') {
                angled.split('>').next().unwrap_or("")
            } else {
                inside.split_whitespace().next().unwrap_or("")
            };
            out.push((number, target.to_string()));
            rest = &after[end.min(after.len())..];
        }
    }
    out
}

/// GitHub's anchor for a heading: link syntax reduced to its text, lower case, every character
/// that is not a letter, digit, space, `-` or `_` dropped, spaces turned into `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](url)` reads as `text`.
    while let Some(open) = rest.find('[') {
        match rest[open..].find("](").map(|m| open + m) {
            Some(mid) => match rest[mid..].find(')').map(|c| mid + c) {
                Some(close) => {
                    text.push_str(&rest[..open]);
                    text.push_str(&rest[open + 1..mid]);
                    rest = &rest[close + 1..];
                }
                None => break,
            },
            None => break,
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text's ATX headings, outside code blocks; a repeated slug gets
/// `-1`, `-2`… as on GitHub.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (_, line, in_code) in lines_outside_code(text) {
        if in_code {
            continue;
        }
        let trimmed = line.trim_start();
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || line.len() - trimmed.len() > 3 {
            continue;
        }
        let title = &trimmed[hashes..];
        if !title.is_empty() && !title.starts_with([' ', '\t']) {
            continue;
        }
        let title = title.trim().trim_end_matches('#').trim();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        out.push(if *n == 0 { base } else { format!("{base}-{n}") });
        *n += 1;
    }
    out
}

/// A link that leaves the repository's files: a URL with a scheme, or a mail address.
fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// `%20`-style escapes decoded (ASCII only: enough for paths).
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every broken relative link of the documents under `root`, one message each:
/// `FILE:LINE: link \`TARGET\`: why`.
fn broken_links(root: &Path) -> Vec<String> {
    let mut anchor_cache: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut problems = Vec::new();
    for file in documents(root) {
        let text = fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for (line, target) in links(&text) {
            let mut fail =
                |why: String| problems.push(format!("{shown}:{line}: link `{target}`: {why}"));
            if target.is_empty() {
                fail("empty target".into());
                continue;
            }
            if is_external(&target) {
                continue;
            }
            let (path_part, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let path_part = path_part.split('?').next().unwrap_or("");
            let resolved = if path_part.is_empty() {
                file.clone()
            } else if path_part.starts_with('/') {
                root.join(percent_decoded(path_part.trim_start_matches('/')))
            } else {
                file.parent()
                    .expect("a document has a folder")
                    .join(percent_decoded(path_part))
            };
            if !resolved.exists() {
                let shown = resolved.strip_prefix(root).unwrap_or(&resolved);
                fail(format!("{} does not exist", shown.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if resolved.extension().is_none_or(|x| x != "md") || resolved.is_dir() {
                continue;
            }
            let known = anchor_cache
                .entry(resolved.clone())
                .or_insert_with(|| anchors(&fs::read_to_string(&resolved).unwrap_or_default()));
            if !known.iter().any(|a| a == anchor) {
                fail(format!(
                    "no heading with anchor `#{anchor}` in {}",
                    resolved.strip_prefix(root).unwrap_or(&resolved).display()
                ));
            }
        }
    }
    problems
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let problems = broken_links(root);
    assert!(
        problems.is_empty(),
        "{} broken link(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_book_has_its_summary_and_every_chapter_is_in_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let summary =
        fs::read_to_string(root.join("docs/src/SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let listed: Vec<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    for file in documents(root) {
        let Ok(rel) = file.strip_prefix(root.join("docs/src")) else {
            continue;
        };
        let rel = rel.display().to_string();
        if rel != "SUMMARY.md" {
            assert!(
                listed.contains(&rel),
                "docs/src/{rel} is not listed in docs/src/SUMMARY.md"
            );
        }
    }
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(
        slug("Long context: `--suite long`"),
        "long-context---suite-long"
    );
    assert_eq!(
        slug("The API contract: `coherence contract`"),
        "the-api-contract-coherence-contract"
    );
    assert_eq!(
        slug("Teacher forcing compare's own completions"),
        "teacher-forcing-compares-own-completions"
    );
    assert_eq!(slug("`results.json` contract"), "resultsjson-contract");
    assert_eq!(slug("A [linked](x.md) title_x"), "a-linked-title_x");
    assert_eq!(
        anchors("# A\n\n```sh\n# not a heading\n```\n## A\n#not\n    # indented code\n"),
        ["a", "a-1"]
    );
}

#[test]
fn links_are_found_outside_code_only() {
    let text = "See [a](a.md#x) and ![img](p.png \"t\") and [w](https://x.y).\n\
                `[not](code.md)` [`code text`](real.md) [angled](<b c.md>)\n\
                ```md\n[fenced](no.md)\n```\n\
                [ref]: ref.md\n";
    let found: Vec<(usize, String)> = links(text);
    let want: Vec<(usize, String)> = [
        (1, "a.md#x"),
        (1, "p.png"),
        (1, "https://x.y"),
        (2, "real.md"),
        (2, "b c.md"),
        (6, "ref.md"),
    ]
    .into_iter()
    .map(|(n, t)| (n, t.to_string()))
    .collect();
    assert_eq!(found, want);
}
