//! Where a final answer sits in free text: the last `\boxed{...}`, the clause after the last
//! "the answer is" marker (or a GSM8K-style `#### 18` line), and markdown bold spans. Shared by
//! the numeric and choice scorers.

use std::sync::LazyLock;

use regex::Regex;

static ANSWER_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:final\s+answer|answer|correct\s+(?:answer|option|choice)|right\s+(?:answer|option))",
        r"\b\**\s*(?:is|:|=|would be|will be|should be)\s*:?",
    ))
    .unwrap()
});
/// `#### 18` at the start of a line (the GSM8K answer line); a `#### Heading` is not one.
static HASH_MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t]*####[ \t]*(?P<v>[$\\-−]*\d)").unwrap());
static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[.;!?](?:\s|$)").unwrap());
static BOLD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\*\*([^*\n]+)\*\*").unwrap());

/// The contents of the last `\boxed{...}`, braces balanced.
pub fn last_boxed(s: &str) -> Option<&str> {
    let start = s.rfind("\\boxed{")? + "\\boxed{".len();
    let mut depth = 1;
    for (i, c) in s[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&s[start..start + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The clause after the last "answer is" / "answer:" / "final answer =" / "correct option is" /
/// `####`: the rest of that line up to the end of its sentence, or the next non-empty line when
/// the marker ends its line ("The answer is:\n\n**3**").
pub fn after_answer_marker(s: &str) -> Option<&str> {
    let words = ANSWER_MARKER.find_iter(s).last().map(|m| m.end());
    let hashes = HASH_MARKER
        .captures_iter(s)
        .last()
        .and_then(|c| c.name("v"))
        .map(|m| m.start());
    let tail = &s[words.max(hashes)?..];
    let mut lines = tail.lines();
    let first = lines.next().unwrap_or("");
    let line = if first.trim().trim_matches('*').trim().is_empty() {
        lines.find(|l| !l.trim().is_empty()).unwrap_or("")
    } else {
        first
    };
    Some(
        SENTENCE_END
            .find(line)
            .map_or(line, |m| &line[..m.start()])
            .trim(),
    )
}

/// Every byte range of `s` the text marks as its answer: the last `\boxed{}`'s contents, the
/// clause after the last answer phrase (see [`after_answer_marker`]) and every bold span.
pub fn marked_spans(s: &str) -> Vec<(usize, usize)> {
    let span = |part: &str| {
        let a = super::text::offset_in(s, part);
        (a, a + part.len())
    };
    last_boxed(s)
        .into_iter()
        .chain(after_answer_marker(s))
        .chain(bold_spans(s))
        .map(span)
        .collect()
}

/// The inner text of every `**bold**` span, in order.
pub fn bold_spans(s: &str) -> impl Iterator<Item = &str> {
    BOLD.captures_iter(s)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxed_values_keep_nested_braces() {
        assert_eq!(
            last_boxed("\\boxed{1} then \\boxed{\\frac{1}{6}}"),
            Some("\\frac{1}{6}")
        );
        assert_eq!(last_boxed("\\boxed{open"), None);
        assert_eq!(last_boxed("no box"), None);
    }

    #[test]
    fn the_clause_after_the_last_marker() {
        assert_eq!(
            after_answer_marker("The answer is 5. (Check: 25.)"),
            Some("5")
        );
        assert_eq!(
            after_answer_marker("Answer: 3\nFinal answer: **4**"),
            Some("**4**")
        );
        assert_eq!(
            after_answer_marker("The answer is:\n\n  B) Paris\n"),
            Some("B) Paris")
        );
        assert_eq!(
            after_answer_marker("The correct option is B; A is wrong."),
            Some("B")
        );
        assert_eq!(after_answer_marker("No marker here: 3"), None);
        assert_eq!(after_answer_marker("9 * 2 = 18\n#### 18"), Some("18"));
        assert_eq!(after_answer_marker("#### 2\nThe answer is 24."), Some("24"));
        assert_eq!(after_answer_marker("#### Step 1\nAdd 3."), None);
    }

    #[test]
    fn bold_spans_in_order() {
        let spans: Vec<&str> = bold_spans("**Step 1:** x **3** and **B**").collect();
        assert_eq!(spans, ["Step 1:", "3", "B"]);
    }
}
