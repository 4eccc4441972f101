//! Numeric scoring: find the final answer in free text and compare it with the expected value.
//!
//! Precedence when several numbers appear (the first rule that finds one wins):
//! 1. the last `\boxed{...}`;
//! 2. the last "answer is X" / "answer: X" / "final answer = X";
//! 3. the last markdown bold (`**X**`) holding a number, skipping headings such as `**Step 2:**`;
//! 4. the last number in the text (digits, fractions, `\frac{a}{b}`, number words such as "three").
//!
//! A number is a whole token: "13" never matches 3, and "3.5" is 3.5. Decimals match exactly, or,
//! when the answer gives at least two decimals, when it is the expected value rounded (0.17 for 1/6).

use std::sync::LazyLock;

use regex::Regex;

use super::Score;

/// A value the numeric scorer compares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A number and how many decimals it was written with.
    Number { value: f64, decimals: u32 },
    /// Minutes after midnight; `meridiem` says whether AM/PM was written.
    Time { minutes: u32, meridiem: bool },
}

impl Value {
    /// A canonical rendering, equal for equal values, used to compare endpoints' answers.
    pub fn canonical(&self) -> String {
        match *self {
            Value::Number { value, .. } => format_number(value),
            Value::Time { minutes, meridiem } => {
                let (h, m) = (minutes / 60, minutes % 60);
                if meridiem {
                    let suffix = if h >= 12 { "PM" } else { "AM" };
                    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
                    format!("{h12}:{m:02} {suffix}")
                } else {
                    format!("{h}:{m:02}")
                }
            }
        }
    }
}

fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        let s = format!("{value:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A value found in an answer, with the text it came from and the rule that chose it.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    pub value: Value,
    pub text: String,
    pub rule: &'static str,
}

/// Parse the catalogue's expected value.
pub fn parse_expected(expected: &str) -> Result<Value, String> {
    let want_time = TIME.is_match(expected);
    let tokens = if want_time {
        times(expected)
    } else {
        numbers(expected)
    };
    match tokens.as_slice() {
        [(_, v)] => Ok(*v),
        [] => Err(format!(
            "expected value `{expected}` is not a number or time of day"
        )),
        _ => Err(format!(
            "expected value `{expected}` holds more than one number"
        )),
    }
}

/// Find the answer's final value, following the documented precedence.
pub fn extract_number(answer: &str, want_time: bool) -> Option<Extracted> {
    let scan = |s: &str| if want_time { times(s) } else { numbers(s) };
    let last_in = |s: &str| scan(s).into_iter().last();
    let first_in = |s: &str| scan(s).into_iter().next();

    if let Some(inner) = last_boxed(answer) {
        if let Some((text, value)) = last_in(inner) {
            return Some(Extracted {
                value,
                text,
                rule: "\\boxed{}",
            });
        }
    }
    if let Some(tail) = ANSWER_IS
        .find_iter(answer)
        .last()
        .map(|m| &answer[m.end()..])
    {
        let line = tail.lines().next().unwrap_or("");
        if let Some((text, value)) = first_in(line) {
            return Some(Extracted {
                value,
                text,
                rule: "\"answer is\"",
            });
        }
    }
    let bold = BOLD
        .captures_iter(answer)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .filter(|s| !HEADING.is_match(s.trim()))
        .filter_map(first_in)
        .last();
    if let Some((text, value)) = bold {
        return Some(Extracted {
            value,
            text,
            rule: "bold",
        });
    }
    last_in(answer).map(|(text, value)| Extracted {
        value,
        text,
        rule: "last number",
    })
}

/// Whether an answer value matches the expected one.
pub fn matches(expected: Value, got: Value, tolerance: Option<f64>) -> bool {
    match (expected, got) {
        (Value::Number { value: e, .. }, Value::Number { value: a, decimals }) => {
            let diff = (a - e).abs();
            if let Some(t) = tolerance {
                return diff <= t + 1e-12;
            }
            diff <= 1e-9 * e.abs().max(1.0)
                || (decimals >= 2 && diff <= 0.5 * 10f64.powi(-(decimals as i32)) + 1e-12)
        }
        (
            Value::Time { minutes: e, .. },
            Value::Time {
                minutes: a,
                meridiem,
            },
        ) => a == e || (!meridiem && a < 13 * 60 && a % 720 == e % 720),
        _ => false,
    }
}

pub fn score(expected: &str, tolerance: Option<f64>, answer: &str) -> Score {
    let want = match parse_expected(expected) {
        Ok(v) => v,
        Err(e) => return Score::new(None, None, e),
    };
    let want_time = matches!(want, Value::Time { .. });
    match extract_number(answer, want_time) {
        None => Score::new(
            Some(false),
            None,
            format!(
                "no {} found; expected {expected}",
                if want_time { "time" } else { "number" }
            ),
        ),
        Some(found) => {
            let ok = matches(want, found.value, tolerance);
            let evidence = format!(
                "found `{}` ({}){}",
                found.text,
                found.rule,
                if ok {
                    String::new()
                } else {
                    format!("; expected {expected}")
                }
            );
            Score::new(Some(ok), Some(found.value.canonical()), evidence)
        }
    }
}

static ANSWER_IS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:final answer|answer|result|total)\b\s*(?:is|:|=|would be|will be)\s*:?")
        .unwrap()
});
static BOLD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\*\*([^*\n]+)\*\*").unwrap());
static HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:step|part|case|option|method|problem|question)\b|:$").unwrap()
});
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\\d?frac\s*\{\s*(?P<fn>\d+(?:\.\d+)?)\s*\}\s*\{\s*(?P<fd>\d+(?:\.\d+)?)\s*\}",
        r"|(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:\s*/\s*(?P<d>\d+(?:\.\d+)?))?",
        r"|(?i:\b(?P<w>(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?",
        r"|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen",
        r"|sixteen|seventeen|eighteen|nineteen|once|twice|thrice|hundred)\b)",
    ))
    .unwrap()
});
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?P<h>\d{1,2}):(?P<m>\d{2})(?:\s*(?P<ap>[ap])\.?\s?m\b\.?)?").unwrap()
});
static ONE_AS_PRONOUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:the|this|that|each|any|no|every|which|a|another|right|correct|wrong)\s+$")
        .unwrap()
});

/// Every number token in `s`, in order, with the text it was written as.
fn numbers(s: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for c in NUMBER.captures_iter(s) {
        let whole = c.get(0).unwrap();
        let text = whole.as_str().to_string();
        if let (Some(n), Some(d)) = (c.name("fn"), c.name("fd")) {
            if let Some(v) = fraction(n.as_str(), d.as_str()) {
                out.push((text, number(v, 6)));
            }
            continue;
        }
        if let Some(w) = c.name("w") {
            let before = &s[..w.start()];
            if w.as_str().eq_ignore_ascii_case("one") && ONE_AS_PRONOUN.is_match(before) {
                continue;
            }
            if let Some(v) = word_value(w.as_str()) {
                out.push((text, number(v, 0)));
            }
            continue;
        }
        let Some(n) = c.name("n") else { continue };
        // A number glued to letters or to a time ("x3", "10:54") is not an answer token.
        let prev = s[..whole.start()].chars().last();
        let next = s[whole.end()..].chars().next();
        if prev.is_some_and(|p| p.is_alphabetic() || p == ':' || p == '_')
            || next.is_some_and(|x| {
                x == ':' && s[whole.end() + 1..].starts_with(|d: char| d.is_ascii_digit())
            })
        {
            continue;
        }
        let negative = is_negative(&s[..whole.start()]);
        let sign = if negative { -1.0 } else { 1.0 };
        let digits = n.as_str().replace(',', "");
        let value = if let Some(d) = c.name("d") {
            fraction(&digits, d.as_str()).map(|v| number(v, 6))
        } else {
            digits
                .parse::<f64>()
                .ok()
                .map(|v| number(v, decimals_of(&digits)))
        };
        if let Some(Value::Number { value, decimals }) = value {
            let text = if negative { format!("-{text}") } else { text };
            out.push((
                text,
                Value::Number {
                    value: sign * value,
                    decimals,
                },
            ));
        }
    }
    out
}

fn number(value: f64, decimals: u32) -> Value {
    Value::Number { value, decimals }
}

fn decimals_of(digits: &str) -> u32 {
    digits
        .split_once('.')
        .map(|(_, f)| f.len() as u32)
        .unwrap_or(0)
}

fn fraction(n: &str, d: &str) -> Option<f64> {
    let (n, d) = (n.parse::<f64>().ok()?, d.parse::<f64>().ok()?);
    (d != 0.0).then(|| n / d)
}

/// A minus sign right before the number, not joining two numbers ("3-4" is a range, not -4).
fn is_negative(before: &str) -> bool {
    let mut rev = before.chars().rev();
    match rev.next() {
        Some('-') | Some('−') => !rev.next().is_some_and(|c| c.is_alphanumeric() || c == ')'),
        _ => false,
    }
}

fn word_value(w: &str) -> Option<f64> {
    const UNITS: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    let w = w.to_ascii_lowercase();
    match w.as_str() {
        "once" => return Some(1.0),
        "twice" => return Some(2.0),
        "thrice" => return Some(3.0),
        "hundred" => return Some(100.0),
        _ => {}
    }
    if let Some(i) = UNITS.iter().position(|u| *u == w) {
        return Some(i as f64);
    }
    let mut parts = w.split(['-', ' ']);
    let tens = TENS.iter().position(|t| Some(*t) == parts.next())? as f64 * 10.0 + 20.0;
    let unit = match parts.next() {
        Some(u) => UNITS.iter().position(|x| *x == u)? as f64,
        None => 0.0,
    };
    Some(tens + unit)
}

/// Every time of day in `s`, in order.
fn times(s: &str) -> Vec<(String, Value)> {
    TIME.captures_iter(s)
        .filter_map(|c| {
            let h: u32 = c["h"].parse().ok()?;
            let m: u32 = c["m"].parse().ok()?;
            if m >= 60 || h >= 24 {
                return None;
            }
            let value = match c.name("ap").map(|a| a.as_str().to_ascii_lowercase()) {
                Some(ap) => {
                    if h == 0 || h > 12 {
                        return None;
                    }
                    let h24 = (h % 12) + if ap == "p" { 12 } else { 0 };
                    Value::Time {
                        minutes: h24 * 60 + m,
                        meridiem: true,
                    }
                }
                None => Value::Time {
                    minutes: h * 60 + m,
                    meridiem: false,
                },
            };
            Some((c[0].to_string(), value))
        })
        .collect()
}

/// The contents of the last `\boxed{...}`, braces balanced.
fn last_boxed(s: &str) -> Option<&str> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(expected: &str, answer: &str) -> bool {
        score(expected, None, answer).correct == Some(true)
    }

    #[test]
    fn accepts_the_many_ways_of_writing_three() {
        for a in [
            "3",
            "**3**",
            "three",
            "\\boxed{3}",
            "The answer is 3.",
            "The letter r appears 3 times in strawberry.",
            "There are three r's in \"strawberry\".",
            "r appears twice in 'berry' and once in 'straw', so 3 in total.",
            "Answer: 3",
        ] {
            assert!(ok("3", a), "should accept {a:?}");
        }
    }

    #[test]
    fn rejects_near_misses() {
        for a in [
            "13",
            "3.5",
            "The answer is 13.",
            "**2**",
            "There are two r's.",
            "30",
        ] {
            assert!(!ok("3", a), "should reject {a:?}");
        }
    }

    #[test]
    fn latex_fractions_match_plain_fractions() {
        assert!(ok("1/6", "The probability is \\frac{1}{6}."));
        assert!(ok("1/6", "$\\boxed{\\dfrac{1}{6}}$"));
        assert!(ok("1/6", "1/6"));
        assert!(ok("1/6", "about 0.17"));
        assert!(!ok("1/6", "1/36"));
        assert!(!ok("1/6", "0.2"));
    }

    #[test]
    fn units_and_currency_are_ignored() {
        assert!(ok("656", "The H-alpha line is at about 656 nm."));
        assert!(ok("7.5", "The angle is 7.5 degrees."));
        assert!(ok("18", "She makes $18 every day."));
        assert!(ok("2.4", "Together they need 2.4 hours."));
        assert!(!ok("2.4", "Together they need 1.2 hours."));
    }

    #[test]
    fn precedence_prefers_explicit_answers_over_trailing_numbers() {
        assert!(ok("5", "The answer is 5. (Check: 3^2 + 4^2 = 25.)"));
        assert!(ok("3", "There are **3** r's. Positions 3, 8 and 9."));
        assert!(ok(
            "3",
            "**Step 1:** count the letters. It appears 3 times."
        ));
    }

    #[test]
    fn ranges_are_not_negative_numbers() {
        assert!(ok("5", "A 3-4-5 triangle has hypotenuse 5"));
        assert!(ok("-4", "x = -4"));
    }

    #[test]
    fn times_of_day() {
        assert!(ok("10:54 AM", "They meet at 10:54 AM."));
        assert!(ok("10:54 AM", "The trains meet at 10:54."));
        assert!(!ok("10:54 AM", "They meet at 10:54 PM."));
        assert!(!ok("10:54 AM", "They meet at 11:06 AM."));
    }

    #[test]
    fn pronoun_one_is_not_a_number() {
        assert!(ok(
            "2",
            "There are 2 such numbers, and the right one is obvious."
        ));
    }

    #[test]
    fn expected_values_must_parse() {
        assert!(parse_expected("abc").is_err());
        assert!(parse_expected("1 or 2").is_err());
        assert_eq!(
            parse_expected("656 nm").unwrap(),
            Value::Number {
                value: 656.0,
                decimals: 0
            }
        );
    }
}
