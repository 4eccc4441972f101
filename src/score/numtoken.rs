//! Number tokens in free text: digits, decimals, fractions (`a/b`, `\frac{a}{b}`, `½`, "one
//! sixth"), mixed numbers, percentages, number words and times of day, each with its position and
//! whether it is an aside (a value that is unlikely to be the answer).
//!
//! A token is an aside when it is unlikely to be the stated answer even though it is a number:
//! - inside parentheses or brackets ("3 r's (positions 3, 8, 9)", "5 km (3.1 miles)");
//! - part of an enumeration ("3, 8 and 9"; not one value written twice, "6/36, or 1/6") or a
//!   list marker at the start of a line ("2. ...");
//! - a step, position or label number: after "step", "part", "case", "line", "position",
//!   "chapter", ... ("Step 2", "position 3");
//! - part of a name: after a capitalised word ("Apollo 11", "Windows 10", but not "About 60" or
//!   "Only 3") or a hyphen ("carbon-14", "COVID-19");
//! - the day of a date ("20 July", "July 20"; the year in "July 1969" is not an aside);
//! - negated: after "not", "rather than", "instead of" ("5, not 3");
//! - a reference point: after "after", "before", "since", "from", "until" ("54 minutes after
//!   10:00 AM", "from 9:40 AM");
//! - joined to another number or a word by a hyphen: ranges and compound modifiers ("3-4-5",
//!   "1503-1506", "9:40-10:30", "a 10-minute break");
//! - a level of a transition ("the n=3 to n=2 transition", "n=3 → n=2");
//! - the denominator of "3 out of 10" when a whole number is wanted.
//!
//! Thousands are separated by commas or by the no-break and thin spaces of typeset numbers
//! ("43,520", "43 520" with U+202F); a plain space separates two numbers ("110 195").
//!
//! Digits glued to letters, exponents or radicals ("x3", "1e7", "10^2", "√5"), ordinals ("3rd") and the parts of a
//! time ("10:54") are not numbers at all. "three hundred" is 300.

use std::sync::LazyLock;

use regex::{Captures, Match, Regex};

/// What the expected value asks for; it decides how ambiguous text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// A time of day ("10:54 AM").
    Time,
    /// A whole number: "3 out of 10 letters" reads as 3.
    Whole,
    /// A non-integer: "1 in 6" and "6 out of 36" read as fractions.
    Real,
    /// A percentage: values are fractions (16% is 0.16) and a bare number of at least 1 is
    /// read as a percent ("16" is 16%).
    Percent,
}

/// A value the numeric scorer compares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A number and how many decimals it was written with (fractions count as 6).
    Number { value: f64, decimals: u32 },
    /// Minutes after midnight; `meridiem` says whether AM/PM was written.
    Time { minutes: u32, meridiem: bool },
}

/// One number or time found in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub text: String,
    pub value: Value,
    pub start: usize,
    pub end: usize,
    pub aside: bool,
    /// Written as a percentage ("16%", "16 percent").
    pub percent: bool,
}

/// Every number (or, for [`Want::Time`], every time of day) in `s`, in order.
pub fn tokens(s: &str, want: Want) -> Vec<Token> {
    let mut out = if want == Want::Time {
        times(s)
    } else {
        numbers(s, want)
    };
    mark_asides(s, &mut out);
    out
}

/// Whether `s` holds a time of day such as `10:54` or `9:05 pm`.
pub fn has_time(s: &str) -> bool {
    TIME.is_match(s)
}

/// Whether `s` is written as a percentage.
pub fn has_percent(s: &str) -> bool {
    PERCENT_MARK.is_match(s)
}

static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\\[dt]?frac\s*\{\s*(?P<fn>\d+(?:\.\d+)?)\s*\}\s*\{\s*(?P<fd>\d+(?:\.\d+)?)\s*\}",
        r"|\\[dt]?frac\s*(?P<sn>\d)(?P<sd>\d)",
        r"|(?P<mw>\d+)[ \t]+(?P<mn>\d+)\s*[/⁄]\s*(?P<md>\d+)\b",
        r"|(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:[\u{a0}\u{2009}\u{202f}]\d{3})+(?:\.\d+)?",
        r"|\d+(?:\.\d+)?|\.\d+)(?P<nv>[½⅓⅔¼¾⅙⅛])?",
        r"(?:\s*[/⁄]\s*(?P<d>\d+(?:\.\d+)?))?(?P<pct>\s*%|\s*(?i:per\s?cent)\b)?",
        r"|(?P<v>[½⅓⅔¼¾⅙⅛])",
        r"|(?i:\b(?P<fw>one|a|two|three|four|five)[- ]",
        r"(?P<fwd>half|halves|thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|ninths?|tenths?|twelfths?)\b)",
        r"|(?i:\b(?P<w>(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?",
        r"|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen",
        r"|sixteen|seventeen|eighteen|nineteen|once|twice|thrice|hundred)\b)(?P<wpct>\s+(?i:per\s?cent)\b)?",
    ))
    .unwrap()
});
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?P<h>\d{1,2}):(?P<m>\d{2})(?:\s*(?P<ap>[ap])(?:\.\s?m\b\.?|\s?m\b))?")
        .unwrap()
});
static PERCENT_MARK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)%|\bper\s?cent\b").unwrap());
static ONE_AS_PRONOUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:the|this|that|each|any|no|every|which|a|another|right|correct|wrong)\s+$")
        .unwrap()
});
/// "one 12 carbon atom": "one" before a number is a determiner.
static BEFORE_DIGITS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s+\d").unwrap());
static RATIO_GAP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^\s+(?:in|out\s+of)\s+$").unwrap());
static ENUM_GAP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^\s*(?:,|,\s*and|,\s*or|and|or|&)\s*$").unwrap());
static STEP_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:step|part|case|stage|round|line|row|item|positions?|index|indices|page",
        r"|chapter|figure|section|version|no\.)\s+$",
    ))
    .unwrap()
});
/// A capitalised word right before the number ("Apollo 11"), or a word and a hyphen
/// ("carbon-14").
static NAME_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:(?:^|[^\p{L}])(?P<word>\p{Lu}\p{Ll}+)[ \u{a0}]|\p{L}[-‑])$").unwrap()
});
/// Capitalised words that introduce a quantity rather than name a thing ("About 60", "Only 3").
const NOT_NAMES: &[&str] = &[
    "about",
    "above",
    "after",
    "all",
    "almost",
    "also",
    "and",
    "answer",
    "approx",
    "approximately",
    "are",
    "around",
    "at",
    "be",
    "before",
    "below",
    "but",
    "by",
    "each",
    "every",
    "exactly",
    "final",
    "finally",
    "for",
    "from",
    "get",
    "gives",
    "has",
    "have",
    "he",
    "hence",
    "is",
    "it",
    "just",
    "less",
    "makes",
    "maybe",
    "minus",
    "more",
    "multiply",
    "nearly",
    "now",
    "of",
    "on",
    "only",
    "or",
    "over",
    "perhaps",
    "plus",
    "precisely",
    "probably",
    "result",
    "roughly",
    "she",
    "since",
    "so",
    "some",
    "still",
    "sum",
    "that",
    "then",
    "there",
    "therefore",
    "they",
    "this",
    "thus",
    "to",
    "total",
    "under",
    "up",
    "was",
    "we",
    "were",
    "with",
    "yes",
    "you",
];
static MONTH: &str = concat!(
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?",
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?",
);
static MONTH_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"(?i)\b{MONTH}[ \u{{a0}}]+$")).unwrap());
static MONTH_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)^(?:st|nd|rd|th)?[ \u{{a0}}]+(?:of\s+)?{MONTH}\b"
    ))
    .unwrap()
});
static MONTH_WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(&format!(r"^{MONTH}$")).unwrap());
static NEGATED_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:not|rather\s+than|instead\s+of)\s+(?:even\s+|just\s+|only\s+)?[$€£]?$")
        .unwrap()
});
static REFERENCE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:after|before|since|from|until|till)\s+[$€£]?$").unwrap()
});
/// A hyphen or dash glued to the number, then a digit or a letter ("3-4", "10-minute").
static HYPHEN_AFTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:\s*(?i:[ap]\.?m\.?))?[-‑–]\s?[\p{L}\d]").unwrap());
static HYPHEN_BEFORE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d[-‑–]$").unwrap());
/// "n=3 to n=2", "n = 3 → n = 2": the levels of a transition.
static LEVEL_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(?:\bto|→|->)\s*[a-z]\s*=\s*$").unwrap());
static LEVEL_AT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\b[a-z]\s*=\s*$").unwrap());
static LEVEL_AFTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^\s*(?:to|→|->)\s*[a-z]\s*=").unwrap());
static LIST_MARKER_AFTER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[.)][ \t]+\S").unwrap());
static ORDINAL_AFTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?i:st|nd|rd|th)(?:[^\p{L}]|$)").unwrap());

fn numbers(s: &str, want: Want) -> Vec<Token> {
    let out: Vec<Token> = NUMBER
        .captures_iter(s)
        .flat_map(|c| match_tokens(s, &c, want))
        .collect();
    merge_ratios(s, merge_hundreds(s, out), want)
}

/// A plain number token (not an aside, not a percent).
fn number_token(text: &str, start: usize, end: usize, value: f64, decimals: u32) -> Token {
    Token {
        text: text.to_string(),
        value: Value::Number { value, decimals },
        start,
        end,
        aside: false,
        percent: false,
    }
}

/// The tokens one match of `NUMBER` stands for (none when it is not a number after all).
fn match_tokens(s: &str, c: &Captures, want: Want) -> Vec<Token> {
    let Some(whole) = c.get(0) else {
        return Vec::new();
    };
    if let (Some(n), Some(d)) = (c.name("fn").or(c.name("sn")), c.name("fd").or(c.name("sd"))) {
        return fraction(n.as_str(), d.as_str())
            .map(|v| number_token(whole.as_str(), whole.start(), whole.end(), v, 6))
            .into_iter()
            .collect();
    }
    if let (Some(w), Some(n), Some(d)) = (c.name("mw"), c.name("mn"), c.name("md")) {
        return mixed_number(s, whole, w, n, d);
    }
    if let Some(v) = c.name("v") {
        let value = vulgar(v.as_str());
        return vec![number_token(
            v.as_str(),
            whole.start(),
            whole.end(),
            value,
            6,
        )];
    }
    if let (Some(n), Some(d)) = (c.name("fw"), c.name("fwd")) {
        return word_fraction(whole, n, d).into_iter().collect();
    }
    if let Some(w) = c.name("w") {
        return number_word(s, whole, w, c.name("wpct").is_some())
            .into_iter()
            .collect();
    }
    digits_token(s, c, whole, want).into_iter().collect()
}

/// "2 1/2" is one number, 2.5; "2 5/3" (or one glued to what precedes) is two.
fn mixed_number(s: &str, whole: Match, w: Match, n: Match, d: Match) -> Vec<Token> {
    let (start, end) = (whole.start(), whole.end());
    let (Ok(w_v), Some(f)) = (w.as_str().parse::<f64>(), fraction(n.as_str(), d.as_str())) else {
        return Vec::new();
    };
    if f < 1.0 && !glued_before(s, start) {
        vec![number_token(whole.as_str(), start, end, w_v + f, 6)]
    } else {
        // Not a mixed number ("2 5/3"): two separate tokens.
        vec![
            number_token(w.as_str(), w.start(), w.end(), w_v, 0),
            number_token(&s[n.start()..end], n.start(), end, f, 6),
        ]
    }
}

/// "a third", "two fifths".
fn word_fraction(whole: Match, n: Match, d: Match) -> Option<Token> {
    let num = if n.as_str().eq_ignore_ascii_case("a") {
        Some(1.0)
    } else {
        word_value(n.as_str())
    };
    let (num, den) = (num?, denominator_word(d.as_str())?);
    Some(number_token(
        whole.as_str(),
        whole.start(),
        whole.end(),
        num / den,
        6,
    ))
}

/// A number word ("seven", "twenty percent"); "one" as a pronoun or before digits is none.
fn number_word(s: &str, whole: Match, w: Match, percent: bool) -> Option<Token> {
    let (start, end) = (whole.start(), whole.end());
    let one = w.as_str().eq_ignore_ascii_case("one");
    if one && (ONE_AS_PRONOUN.is_match(&s[..start]) || BEFORE_DIGITS.is_match(&s[end..])) {
        return None;
    }
    let v = word_value(w.as_str())?;
    let (v, decimals) = if percent { (v / 100.0, 2) } else { (v, 0) };
    let mut token = number_token(whole.as_str(), start, end, v, decimals);
    token.percent = percent;
    Some(token)
}

/// Digits with their sign, thousands separators, vulgar fraction, "/d" fraction or percent;
/// read as a percent when `want` asks for one. None when glued to a word or unreadable.
fn digits_token(s: &str, c: &Captures, whole: Match, want: Want) -> Option<Token> {
    let (start, end) = (whole.start(), whole.end());
    let n = c.name("n")?;
    if glued_before(s, start) || glued_after(s, n.end()) {
        return None;
    }
    let digits = n
        .as_str()
        .replace([',', '\u{a0}', '\u{2009}', '\u{202f}'], "");
    let mut value = digits.parse::<f64>().ok()?;
    let mut decimals = decimals_of(&digits);
    if let Some(v) = c.name("nv") {
        value += vulgar(v.as_str());
        decimals = 6;
    }
    if let Some(d) = c.name("d") {
        (value, decimals) = (fraction(&digits, d.as_str())?, 6);
    } else if c.name("pct").is_some() {
        (value, decimals) = (value / 100.0, decimals + 2);
    }
    let (text, value) = if is_negative(&s[..start]) {
        (format!("-{}", whole.as_str()), -value)
    } else {
        (whole.as_str().to_string(), value)
    };
    let read_as_percent = want == Want::Percent
        && c.name("pct").is_none()
        && c.name("d").is_none()
        && value.abs() >= 1.0;
    let (value, decimals) = if read_as_percent {
        (value / 100.0, decimals + 2)
    } else {
        (value, decimals)
    };
    let mut token = number_token(text.trim_end(), start, end, value, decimals);
    token.percent = c.name("pct").is_some() && c.name("d").is_none();
    Some(token)
}

/// "three hundred" is one number, 300.
fn merge_hundreds(s: &str, tokens: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    for t in tokens {
        let hundred = t.text.eq_ignore_ascii_case("hundred");
        match out.last_mut() {
            Some(prev)
                if hundred
                    && prev.end <= t.start
                    && s[prev.end..t.start].trim().is_empty()
                    && !prev.percent =>
            {
                if let Value::Number { value, decimals } = prev.value {
                    prev.value = Value::Number {
                        value: value * 100.0,
                        decimals,
                    };
                    prev.text = s[prev.start..t.end].to_string();
                    prev.end = t.end;
                }
            }
            _ => out.push(t),
        }
    }
    out
}

/// "1 in 6" and "6 out of 36": one fraction when a non-integer is wanted; otherwise the count
/// comes first and the denominator is an aside.
fn merge_ratios(s: &str, tokens: Vec<Token>, want: Want) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    for t in tokens {
        let ratio_with_previous = out
            .last()
            .is_some_and(|p| p.end <= t.start && RATIO_GAP.is_match(&s[p.end..t.start]));
        if !ratio_with_previous {
            out.push(t);
            continue;
        }
        let prev = out.last_mut().unwrap();
        let (Value::Number { value: a, .. }, Value::Number { value: b, .. }) =
            (prev.value, t.value)
        else {
            out.push(t);
            continue;
        };
        if matches!(want, Want::Real | Want::Percent) && b != 0.0 {
            prev.value = Value::Number {
                value: a / b,
                decimals: 6,
            };
            prev.text = s[prev.start..t.end].to_string();
            prev.end = t.end;
        } else {
            out.push(Token { aside: true, ..t });
        }
    }
    out
}

/// A letter, underscore, colon, exponent or radical right before the digits ("x3", "10:54",
/// "10^2", "√5").
fn glued_before(s: &str, start: usize) -> bool {
    let before = &s[..start];
    let trimmed = before.trim_end_matches(['-', '{', '−']);
    if trimmed.ends_with(['^', '√']) {
        return true;
    }
    before
        .chars()
        .last()
        .is_some_and(|p| p.is_alphabetic() || p == ':' || p == '_')
}

/// The hour of a time ("10" in "10:54") or an ordinal ("3rd").
fn glued_after(s: &str, end: usize) -> bool {
    let rest = &s[end..];
    (rest.starts_with(':') && rest[1..].starts_with(|d: char| d.is_ascii_digit()))
        || ORDINAL_AFTER.is_match(rest)
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

fn vulgar(v: &str) -> f64 {
    match v {
        "½" => 0.5,
        "⅓" => 1.0 / 3.0,
        "⅔" => 2.0 / 3.0,
        "¼" => 0.25,
        "¾" => 0.75,
        "⅙" => 1.0 / 6.0,
        _ => 0.125,
    }
}

fn denominator_word(w: &str) -> Option<f64> {
    let w = w.to_ascii_lowercase();
    let stem = w.trim_end_matches('s');
    Some(match stem {
        "half" | "halve" => 2.0,
        "third" => 3.0,
        "quarter" | "fourth" => 4.0,
        "fifth" => 5.0,
        "sixth" => 6.0,
        "seventh" => 7.0,
        "eighth" => 8.0,
        "ninth" => 9.0,
        "tenth" => 10.0,
        "twelfth" => 12.0,
        _ => return None,
    })
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
    let first = parts.next();
    let tens = TENS.iter().position(|t| Some(*t) == first)? as f64 * 10.0 + 20.0;
    let unit = match parts.next() {
        Some(u) => UNITS.iter().position(|x| *x == u)? as f64,
        None => 0.0,
    };
    Some(tens + unit)
}

fn times(s: &str) -> Vec<Token> {
    TIME.captures_iter(s)
        .filter_map(|c| {
            let whole = c.get(0).unwrap();
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
            Some(Token {
                text: whole.as_str().trim_end().to_string(),
                value,
                start: whole.start(),
                end: whole.end(),
                aside: false,
                percent: false,
            })
        })
        .collect()
}

/// Two values equal to within rounding error.
fn same_value(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Number { value: x, .. }, Value::Number { value: y, .. }) => {
            (x - y).abs() <= 1e-9 * x.abs().max(1.0)
        }
        _ => a == b,
    }
}

/// Mark the asides listed in the module doc.
fn mark_asides(s: &str, tokens: &mut [Token]) {
    let day: Vec<bool> = tokens.iter().map(|t| is_day_of_date(s, t)).collect();
    for i in 0..tokens.len() {
        let (start, end) = (tokens[i].start, tokens[i].end);
        let before = &s[..start];
        let after = &s[end..];
        let line_start = before.rfind('\n').map(|p| p + 1).unwrap_or(0);
        let list_marker =
            s[line_start..start].trim().is_empty() && LIST_MARKER_AFTER.is_match(after);
        let enumerated = |a: usize, b: usize| {
            let (a_t, b_t) = (&tokens[a], &tokens[b]);
            // One value written twice ("6/36, or 1/6") is a restatement, not a list.
            !day[a]
                && !day[b]
                && a_t.end <= b_t.start
                && ENUM_GAP.is_match(&s[a_t.end..b_t.start])
                && !same_value(a_t.value, b_t.value)
        };
        let in_list =
            (i > 0 && enumerated(i - 1, i)) || (i + 1 < tokens.len() && enumerated(i, i + 1));
        let level = (LEVEL_AT.is_match(before) && LEVEL_AFTER.is_match(after))
            || LEVEL_BEFORE.is_match(before);
        if paren_depth(before) > 0
            || in_list
            || list_marker
            || day[i]
            || level
            || STEP_BEFORE.is_match(before)
            || is_name(before)
            || NEGATED_BEFORE.is_match(before)
            || REFERENCE_BEFORE.is_match(before)
            || HYPHEN_AFTER.is_match(after)
            || HYPHEN_BEFORE.is_match(before)
        {
            tokens[i].aside = true;
        }
    }
}

/// Whether the text before a number ends with a name it belongs to ("Apollo 11", "carbon-14").
fn is_name(before: &str) -> bool {
    NAME_BEFORE.captures(before).is_some_and(|c| {
        c.name("word").is_none_or(|w| {
            let w = w.as_str().to_lowercase();
            !NOT_NAMES.contains(&w.as_str()) && !MONTH_WORD.is_match(&w)
        })
    })
}

/// A whole number from 1 to 31 next to a month name ("20 July", "July 20").
fn is_day_of_date(s: &str, t: &Token) -> bool {
    let Value::Number { value, decimals: 0 } = t.value else {
        return false;
    };
    (1.0..=31.0).contains(&value)
        && !t.text.starts_with('-')
        && (MONTH_BEFORE.is_match(&s[..t.start]) || MONTH_AFTER.is_match(&s[t.end..]))
}

/// How many parentheses or brackets are open at the end of `s` (never below zero).
pub fn paren_depth(s: &str) -> usize {
    s.chars().fold(0usize, |depth, c| match c {
        '(' | '[' => depth + 1,
        ')' | ']' => depth.saturating_sub(1),
        _ => depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(s: &str, want: Want) -> Vec<f64> {
        tokens(s, want)
            .into_iter()
            .filter_map(|t| match t.value {
                Value::Number { value, .. } => Some(value),
                Value::Time { .. } => None,
            })
            .collect()
    }

    fn asides(s: &str) -> Vec<bool> {
        tokens(s, Want::Whole)
            .into_iter()
            .map(|t| t.aside)
            .collect()
    }

    #[test]
    fn reads_digits_fractions_words_and_mixed_numbers() {
        assert_eq!(values("3, 12.5 and 1,000", Want::Real), [3.0, 12.5, 1000.0]);
        assert_eq!(
            values("\\frac{1}{4} or \\dfrac34", Want::Real),
            [0.25, 0.75]
        );
        assert_eq!(values("2 1/2 hours", Want::Real), [2.5]);
        assert_eq!(values("7½ degrees", Want::Real), [7.5]);
        assert_eq!(
            values("one sixth, a quarter", Want::Real),
            [1.0 / 6.0, 0.25]
        );
        assert_eq!(
            values("twenty-one, twice, thirteen", Want::Whole),
            [21.0, 2.0, 13.0]
        );
        assert_eq!(values("x = -4", Want::Whole), [-4.0]);
    }

    #[test]
    fn skips_glued_digits_ordinals_exponents_and_times() {
        assert!(values("x3 and r2d2", Want::Whole).is_empty());
        assert!(values("the 3rd and 8th letters", Want::Whole).is_empty());
        assert_eq!(values("3^2 + 4^2 = 25", Want::Whole), [3.0, 4.0, 25.0]);
        assert_eq!(values("√5 times 2", Want::Whole), [2.0]);
        assert_eq!(values("1.097e7 per metre", Want::Real), [1.097]);
        assert!(values("at 10:54", Want::Whole).is_empty());
        assert!(values("the right one", Want::Whole).is_empty());
        assert_eq!(values("one 12 carbon atom", Want::Whole), [12.0]);
        assert_eq!(values("three hundred", Want::Whole), [300.0]);
    }

    #[test]
    fn percentages_are_fractions() {
        assert_eq!(values("16% or 16 percent", Want::Real), [0.16, 0.16]);
        assert_eq!(values("16 or 0.16", Want::Percent), [0.16, 0.16]);
        assert_eq!(values("16", Want::Whole), [16.0]);
    }

    #[test]
    fn ratios_depend_on_what_is_wanted() {
        assert_eq!(values("a 1 in 6 chance", Want::Real), [1.0 / 6.0]);
        assert_eq!(values("6 out of 36", Want::Percent), [1.0 / 6.0]);
        let t = tokens("3 out of 10 letters", Want::Whole);
        assert_eq!((t.len(), t[0].aside, t[1].aside), (2, false, true));
    }

    #[test]
    fn marks_asides() {
        assert_eq!(
            asides("3 r's (positions 3, 8, 9)"),
            [false, true, true, true]
        );
        assert_eq!(
            asides("at positions 3, 8 and 9, so 3"),
            [true, true, true, false]
        );
        assert_eq!(asides("1. count\n2. add 5"), [true, true, false]);
        assert_eq!(asides("Step 2: it is 7"), [true, false]);
        assert_eq!(asides("sqrt(25) = 5"), [true, false]);
        assert_eq!(asides("1969, during the Apollo 11 mission"), [false, true]);
        assert_eq!(asides("carbon-14 has 6 protons"), [true, false]);
        assert_eq!(asides("on 20 July 1969"), [true, false]);
        assert_eq!(asides("on July 20, 1969"), [true, false]);
        assert_eq!(asides("It is 5, not 3"), [false, true]);
        assert_eq!(asides("54 minutes after 10 o'clock"), [false, true]);
        assert_eq!(
            asides("a 3-4-5 triangle, a 10-minute break, 5"),
            [true, true, true, true, false]
        );
        assert_eq!(
            asides("the n=3 to n=2 transition is 656"),
            [true, true, false]
        );
        assert_eq!(asides("x = 5"), [false]);
        assert_eq!(asides("About 60, Only 3, Windows 10"), [false, false, true]);
    }

    #[test]
    fn times_of_day() {
        let t = tokens("from 9:00 AM until 10:54 p.m. (not 25:00)", Want::Time);
        assert_eq!(
            (t[0].text.as_str(), t[1].text.as_str()),
            ("9:00 AM", "10:54 p.m.")
        );
        let got: Vec<Value> = t.iter().map(|t| t.value).collect();
        assert_eq!(
            got,
            [
                Value::Time {
                    minutes: 540,
                    meridiem: true
                },
                Value::Time {
                    minutes: 22 * 60 + 54,
                    meridiem: true
                }
            ]
        );
        assert!(has_time("10:54") && !has_time("10.54"));
    }
}
