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
    let code = tidy(code, lang, function);
    (!code.trim().is_empty()).then_some(Extraction { code, source })
}

/// Markdown code fences (``` or ~~~, any indentation); an unclosed fence runs to the end, as
/// when the answer was cut off by the token budget. Two ways models mangle fences are read as
/// meant: a fence line with a language inside an open block of the same fence (a stray opening
/// fence before ```javascript, a ```js block nested in a bare one) ends that block and opens the
/// next; a bare block whose first line is a JavaScript language name alone takes it as its
/// language.
fn fences(text: &str) -> Vec<Fence<'_>> {
    let mut out = Vec::new();
    let mut open: Option<Open> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let next = offset + line.len();
        match (&mut open, fence_line(trimmed)) {
            (None, Some(f)) => open = Some(Open::new(f, next)),
            (Some(o), Some(f)) if f.marker == o.marker && f.run >= o.run => {
                out.push(Fence {
                    lang: std::mem::take(&mut o.lang),
                    body: &text[o.start..offset],
                });
                open = (!f.info.is_empty()).then(|| Open::new(f, next));
            }
            (Some(o), _) if o.lang.is_empty() && text[o.start..offset].trim().is_empty() => {
                let word = trimmed.to_ascii_lowercase();
                if !word.is_empty() && JS_LANGS.contains(&word.as_str()) {
                    o.lang = word;
                    o.start = next;
                }
            }
            _ => {}
        }
        offset = next;
    }
    if let Some(o) = open {
        out.push(Fence {
            lang: o.lang,
            body: &text[o.start.min(text.len())..],
        });
    }
    out
}

/// A line of fence characters: which, how many, and the info string after them.
struct FenceLine<'a> {
    marker: u8,
    run: usize,
    info: &'a str,
}

fn fence_line(trimmed: &str) -> Option<FenceLine<'_>> {
    let marker @ (b'`' | b'~') = *trimmed.as_bytes().first()? else {
        return None;
    };
    let run = trimmed.bytes().take_while(|b| *b == marker).count();
    (run >= 3).then(|| FenceLine {
        marker,
        run,
        info: trimmed[run..].trim(),
    })
}

/// An open fence: its marker and run, its language (the info string's first word, lowercased)
/// and where its body starts.
struct Open {
    marker: u8,
    run: usize,
    lang: String,
    start: usize,
}

impl Open {
    fn new(f: FenceLine, start: usize) -> Self {
        let info = f.info.to_ascii_lowercase();
        let lang = info
            .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
            .next()
            .unwrap_or_default()
            .to_string();
        Open {
            marker: f.marker,
            run: f.run,
            lang,
            start,
        }
    }
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

/// Removes what a plain script cannot run (`export` keywords, `import` lines, TypeScript types)
/// and the usage examples that would run the function while the code loads (`without_usage`).
fn tidy(code: &str, lang: &str, function: &str) -> String {
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
    let code = without_usage(&code, function);
    let typed = matches!(lang, "ts" | "typescript" | "tsx") || looks_typed(&code);
    let code = if typed { strip_types(&code) } else { code };
    code.trim().to_string()
}

/// The code without its top-level usage statements: `console.log(f(...))`, `assert...`,
/// `f(...)` (with whatever a model writes after the call, `returns 3`) and `const r = f(...)`,
/// each with the lines its brackets span. Run while the code loads, they would call the function
/// outside its tests, and a throw (or a line of prose) there would keep the tests from running.
fn without_usage(code: &str, function: &str) -> String {
    let usage = Regex::new(&format!(
        r"^(?:console\s*\.|assert\b|(?:(?:const|let|var)\s+[A-Za-z_$][\w$]*\s*=\s*)?(?:await\s+)?{}\s*\()",
        regex::escape(function)
    ))
    .expect("escaped name");
    let mask = code_mask(code);
    let (mut depth, mut offset, mut skipping) = (0i64, 0, false);
    let mut kept = String::with_capacity(code.len());
    for line in code.split_inclusive('\n') {
        skipping |= depth == 0 && usage.is_match(line.trim_start());
        depth = (depth + depth_delta(code, &mask, offset..offset + line.len())).max(0);
        if !skipping {
            kept.push_str(line);
        }
        skipping &= depth > 0;
        offset += line.len();
    }
    kept
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
    /// Real answers from the committed runs (`runs/example-smollm2-kv-demo-catalogue`, `-kv-q4`): models
    /// open with a bare fence and then the ```javascript one, with or without a blank line
    /// between. Read as CommonMark, the fence line is the first line of code.
    const DOUBLED_FENCE: &str = "```\n```javascript\nfunction belowZero(operations) {\n    return operations.length <= 0;\n}\n```\n\nExample usage:\n```javascript\nbelowZero([1, 2, 3]) returns false\nbelowZero([1, 2, -4, 5]) returns true\n```";
    const DOUBLED_FENCE_BLANK: &str = "```\n\n```javascript\nfunction pairsSumToZero(l) {\n    return Math.abs(Math.max(x + y) - Math.min(x, y)) === 0;\n}\n```\n\nExample usage:\n```javascript\nconsole.log(pairsSumToZero([2, 4, -5, 3, 5, 7])); // true\nconsole.log(pairsSumToZero([1, 3, 5, 0])); // false\n```";
    /// Usage lines inside the code block: prose after a call, a call that throws while the code
    /// loads, a call with a stray bracket.
    const USAGE_RETURNS: &str = "```\nfunction common(l1, l2) {\n    return Array.from({\n        of: []\n    }, (_, i, index) => Array.from({\n        of: []\n    }, (_, i, index) => i === index + 1 ? i : i + 1))\n    return Array.from({\n        of: []\n    }, (_, i, index) => i === index + 1 ? i : i + 1)\n}\n\n// Example usage:\ncommon([1, 4, 3, 34, 653, 2, 5], [5, 7, 1, 5, 9, 653, 121]) returns [1, 5, 653]\n```\n\nThis function uses the `Array.from()` method to create a new array with the numbers that appear only once in both arrays. The `toString()` method is used to ensure that the output is a string with the same length as the input arrays.";
    const USAGE_THROWS: &str = "```\nconst largestDivisor = (n) => Math.max(Math.min(i, n), 1);\nconsole.log(largestDivisor(7)); // Output: 5\n```";
    const USAGE_UNBALANCED: &str = "```javascript\nfunction monotonic(arr) {\n    return arr.map((value, index) => value === 1).toString() == \"true\" && (index >= 0 && index < len(arr));\n}\nconsole.log(monotonic([1, 2, 4, 20]))); // true\n```";

    fn located(answer: &str, function: &str) -> Extraction {
        extract(answer, function).unwrap_or_else(|| panic!("nothing in {answer:?}"))
    }

    #[test]
    fn a_doubled_opening_fence_is_not_code() {
        let e = located(DOUBLED_FENCE, "belowZero");
        assert_eq!(
            e.code,
            "function belowZero(operations) {\n    return operations.length <= 0;\n}"
        );
        assert_eq!(e.source, "fenced block 1 of 2");
        let e = located(DOUBLED_FENCE_BLANK, "pairsSumToZero");
        assert_eq!(
            e.code,
            "function pairsSumToZero(l) {\n    return Math.abs(Math.max(x + y) - Math.min(x, y)) === 0;\n}"
        );
    }

    #[test]
    fn a_fenced_block_nested_in_a_bare_one_is_the_code() {
        let answer = format!("```\nHere it is:\n```js\n{FN}\n```\n```");
        assert_eq!(code(&answer), FN);
    }

    #[test]
    fn a_language_name_on_its_own_line_is_the_fence_language() {
        let answer = format!("```\njavascript\n{FN}\n```");
        assert_eq!(code(&answer), FN);
        let typed = "```\n\nts\nfunction hasCloseElements(xs: number[], t: number): boolean {\n  return false;\n}\n```";
        assert_eq!(
            code(typed),
            "function hasCloseElements(xs, t) {\n  return false;\n}"
        );
    }

    #[test]
    fn usage_lines_in_the_block_are_dropped() {
        let common = located(USAGE_RETURNS, "common").code;
        assert!(
            common.ends_with("i + 1)\n}\n\n// Example usage:"),
            "{common}"
        );
        assert_eq!(
            located(USAGE_THROWS, "largestDivisor").code,
            "const largestDivisor = (n) => Math.max(Math.min(i, n), 1);"
        );
        let monotonic = located(USAGE_UNBALANCED, "monotonic").code;
        assert!(monotonic.ends_with("len(arr));\n}"), "{monotonic}");
    }

    #[test]
    fn usage_inside_the_function_and_other_calls_are_kept() {
        let answer = "```js\nconst memo = new Map();\nfunction hasCloseElements(a, t) {\n  console.log(a);\n  return hasCloseElements.inner(a, t);\n}\nhasCloseElements.inner = (a, t) =>\n  a.some((x, i) => a.some((y, j) => i !== j && Math.abs(x - y) < t));\nconst r = hasCloseElements(\n  [1, 2],\n  0.5,\n);\nconsole.log(\n  r,\n);\n```";
        assert_eq!(
            code(answer),
            "const memo = new Map();\nfunction hasCloseElements(a, t) {\n  console.log(a);\n  return hasCloseElements.inner(a, t);\n}\nhasCloseElements.inner = (a, t) =>\n  a.some((x, i) => a.some((y, j) => i !== j && Math.abs(x - y) < t));"
        );
    }
}
