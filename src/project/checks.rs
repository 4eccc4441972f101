//! Static requirement checks over the extracted source: regular expressions, counts, a guard
//! test (`try` around a call) and dead functions (declared, never referenced). No parsing: the
//! checks are deliberately simple, and each says how it decided.

use std::sync::OnceLock;

use regex::Regex;

use super::artifact::Artifact;
use super::results::RequirementStatus;
use super::task::{Source, StaticCheck};

/// The JavaScript without comments (string contents are kept; a `//` inside a string cuts the
/// rest of that line, which only makes a check stricter).
pub fn strip_comments(js: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE
        .get_or_init(|| Regex::new(r"(?s)/\*.*?\*/|(?m)(^|[^:\\])//[^\n]*").expect("valid regex"));
    re.replace_all(js, "$1").into_owned()
}

/// Functions declared in `js` and never referenced anywhere else in the page or scripts.
pub fn dead_functions(artifact: &Artifact) -> Vec<String> {
    static DECL: OnceLock<Regex> = OnceLock::new();
    let decl = DECL.get_or_init(|| {
        Regex::new(r"(?:\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*\()|(?:\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>))")
            .expect("valid regex")
    });
    static SCRIPT: OnceLock<Regex> = OnceLock::new();
    let script = SCRIPT.get_or_init(|| {
        Regex::new(r"(?is)<script\b[^>]*>.*?(?:</script\s*>|\z)").expect("valid regex")
    });
    let code = strip_comments(&artifact.js());
    // The page without its scripts: handlers in attributes (onclick="go()") count as uses.
    let page = format!("{code}\n{}", script.replace_all(&artifact.html, ""));
    let mut dead = Vec::new();
    for caps in decl.captures_iter(&code) {
        let Some(name) = caps.get(1).or_else(|| caps.get(2)).map(|m| m.as_str()) else {
            continue;
        };
        if dead.iter().any(|d| d == name) {
            continue;
        }
        let Ok(word) = Regex::new(&format!(r"(^|[^\w$.]|\.){}([^\w$]|$)", regex::escape(name)))
        else {
            continue;
        };
        if word.find_iter(&page).count() <= 1 {
            dead.push(name.to_string());
        }
    }
    dead
}

/// Whether the occurrence at `at` lies inside a `try { … }` block (braces counted backwards,
/// strings and comments ignored).
fn inside_try(code: &str, at: usize) -> bool {
    let before = &code[..at];
    let bytes = before.as_bytes();
    let mut depth: i64 = 0;
    let mut i = bytes.len();
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b'}' => depth += 1,
            b'{' => {
                if depth == 0 {
                    let head = before[..i].trim_end();
                    if head.ends_with("try") {
                        return true;
                    }
                } else {
                    depth -= 1;
                }
            }
            _ => {}
        }
    }
    false
}

/// Runs one static check; the detail says what was found.
pub fn run(
    check: &StaticCheck,
    source: Source,
    artifact: &Artifact,
) -> (RequirementStatus, String) {
    if source != Source::Html && artifact.js().trim().is_empty() {
        return (
            RequirementStatus::Missing,
            "no script found in the answer".into(),
        );
    }
    let text = match source {
        Source::Js => strip_comments(&artifact.js()),
        Source::Comments => artifact.js(),
        Source::Html => artifact.html.clone(),
    };
    match check {
        StaticCheck::All { all, none } => all_patterns(all, none, &text),
        StaticCheck::Count { pattern, min } => count_matches(pattern, *min, &text),
        StaticCheck::Guarded { pattern } => guarded_uses(pattern, &text),
        StaticCheck::NoDeadCode => no_dead_code(artifact),
    }
}

/// Met when every `all` pattern matches and no `none` pattern does; partial when some match.
fn all_patterns(all: &[Regex], none: &[Regex], text: &str) -> (RequirementStatus, String) {
    let missing: Vec<&str> = all
        .iter()
        .filter(|r| !r.is_match(text))
        .map(|r| r.as_str())
        .collect();
    let forbidden: Vec<&str> = none
        .iter()
        .filter(|r| r.is_match(text))
        .map(|r| r.as_str())
        .collect();
    let found = all.len() - missing.len();
    let verdict = if missing.is_empty() && forbidden.is_empty() {
        RequirementStatus::Met
    } else if found > 0 {
        RequirementStatus::Partial
    } else {
        RequirementStatus::Missing
    };
    let mut detail = format!("{found} of {} patterns found", all.len());
    if !missing.is_empty() {
        detail.push_str(&format!("; not found: {}", clip_list(&missing)));
    }
    if !forbidden.is_empty() {
        detail.push_str(&format!(
            "; present but forbidden: {}",
            clip_list(&forbidden)
        ));
    }
    (verdict, detail)
}

/// Met when `pattern` matches at least `min` times; partial when it matches at all.
fn count_matches(pattern: &Regex, min: usize, text: &str) -> (RequirementStatus, String) {
    let n = pattern.find_iter(text).count();
    let verdict = if n >= min {
        RequirementStatus::Met
    } else if n > 0 {
        RequirementStatus::Partial
    } else {
        RequirementStatus::Missing
    };
    (
        verdict,
        format!("{n} matches of `{}` (need {min})", pattern.as_str()),
    )
}

/// Met when `pattern` occurs and every occurrence sits inside a `try` block; partial when some do.
fn guarded_uses(pattern: &Regex, text: &str) -> (RequirementStatus, String) {
    let at: Vec<usize> = pattern.find_iter(text).map(|m| m.start()).collect();
    let guarded = at.iter().filter(|&&i| inside_try(text, i)).count();
    let verdict = if at.is_empty() {
        RequirementStatus::Missing
    } else if guarded == at.len() {
        RequirementStatus::Met
    } else if guarded > 0 {
        RequirementStatus::Partial
    } else {
        RequirementStatus::Missing
    };
    let detail = if at.is_empty() {
        format!("`{}` not found", pattern.as_str())
    } else {
        format!(
            "{guarded} of {} uses of `{}` inside try",
            at.len(),
            pattern.as_str()
        )
    };
    (verdict, detail)
}

/// Met when every declared function is referenced; partial with one that is not.
fn no_dead_code(artifact: &Artifact) -> (RequirementStatus, String) {
    let dead = dead_functions(artifact);
    let verdict = match dead.len() {
        0 => RequirementStatus::Met,
        1 => RequirementStatus::Partial,
        _ => RequirementStatus::Missing,
    };
    let detail = if dead.is_empty() {
        "every declared function is referenced".to_string()
    } else {
        let names: Vec<&str> = dead.iter().map(String::as_str).collect();
        format!("declared and never referenced: {}", clip_list(&names))
    };
    (verdict, detail)
}

fn clip_list(items: &[&str]) -> String {
    let shown: Vec<&str> = items.iter().take(6).copied().collect();
    let more = items.len().saturating_sub(shown.len());
    let mut s = shown.join(", ");
    if more > 0 {
        s.push_str(&format!(" (+{more} more)"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn art(js: &str) -> Artifact {
        Artifact {
            html: String::new(),
            scripts: vec![js.to_string()],
        }
    }

    #[test]
    fn uncalled_functions_are_dead() {
        let a = art("function initAudio() {}\nfunction go() { draw(); }\nconst draw = () => 1;\ngo();\n// initAudio();\n");
        assert_eq!(dead_functions(&a), vec!["initAudio".to_string()]);
    }

    #[test]
    fn guards_are_seen_through_nesting() {
        let guarded =
            "function save(v) { try { if (v) { localStorage.setItem('k', v); } } catch (e) {} }";
        let bare = "function save(v) { if (v) { localStorage.setItem('k', v); } }";
        let check = StaticCheck::Guarded {
            pattern: Regex::new(r"localStorage\s*\.\s*setItem").unwrap(),
        };
        assert_eq!(
            run(&check, Source::Js, &art(guarded)).0,
            RequirementStatus::Met
        );
        assert_eq!(
            run(&check, Source::Js, &art(bare)).0,
            RequirementStatus::Missing
        );
    }

    #[test]
    fn comments_do_not_count_and_urls_survive() {
        assert_eq!(strip_comments("a /* b */ c // d\ne"), "a  c \ne");
        assert!(strip_comments("x = 'http://a'").contains("http://a"));
    }
}
