//! Cheap removal of TypeScript annotations from a short function, so an answer written in
//! TypeScript-ish JavaScript still runs: parameter and return types, `let x: T`, `as T`,
//! `interface`/`type` declarations, generics after `function` and `new`, non-null `!`.
//! Heuristic by design: it handles what models write for small tasks, not the language.

use std::sync::OnceLock;

use regex::Regex;

use super::scan::{code_mask, matching_close};

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex"))
}

/// Whether the code shows TypeScript annotations on a function signature or a declaration.
pub fn looks_typed(code: &str) -> bool {
    static TYPED: OnceLock<Regex> = OnceLock::new();
    re(
        &TYPED,
        r"(?m)(?:\(\s*|,\s*)[A-Za-z_$][\w$]*\??\s*:\s*[A-Za-z_${\[(]|\)\s*:\s*[A-Za-z_$][\w$<>\[\]| ]*\s*(?:\{|=>)|\b(?:const|let|var)\s+[A-Za-z_$][\w$]*\s*:\s*[A-Za-z_$]|^\s*(?:export\s+)?(?:interface|type)\s+[A-Za-z_$]",
    )
    .is_match(code)
}

/// The code with TypeScript annotations removed (best effort).
pub fn strip_types(code: &str) -> String {
    let code = strip_declarations(code);
    let code = strip_signatures(&code);
    map_code_segments(&code, strip_inline)
}

/// Drops `interface X { ... }` blocks (without nested braces) and `type X = ...;` lines.
fn strip_declarations(code: &str) -> String {
    static INTERFACE: OnceLock<Regex> = OnceLock::new();
    static ALIAS: OnceLock<Regex> = OnceLock::new();
    let code = re(
        &INTERFACE,
        r"(?m)^[ \t]*(?:export\s+)?interface\s+[A-Za-z_$][\w$]*[^{\n]*\{[^{}]*\}[ \t]*;?[ \t]*\n?",
    )
    .replace_all(code, "");
    re(
        &ALIAS,
        r"(?m)^[ \t]*(?:export\s+)?type\s+[A-Za-z_$][\w$]*(?:<[^>\n]*>)?\s*=[^;]*;[ \t]*\n?",
    )
    .replace_all(&code, "")
    .into_owned()
}

/// Removes parameter annotations and return types from every parameter list that is a function's:
/// after `function [name]`, or followed by `=>` (possibly after a return type).
fn strip_signatures(code: &str) -> String {
    let mask = code_mask(code);
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'(' || !mask[i] {
            i += 1;
            continue;
        }
        let Some(close) = matching_close(code, &mask, i) else {
            break;
        };
        let after = &code[close + 1..];
        let return_end = return_type_end(after);
        let is_params = after.trim_start().starts_with("=>")
            || return_end.is_some_and(|(_, arrow)| arrow)
            || after_function_keyword(&code[..i]);
        if !is_params {
            i += 1;
            continue;
        }
        out.push_str(&code[copied..=i]);
        out.push_str(&strip_params(&code[i + 1..close]));
        out.push(')');
        copied = close + 1;
        if let Some((len, _)) = return_end {
            out.push(' ');
            copied += len;
        }
        i = copied;
    }
    out.push_str(&code[copied..]);
    out
}

/// Whether the text before a `(` ends with `function`, `function name` or `function name<T>`.
fn after_function_keyword(before: &str) -> bool {
    static FUNCTION: OnceLock<Regex> = OnceLock::new();
    re(
        &FUNCTION,
        r"(?:^|[^\w$])function\s*\*?\s*(?:[A-Za-z_$][\w$]*)?\s*(?:<[^<>()]*>)?\s*$",
    )
    .is_match(before)
}

/// For text right after a `)`: the length of a `: ReturnType` annotation (up to the `{` or `=>`
/// that follows), and whether an arrow follows it.
fn return_type_end(after: &str) -> Option<(usize, bool)> {
    static RETURN: OnceLock<Regex> = OnceLock::new();
    let m = re(
        &RETURN,
        r"^\s*:\s*[A-Za-z_$][\w$.<>\[\]|&, ]*?(?:\[\])*\s*(\{|=>)",
    )
    .captures(after)?;
    let end = m.get(1)?;
    Some((end.start(), end.as_str() == "=>"))
}

/// `a: number, b?: string[] = []` -> `a, b = []`: drops each parameter's top-level `: Type`
/// (before its default value) and the optional marker.
fn strip_params(params: &str) -> String {
    split_top_level(params, b',')
        .into_iter()
        .map(|param| {
            let default_at = top_level_assign(param).unwrap_or(param.len());
            let (head, default) = param.split_at(default_at);
            let name = split_top_level(head, b':')[0].trim_end();
            let name = name.trim_end_matches('?');
            if default.is_empty() {
                name.to_string()
            } else {
                format!("{name} {}", default.trim_start())
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Splits at `sep` outside brackets (`()[]{}<>`) and strings; `=>` does not close a `<`.
fn split_top_level(text: &str, sep: u8) -> Vec<&str> {
    let mask = code_mask(text);
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0i64;
    let mut start = 0;
    for i in 0..bytes.len() {
        if !mask[i] {
            continue;
        }
        match bytes[i] {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'=' => {}
            b')' | b']' | b'}' | b'>' => depth -= 1,
            b if b == sep && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The index of a top-level `=` that starts a default value (not `==`, `=>`, `<=`, `>=`).
fn top_level_assign(param: &str) -> Option<usize> {
    let mask = code_mask(param);
    let bytes = param.as_bytes();
    let mut depth = 0i64;
    for i in 0..bytes.len() {
        if !mask[i] {
            continue;
        }
        match bytes[i] {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'>' if i == 0 || bytes[i - 1] != b'=' => depth -= 1,
            b'=' if depth == 0 => {
                let prev = if i > 0 { bytes[i - 1] } else { b' ' };
                let next = bytes.get(i + 1).copied().unwrap_or(b' ');
                if !matches!(prev, b'=' | b'!' | b'<' | b'>') && !matches!(next, b'=' | b'>') {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Annotations that regexes handle, applied to code only (never inside strings or comments).
fn strip_inline(segment: &str) -> String {
    static VAR: OnceLock<Regex> = OnceLock::new();
    static AS: OnceLock<Regex> = OnceLock::new();
    static GENERIC: OnceLock<Regex> = OnceLock::new();
    static NON_NULL: OnceLock<Regex> = OnceLock::new();
    let s = re(
        &VAR,
        r"\b(const|let|var)(\s+)([A-Za-z_$][\w$]*)\s*:\s*[^=;\n]+?\s*(=|;|\n)",
    )
    .replace_all(segment, "$1$2$3 $4");
    let s = re(
        &AS,
        r"\s+as\s+(?:const\b|[A-Za-z_$][\w$.]*(?:<[^<>]*>)?(?:\[\])*)",
    )
    .replace_all(&s, "");
    let s = re(
        &GENERIC,
        r"\b(new\s+[A-Za-z_$][\w$.]*|function\s*[A-Za-z_$][\w$]*)\s*<[^<>()]*(?:<[^<>()]*>[^<>()]*)*>\s*\(",
    )
    .replace_all(&s, "$1(");
    re(&NON_NULL, r"([\w$)\]])!([\s.\[),;])")
        .replace_all(&s, "$1$2")
        .into_owned()
}

/// Applies `f` to each maximal run of code bytes, copying strings and comments unchanged.
fn map_code_segments(code: &str, f: impl Fn(&str) -> String) -> String {
    let mask = code_mask(code);
    let mut out = String::with_capacity(code.len());
    let mut start = 0;
    while start < code.len() {
        let is_code = mask[start];
        let mut end = start;
        while end < code.len() && mask[end] == is_code {
            end += 1;
        }
        while !code.is_char_boundary(end) {
            end += 1;
        }
        let part = &code[start..end];
        if is_code {
            out.push_str(&f(part));
        } else {
            out.push_str(part);
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_lose_their_types() {
        let ts = "function hasCloseElements(numbers: number[], threshold: number): boolean {\n  return false;\n}";
        assert!(looks_typed(ts));
        assert_eq!(
            strip_types(ts),
            "function hasCloseElements(numbers, threshold) {\n  return false;\n}"
        );
        let arrow = "const f = (xs: Array<number>, k?: number): number[] => xs.slice(0, k);";
        assert_eq!(strip_types(arrow), "const f = (xs, k) => xs.slice(0, k);");
    }

    #[test]
    fn defaults_destructuring_and_ternaries_survive() {
        let ts = "function f({ a, b }: Opts, n: number = a > 1 ? 2 : 3) { return g(a ? b : n); }";
        assert_eq!(
            strip_types(ts),
            "function f({ a, b }, n = a > 1 ? 2 : 3) { return g(a ? b : n); }"
        );
    }

    #[test]
    fn declarations_casts_generics_and_non_null_go() {
        let ts = "interface Pair { a: number; b: number }\ntype Num = number;\nfunction f<T>(xs: T[]): T {\n  const seen: Map<string, number> = new Map<string, number>();\n  let y = xs[0] as T;\n  return seen.get('as x')! ?? y;\n}";
        let js = strip_types(ts);
        assert_eq!(
            js,
            "function f(xs) {\n  const seen = new Map();\n  let y = xs[0];\n  return seen.get('as x') ?? y;\n}"
        );
    }

    #[test]
    fn plain_javascript_is_not_typed_and_is_left_alone() {
        let js = "function f(a, b = { x: 1 }) {\n  const o = { k: a ? 1 : 2 };\n  return o;\n}";
        assert!(!looks_typed(js));
        assert_eq!(strip_types(js), js);
    }
}
