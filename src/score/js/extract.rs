//! Pulls the candidate function out of a model's answer: the fenced JavaScript block that
//! defines it (the last one, when a model revises itself; usage-example blocks are skipped), or
//! the code around its definition when nothing is fenced; then removes module and TypeScript
//! noise that a plain script cannot run.

use std::sync::OnceLock;

use regex::Regex;

use super::scan::{code_mask, depth_delta};
use super::typescript::{looks_typed, strip_types};

/// The code to run and where it came from (for the evidence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extraction {
    pub code: String,
    pub source: String,
}

/// Fence languages taken as JavaScript (an empty info string counts too).
const JS_LANGS: &[&str] = &[
    "",
    "js",
    "javascript",
    "jsx",
    "mjs",
    "cjs",
    "node",
    "nodejs",
    "es6",
    "ecmascript",
    "ts",
    "typescript",
    "tsx",
];

struct Fence<'a> {
    lang: String,
    body: &'a str,
}

/// The candidate code for `function`, or None when the answer holds no JavaScript.
pub fn extract(answer: &str, function: &str) -> Option<Extraction> {
    let blocks: Vec<Fence> = fences(answer)
        .into_iter()
        .filter(|f| JS_LANGS.contains(&f.lang.as_str()) && !f.body.trim().is_empty())
        .collect();
    let (code, lang, source) = if blocks.is_empty() {
        let code = unfenced(answer, function)?;
        (code, "", "unfenced".to_string())
    } else {
        let chosen = blocks
            .iter()
            .rposition(|f| definition_at(f.body, function).is_some())
            .unwrap_or(0);
        let source = if blocks.len() == 1 {
            "fenced block".to_string()
        } else {
            format!("fenced block {} of {}", chosen + 1, blocks.len())
        };
        let f = &blocks[chosen];
        (f.body, f.lang.as_str(), source)
    };
    let code = tidy(code, lang);
    (!code.trim().is_empty()).then_some(Extraction { code, source })
}

/// Markdown code fences (``` or ~~~, any indentation); an unclosed fence runs to the end, as
/// when the answer was cut off by the token budget.
fn fences(text: &str) -> Vec<Fence<'_>> {
    let mut out = Vec::new();
    let mut open: Option<(u8, usize, String, usize)> = None; // (char, run length, lang, body start)
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let marker = trimmed.as_bytes().first().copied();
        let run = |c: u8| trimmed.bytes().take_while(|b| *b == c).count();
        match &open {
            None => {
                if let Some(c @ (b'`' | b'~')) = marker {
                    let n = run(c);
                    if n >= 3 {
                        let info = trimmed[n..].trim().to_ascii_lowercase();
                        let lang = info
                            .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
                            .next()
                            .unwrap_or_default()
                            .to_string();
                        open = Some((c, n, lang, offset + line.len()));
                    }
                }
            }
            Some((c, n, lang, start)) => {
                if marker == Some(*c) && run(*c) >= *n && run(*c) == trimmed.len() {
                    out.push(Fence {
                        lang: lang.clone(),
                        body: &text[*start..offset],
                    });
                    open = None;
                }
            }
        }
        offset += line.len();
    }
    if let Some((_, _, lang, start)) = open {
        out.push(Fence {
            lang,
            body: &text[start.min(text.len())..],
        });
    }
    out
}

/// Where `code` defines `function` (`function f(`, `const f = (`, `let f = function`, `f = x =>`...).
fn definition_at(code: &str, function: &str) -> Option<usize> {
    static DEF: OnceLock<Regex> = OnceLock::new();
    let def = DEF.get_or_init(|| {
        Regex::new(
            r"(?:^|[^\w$.])(?P<def>(?:async\s+)?function\s*\*?\s*(?P<fname>[A-Za-z_$][\w$]*)\s*[<(]|(?:const|let|var)\s+(?P<vname>[A-Za-z_$][\w$]*)\s*(?::[^=\n]+)?=\s*(?:async\s+)?(?:function\b|\(|[A-Za-z_$][\w$]*\s*=>))",
        )
        .expect("static regex")
    });
    def.captures_iter(code).find_map(|c| {
        let name = c.name("fname").or_else(|| c.name("vname"))?;
        (name.as_str() == function).then(|| c.name("def").map_or(0, |m| m.start()))
    })
}

/// Keywords that start a line of code at top level.
fn starts_like_code(t: &str) -> bool {
    static CODE: OnceLock<Regex> = OnceLock::new();
    let code = CODE.get_or_init(|| {
        Regex::new(
            r#"^(?:(?:function|async|const|let|var|class|export|import|return|if|else|for|while|do|switch|try|catch|finally|throw)\b|['"]use strict['"]|//|/\*|\*|[})\]]|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(|\[|\s*[+\-*/]?=[^=]))"#,
        )
        .expect("static regex")
    });
    code.is_match(t)
}

/// No fence: the code around the definition. Upwards, indented and code-like lines are taken
/// (helpers defined before); downwards, everything inside brackets and code-like lines at top
/// level, up to the first line of prose.
fn unfenced<'a>(answer: &'a str, function: &str) -> Option<&'a str> {
    let def = definition_at(answer, function)?;
    let lines: Vec<(usize, &str)> = answer
        .split_inclusive('\n')
        .scan(0, |offset, line| {
            let start = *offset;
            *offset += line.len();
            Some((start, line))
        })
        .collect();
    let def_line = lines
        .iter()
        .rposition(|(start, _)| *start <= def)
        .unwrap_or(0);
    let mut first = def_line;
    while first > 0 {
        let line = lines[first - 1].1;
        let t = line.trim();
        if t.is_empty() || line.starts_with([' ', '\t']) || starts_like_code(t) {
            first -= 1;
        } else {
            break;
        }
    }
    let begin = lines[first].0;
    let region = &answer[begin..];
    let mask = code_mask(region);
    let mut depth = 0i64;
    let mut end = 0;
    for (i, (start, line)) in lines.iter().enumerate().skip(first) {
        let t = line.trim();
        if i > def_line && depth <= 0 && !t.is_empty() && !starts_like_code(t) {
            break;
        }
        let local = start - begin;
        depth = (depth + depth_delta(region, &mask, local..local + line.len())).max(0);
        end = local + line.len();
    }
    Some(region[..end].trim())
}

/// Removes what a plain script cannot run: `export` keywords, `import` lines, TypeScript types.
fn tidy(code: &str, lang: &str) -> String {
    static EXPORT: OnceLock<Regex> = OnceLock::new();
    static EXPORT_LIST: OnceLock<Regex> = OnceLock::new();
    static IMPORT: OnceLock<Regex> = OnceLock::new();
    let export = EXPORT.get_or_init(|| {
        Regex::new(
            r"(?m)^([ \t]*)export\s+(?:default\s+)?((?:async\s+)?function|const|let|var|class)\b",
        )
        .expect("static regex")
    });
    let export_list = EXPORT_LIST.get_or_init(|| {
        Regex::new(
            r"(?m)^[ \t]*export\s+(?:\{[^}\n]*\}|default\s+[A-Za-z_$][\w$]*)[ \t]*;?[ \t]*$\n?",
        )
        .expect("static regex")
    });
    let import = IMPORT.get_or_init(|| {
        Regex::new(
            r#"(?m)^[ \t]*import\s+(?:[^'"\n;]+\s+from\s+)?['"][^'"\n]+['"][ \t]*;?[ \t]*$\n?"#,
        )
        .expect("static regex")
    });
    let code = export.replace_all(code, "$1$2");
    let code = export_list.replace_all(&code, "");
    let code = import.replace_all(&code, "");
    let typed = matches!(lang, "ts" | "typescript" | "tsx") || looks_typed(&code);
    let code = if typed {
        strip_types(&code)
    } else {
        code.into_owned()
    };
    code.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(answer: &str) -> String {
        extract(answer, "hasCloseElements")
            .map(|e| e.code)
            .unwrap_or_default()
    }

    const FN: &str = "function hasCloseElements(numbers, threshold) {\n  for (let i = 0; i < numbers.length; i++) {\n    for (let j = i + 1; j < numbers.length; j++) {\n      if (Math.abs(numbers[i] - numbers[j]) < threshold) return true;\n    }\n  }\n  return false;\n}";

    #[test]
    fn fenced_with_prose_before_and_after() {
        let answer = format!(
            "Here's a simple O(n²) solution that checks every pair:\n\n```javascript\n{FN}\n```\n\nIt returns `true` as soon as a close pair is found, otherwise `false`."
        );
        let e = extract(&answer, "hasCloseElements").unwrap();
        assert_eq!(e.code, FN);
        assert_eq!(e.source, "fenced block");
    }

    #[test]
    fn second_fence_with_usage_examples_is_skipped() {
        let answer = format!(
            "```js\n{FN}\n```\n\nExample usage:\n\n```js\nconsole.log(hasCloseElements([1.0, 2.0, 3.0], 0.5)); // false\nconst result = hasCloseElements([1.0, 2.8, 3.0], 0.3);\n```"
        );
        let e = extract(&answer, "hasCloseElements").unwrap();
        assert_eq!(e.code, FN);
        assert_eq!(e.source, "fenced block 1 of 2");
    }

    #[test]
    fn a_revised_definition_wins_and_other_languages_are_ignored() {
        let answer = "First attempt:\n```js\nfunction hasCloseElements(a, t) { return true; }\n```\nIn Python this would be:\n```python\ndef has_close_elements(a, t): ...\n```\nCorrected:\n```js\nconst hasCloseElements = (a, t) => a.some((x, i) => a.some((y, j) => i !== j && Math.abs(x - y) < t));\n```";
        let e = extract(answer, "hasCloseElements").unwrap();
        assert!(
            e.code.starts_with("const hasCloseElements = (a, t) =>"),
            "{}",
            e.code
        );
        assert_eq!(e.source, "fenced block 2 of 2");
    }

    #[test]
    fn no_fence_at_all() {
        let answer = format!(
            "Sure! Here is the function:\n\n{FN}\n\nThis loops over each pair of numbers and compares their distance with the threshold."
        );
        let e = extract(&answer, "hasCloseElements").unwrap();
        assert_eq!(e.code, FN);
        assert_eq!(e.source, "unfenced");
        assert_eq!(code(FN), FN);
    }

    #[test]
    fn unfenced_keeps_a_helper_defined_before() {
        let answer = "The answer:\nconst dist = (a, b) => Math.abs(a - b);\n\nfunction hasCloseElements(xs, t) {\n  return xs.some((x, i) => xs.some((y, j) => i !== j && dist(x, y) < t));\n}\nDone.";
        assert_eq!(
            code(answer),
            "const dist = (a, b) => Math.abs(a - b);\n\nfunction hasCloseElements(xs, t) {\n  return xs.some((x, i) => xs.some((y, j) => i !== j && dist(x, y) < t));\n}"
        );
    }

    #[test]
    fn arrow_function_one_liner() {
        let answer = "You can write it as:\nconst hasCloseElements = (nums, t) => nums.some((a, i) => nums.slice(i + 1).some((b) => Math.abs(a - b) < t));\nThat is all.";
        assert_eq!(
            code(answer),
            "const hasCloseElements = (nums, t) => nums.some((a, i) => nums.slice(i + 1).some((b) => Math.abs(a - b) < t));"
        );
    }

    #[test]
    fn exports_imports_and_typescript_are_removed() {
        let answer = "```typescript\nimport { strict as assert } from 'assert';\n\nexport function hasCloseElements(numbers: number[], threshold: number): boolean {\n  return numbers.some((a, i) => numbers.some((b, j) => i !== j && Math.abs(a - b) < threshold));\n}\nexport default hasCloseElements;\n```";
        assert_eq!(
            code(answer),
            "function hasCloseElements(numbers, threshold) {\n  return numbers.some((a, i) => numbers.some((b, j) => i !== j && Math.abs(a - b) < threshold));\n}"
        );
    }

    #[test]
    fn a_cut_off_fence_is_still_taken() {
        let answer = "```js\nfunction hasCloseElements(a, t) {\n  for (let i = 0;";
        assert_eq!(
            code(answer),
            "function hasCloseElements(a, t) {\n  for (let i = 0;"
        );
    }

    #[test]
    fn answers_without_javascript() {
        assert_eq!(extract("I don't know.", "hasCloseElements"), None);
        assert_eq!(
            extract(
                "```python\ndef has_close_elements(): pass\n```",
                "hasCloseElements"
            ),
            None
        );
        // A fenced block that defines something else is still the candidate: the worker then
        // reports that the function is missing.
        assert_eq!(
            code("```js\nfunction other() {}\n```"),
            "function other() {}"
        );
    }
}
