//! Choice scoring: which one of a fixed set of options an answer picks (a letter such as "B", a
//! word label such as "yes" or "Cal", or a named option such as "Paris").
//!
//! Options are written `options = { A = "Paris", B = ["London", "the capital of England"] }`
//! (a label and its names) or `options = ["yes", "no"]` (labels only). A one-character label
//! ("A") is only read where it cannot be the article "a" or the pronoun "I": in "(A)", "A)",
//! "option A", or, case-sensitively, inside a boxed value, after "the answer is", in bold, or in a
//! short first line; even there "A" or "I" followed by a word ("A French city") is the English
//! word. Names and word labels are matched as whole normalised phrases anywhere.
//!
//! Precedence (the first rule that mentions an option decides; mentioning several options there
//! picks several, which is wrong):
//! 1. the last `\boxed{...}`;
//! 2. the rest of the sentence after the last "answer is" / "answer:" / "correct option is";
//! 3. a short first line (at most five words), or a label leading the answer ("B) ...", "Yes, ...");
//! 4. the last bold span that mentions an option;
//! 5. clauses from the end (split at sentence ends, line breaks, ";" and "so" / "therefore" /
//!    "thus" / "hence" / ", and"): the last clause that mentions an option.
//!
//! In rules 2 and 3 a justification after the pick is ignored ("B, because A is London" picks B).
//! Within a rule's fragment, a mention a careful grader would not take as the pick does not count
//! (`reading.rs`): negated ("Jupiter, not Saturn", "not Saturn but Jupiter", "Jupiter (not
//! Saturn)"), rejected ("Saturn? No, Jupiter"), corrected ("Saturn, but it's actually Jupiter"),
//! ranked below the question ("Saturn is only the second largest") or another option's relation
//! ("Michelangelo, a rival of Leonardo da Vinci" picks Michelangelo). An answer that still names
//! several options ("Jupiter is larger than Earth") is ambiguous: it picks several and is wrong,
//! so prompts ask for the letter or the name alone. Options offered as alternatives ("Jupiter or
//! Saturn", "B or C", `hedge.rs`) name no answer: `no answer` (hedged).
//!
//! The evidence quotes the sentence where the picked option is first mentioned.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize};

use super::markers::{after_answer_marker, bold_spans, last_boxed};
use super::reading::dismissed;
use super::text::{normalize, offset_in, phrase_spans, sentence_at, QUOTE_CHARS};
use super::{hedge, Detail, ReadAt, Score};

/// The options of a choice prompt: each label with the names that also pick it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Options(pub BTreeMap<String, Vec<String>>);

impl<'de> Deserialize<'de> for Options {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Names {
            One(String),
            Many(Vec<String>),
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Labels(Vec<String>),
            Named(BTreeMap<String, Names>),
        }
        Ok(Options(match Raw::deserialize(d)? {
            Raw::Labels(labels) => labels.into_iter().map(|l| (l, Vec::new())).collect(),
            Raw::Named(map) => map
                .into_iter()
                .map(|(label, names)| {
                    let names = match names {
                        Names::One(n) => vec![n],
                        Names::Many(v) => v,
                    };
                    (label, names)
                })
                .collect(),
        }))
    }
}

pub fn validate(expected: &str, options: &Options) -> Result<(), String> {
    if options.0.len() < 2 {
        return Err("a choice needs at least two options".into());
    }
    if !options.0.contains_key(expected) {
        let labels: Vec<&str> = options.0.keys().map(String::as_str).collect();
        return Err(format!(
            "expected `{expected}` is not one of the option labels ({})",
            labels.join(", ")
        ));
    }
    let mut seen = BTreeSet::new();
    for (label, names) in &options.0 {
        if normalize(label).is_empty() {
            return Err(format!("option label `{label}` has no letters or digits"));
        }
        for phrase in std::iter::once(label).chain(names) {
            let norm = normalize(phrase);
            if phrase != label && norm.chars().count() < 2 {
                return Err(format!(
                    "option `{label}`: name `{phrase}` is too short (one-letter names are labels)"
                ));
            }
            if !seen.insert(norm) {
                return Err(format!("option `{label}`: `{phrase}` names two options"));
            }
        }
    }
    Ok(())
}

pub fn score(expected: &str, options: &Options, answer: &str) -> Score {
    let opts = Compiled::new(options);
    let Some((picked, rule)) = decide(&opts, answer) else {
        return Score::new(
            Some(false),
            Detail::NotFound,
            format!("no option found; expected {expected}"),
        );
    };
    let labels: Vec<&str> = picked.keys().map(|&i| opts.labels[i].as_str()).collect();
    let first = picked.values().map(|&(a, _)| a).min().unwrap_or(0);
    let last = picked.values().map(|&(_, b)| b).max().unwrap_or(first);
    let quote = sentence_at(answer, first, QUOTE_CHARS);
    if labels.len() > 1 {
        if offered_as_alternatives(answer, &picked) {
            return Score::new(
                Some(false),
                Detail::NotFound,
                format!(
                    "no answer: hedged between {} ({rule}) in \"{quote}\"; expected {expected}",
                    labels.join(" and ")
                ),
            );
        }
        return Score::new(
            Some(false),
            Detail::Value,
            format!(
                "picks several options ({}) ({rule}) in \"{quote}\"",
                labels.join(", ")
            ),
        )
        .read(labels.join(", "), &labels.join(", "))
        .at(ReadAt::new(first, last, MARKED_RULES.contains(&rule)));
    }
    let ok = labels[0] == expected;
    let tail = if ok {
        String::new()
    } else {
        format!("; expected {expected}")
    };
    Score::new(
        Some(ok),
        Detail::Value,
        format!("picks {} ({rule}) in \"{quote}\"{tail}", labels[0]),
    )
    .read(labels[0].to_string(), labels[0])
    .at(ReadAt::new(first, last, MARKED_RULES.contains(&rule)))
}

/// The rules whose pick the text marks as its answer (the others read its opening or its end).
const MARKED_RULES: [&str; 3] = ["\\boxed{}", "\"answer is\"", "bold"];

/// Every option picked is offered as an alternative to the next ("B or C"; `hedge.rs`).
fn offered_as_alternatives(answer: &str, picked: &Picks) -> bool {
    let mut spans: Vec<(usize, usize)> = picked.values().copied().collect();
    spans.sort_unstable();
    spans
        .windows(2)
        .all(|w| w[0].1 <= w[1].0 && hedge::alternatives(&answer[w[0].1..w[1].0]))
}

/// The options a fragment picks, each with where (in the whole answer) it is first picked: the
/// byte range of that mention.
type Picks = BTreeMap<usize, (usize, usize)>;

/// How mentions of options are recognised.
struct Compiled {
    labels: Vec<String>,
    /// Per option: normalised word labels and names, matched as phrases anywhere.
    phrases: Vec<Vec<String>>,
    /// Per option with a one-character label: the explicit forms ("(B)", "B)", "option B").
    explicit: Vec<Option<Regex>>,
    /// Per option with a one-character label: the bare letter, case-sensitive.
    bare: Vec<Option<Regex>>,
}

impl Compiled {
    fn new(options: &Options) -> Self {
        let mut c = Compiled {
            labels: Vec::new(),
            phrases: Vec::new(),
            explicit: Vec::new(),
            bare: Vec::new(),
        };
        for (label, names) in &options.0 {
            let letter = label.chars().count() == 1;
            let mut phrases: Vec<String> = names.iter().map(|n| normalize(n)).collect();
            if !letter {
                phrases.push(normalize(label));
            }
            let q = regex::escape(label);
            c.explicit.push(letter.then(|| {
                Regex::new(&format!(
                    r"(?i:\(\s*{q}\s*\)|\b(?:option|choice|letter)\s+{q}\b)|(?:^|[^\w']){q}\)"
                ))
                .unwrap()
            }));
            c.bare.push(
                letter.then(|| Regex::new(&format!(r"(?:^|[^\w']){q}(?:$|[^\w'])")).unwrap()),
            );
            c.labels.push(label.clone());
            c.phrases.push(phrases);
        }
        c
    }

    /// Every mention of an option in `fragment`: (option, start, end), offsets in `fragment`.
    /// `strict` also counts bare one-letter labels and a fragment that is just a label in any
    /// case ("b").
    fn spans(&self, fragment: &str, strict: bool) -> Vec<(usize, usize, usize)> {
        let norm = normalize(fragment);
        let mut out = Vec::new();
        for i in 0..self.labels.len() {
            for p in &self.phrases[i] {
                out.extend(
                    phrase_spans(fragment, p)
                        .into_iter()
                        .map(|(a, b)| (i, a, b)),
                );
            }
            if let Some(r) = &self.explicit[i] {
                out.extend(r.find_iter(fragment).map(|m| (i, m.start(), m.end())));
            }
            if strict {
                if norm == normalize(&self.labels[i]) {
                    out.push((i, 0, fragment.len()));
                }
                out.extend(
                    self.bare_hits(i, fragment)
                        .into_iter()
                        .map(|(a, b)| (i, a, b)),
                );
            }
        }
        out
    }

    /// The options `fragment` (a slice of `answer`) picks: those with a mention a careful grader
    /// takes as the answer (see `reading.rs`), each with where it is first picked in `answer`.
    fn mentions(&self, answer: &str, fragment: &str, strict: bool) -> Picks {
        let shift = offset_in(answer, fragment);
        let mut found: Vec<(usize, usize, usize)> = self
            .spans(fragment, strict)
            .into_iter()
            .map(|(i, a, b)| (i, a + shift, b + shift))
            .collect();
        self.picks(answer, &mut found)
    }

    /// The options of `found` whose mentions survive the reading rules; a mention inside a longer
    /// one ("Paris" in "B) Paris") is part of it.
    fn picks(&self, answer: &str, found: &mut Vec<(usize, usize, usize)>) -> Picks {
        let all = found.clone();
        found.retain(|&(_, a, b)| {
            !all.iter()
                .any(|&(_, x, y)| x <= a && b <= y && (y - x) > (b - a))
        });
        // Other candidates a correction or a relation may name: any option, anywhere.
        let everywhere: Vec<(usize, usize, usize)> = self.spans(answer, false);
        let mut picks = Picks::new();
        for &(i, a, b) in found.iter() {
            let other = |x: usize, y: usize| {
                everywhere
                    .iter()
                    .chain(found.iter())
                    .any(|&(j, p, q)| j != i && p < y && x < q)
            };
            if dismissed(answer, a, b, &other).is_none() {
                let at = picks.entry(i).or_insert((a, b));
                if a < at.0 {
                    *at = (a, b);
                }
            }
        }
        picks
    }

    /// Where a bare one-letter label occurs. "A" and "I" followed by a word other than
    /// "and"/"or" are the English words, not labels ("A French city").
    fn bare_hits(&self, i: usize, fragment: &str) -> Vec<(usize, usize)> {
        let Some(re) = &self.bare[i] else {
            return Vec::new();
        };
        let is_word = matches!(self.labels[i].as_str(), "A" | "I");
        let label = &self.labels[i];
        re.find_iter(fragment)
            .filter_map(|m| {
                let start = m.start() + m.as_str().find(label.as_str()).unwrap_or(0);
                let end = start + label.len();
                let rest = &fragment[end..];
                let word =
                    is_word && FOLLOWED_BY_WORD.is_match(rest) && !FOLLOWED_BY_OR.is_match(rest);
                (!word).then_some((start, end))
            })
            .collect()
    }

    /// A one-letter label opening the fragment ("B because ...", "A, since ...").
    fn opening_label(&self, answer: &str, fragment: &str) -> Picks {
        let Some(first) = OPENING.captures(fragment).and_then(|c| c.name("label")) else {
            return Picks::new();
        };
        let shift = offset_in(answer, fragment);
        let mut found: Vec<(usize, usize, usize)> = (0..self.labels.len())
            .filter(|&i| self.bare[i].is_some() && self.labels[i] == first.as_str())
            .map(|i| (i, shift + first.start(), shift + first.end()))
            .collect();
        self.picks(answer, &mut found)
    }
}

static FOLLOWED_BY_WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s+\p{L}").unwrap());
static FOLLOWED_BY_OR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^\s+(?:and|or|nor)\b").unwrap());
static OPENING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[\s*_(\[]*(?P<label>\w)\b").unwrap());
static LEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^[\s*_#>(\[]*(?:(?i:option|choice)\s+)?(?P<label>[\w-]+)[\s*_)\]]*(?:[.:,;)!\-–—]|$)",
    )
    .unwrap()
});
static CLAUSE_SPLIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[.;!?](?:\s|$)|\n|,\s*and\s|\b(?:so|therefore|thus|hence|which means)\b")
        .unwrap()
});
static JUSTIFICATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:because|since|as|given|due to|which|while|whereas)\b").unwrap()
});

/// The options the answer picks and the rule that decided, or None when it names none.
fn decide(opts: &Compiled, answer: &str) -> Option<(Picks, &'static str)> {
    let some = |set: Picks, rule| (!set.is_empty()).then_some((set, rule));
    if let Some(inner) = last_boxed(answer) {
        if let Some(found) = some(opts.mentions(answer, inner, true), "\\boxed{}") {
            return Some(found);
        }
    }
    if let Some(clause) = after_answer_marker(answer) {
        let clause = before_justification(clause);
        let mut found = opts.mentions(answer, clause, true);
        for (i, at) in opts.opening_label(answer, clause) {
            found.entry(i).or_insert(at);
        }
        if let Some(found) = some(found, "\"answer is\"") {
            return Some(found);
        }
    }
    let first_line = before_justification(answer.trim().lines().next().unwrap_or(""));
    if first_line.split_whitespace().count() <= 5 {
        if let Some(found) = some(opts.mentions(answer, first_line, true), "short answer") {
            return Some(found);
        }
    }
    if let Some(label) = LEADING.captures(answer).and_then(|c| c.name("label")) {
        let found = opts.mentions(answer, label.as_str(), true);
        if let Some(found) = some(found, "leading label") {
            return Some(found);
        }
    }
    let bold = bold_spans(answer)
        .filter_map(|span| some(opts.mentions(answer, span, true), "bold"))
        .last();
    if bold.is_some() {
        return bold;
    }
    let mut clauses: Vec<&str> = CLAUSE_SPLIT.split(answer).collect();
    clauses.reverse();
    clauses.into_iter().find_map(|c| {
        some(
            opts.mentions(answer, c, false),
            "last clause naming an option",
        )
    })
}

/// The part of a fragment before its justification ("A because B lies" -> "A").
fn before_justification(fragment: &str) -> &str {
    JUSTIFICATION
        .find(fragment)
        .map_or(fragment, |m| &fragment[..m.start()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::testing::assert_scores;

    fn options(toml_value: &str) -> Options {
        #[derive(Deserialize)]
        struct W {
            options: Options,
        }
        toml::from_str::<W>(&format!("options = {toml_value}"))
            .unwrap()
            .options
    }

    fn check(expected: &str, opts: &Options, accept: &[&str], reject: &[&str]) {
        assert_scores(accept, reject, |a| score(expected, opts, a));
    }

    #[test]
    fn letters_with_named_options() {
        let opts = options(r#"{ A = "London", B = "Paris", C = "Berlin" }"#);
        check(
            "B",
            &opts,
            &[
                "B",
                "b",
                "(B)",
                "B)",
                "**B**",
                "Option B",
                "B) Paris",
                "B: Paris",
                "The answer is B: Paris.",
                "The answer is (B).",
                "Paris",
                "The capital of France is Paris.",
                "A is London, which is in England, so the answer is B.",
                "\\boxed{B}",
                "Answer: Paris",
                "The correct option is B because France's capital is Paris.",
                "B, because A is London.",
                "I think it's B.",
            ],
            &[
                "A",
                "C) Berlin",
                "The answer is A.",
                "A and B",
                "A or B",
                "(A) and (B)",
                "The answer is B or C.",
                "London",
                "Berlin is the capital.",
                "I don't know.",
                "",
            ],
        );
    }

    #[test]
    fn the_article_a_is_not_option_a() {
        let opts = options(r#"{ A = "London", B = "Paris" }"#);
        check(
            "B",
            &opts,
            &[
                "It is a city on the Seine, so Paris.",
                "A French city: Paris.",
                "After a careful look, a clear answer: B.",
            ],
            &[],
        );
        let s = score("A", &opts, "It is a big city.");
        assert_eq!((s.correct, s.extracted), (Some(false), None));
    }

    #[test]
    fn letter_labels_with_descriptive_names() {
        let opts = options(
            r#"{ A = ["A is the knight", "the knight is A"], B = ["B is the knight", "the knight is B"] }"#,
        );
        check(
            "A",
            &opts,
            &[
                "A",
                "A is the knight.",
                "The knight is A.",
                "A is the knight and B is the knave.",
                "If B were a knight, both would be knights. So B is a knave and the knight is A.",
                "A knight always tells the truth, so the knight is A.",
                "**A**",
                "Answer: A",
                "The answer is A because B lies.",
                "A, since B's claim is false.",
            ],
            &[
                "B",
                "B is the knight.",
                "B is the knight, because B says both are knights.",
                "Suppose A is the knight. Then B is a knave... contradiction, so B is the knight.",
                "The answer is B since A is lying.",
            ],
        );
    }

    #[test]
    fn word_labels() {
        let yes_no = options(r#"["yes", "no"]"#);
        check(
            "yes",
            &yes_no,
            &[
                "Yes",
                "yes.",
                "**Yes**",
                "Yes, 'rotator' reads the same forwards and backwards.",
                "Reversed it is still rotator, so yes, it is a palindrome.",
                "The answer is yes.",
            ],
            &[
                "No",
                "No, it is not a palindrome.",
                "Yes or no: hard to say.",
                "It is not a palindrome, so no.",
            ],
        );
        let people = options(r#"["Ann", "Ben", "Cal", "Dan"]"#);
        check(
            "Cal",
            &people,
            &[
                "Cal",
                "Cal is the shortest.",
                "Dan > Ann > Ben > Cal, so Cal is the shortest.",
                "Ben is taller than Cal, and Cal is the shortest.",
                "The shortest person is **Cal**.",
            ],
            &["Ben", "Ben is the shortest.", "Ann and Cal"],
        );
    }

    #[test]
    fn evidence_and_extracted() {
        let opts = options(r#"["yes", "no"]"#);
        let s = score("yes", &opts, "yes and no");
        assert_eq!(s.extracted.as_deref(), Some("no, yes"));
        assert!(s.evidence.contains("picks several"), "{}", s.evidence);
        // Offered as alternatives: a hedge, no answer.
        let s = score("yes", &opts, "yes or no");
        crate::score::testing::assert_no_answer(&s, "no answer: hedged between no and yes");
        let s = score("yes", &opts, "No.");
        assert_eq!(s.extracted.as_deref(), Some("no"));
        assert!(s.evidence.contains("expected yes"), "{}", s.evidence);
    }

    #[test]
    fn validation() {
        assert!(validate("A", &options(r#"["A", "B"]"#)).is_ok());
        assert!(validate("C", &options(r#"["A", "B"]"#)).is_err());
        assert!(validate("A", &options(r#"["A"]"#)).is_err());
        assert!(validate("A", &options(r#"{ A = "x", B = "y" }"#)).is_err());
        assert!(validate("A", &options(r#"{ A = "Paris", B = "paris" }"#)).is_err());
    }

    #[test]
    fn negated_rejected_and_corrected_options_are_not_picked() {
        let planets = options(r#"{ A = "Saturn", B = "Jupiter", C = "Neptune" }"#);
        check(
            "B",
            &planets,
            &[
                "Jupiter, not Saturn.",
                "The largest planet is Jupiter, not Saturn.",
                "It is not Saturn but Jupiter.",
                "Not Saturn but Jupiter",
                "Saturn? No, Jupiter.",
                "Jupiter (not Saturn) is the largest planet.",
                "The largest planet is Saturn, but it's actually Jupiter.",
                "Saturn is only the second largest; the largest is Jupiter.",
                "Jupiter is the largest planet, and Saturn, the second-largest, has the rings.",
                "The answer is B, not A.",
            ],
            &[
                "The largest planet is Jupiter, but it's actually Saturn.",
                "Saturn, not Jupiter.",
                "Jupiter? No, Saturn.",
                "Jupiter is only the second largest; Saturn is the largest.",
                // Two candidates and no rule decides: ambiguous, never credited.
                "Jupiter and Saturn are both huge.",
                "It is Jupiter or Saturn.",
                "Not Jupiter.",
            ],
        );
        let s = score(
            "B",
            &planets,
            "The largest planet is Jupiter, but it's actually Saturn.",
        );
        assert_eq!(s.extracted.as_deref(), Some("A"));
    }

    #[test]
    fn a_name_given_as_someone_elses_relation_is_not_the_pick() {
        let painters = options(r#"{ A = "Leonardo da Vinci", B = "Michelangelo", C = "Raphael" }"#);
        check(
            "A",
            &painters,
            &[
                "Leonardo da Vinci painted it.",
                "Leonardo da Vinci, a rival of Michelangelo, painted the Mona Lisa.",
            ],
            &[
                "Michelangelo, a rival of Leonardo da Vinci, painted the Mona Lisa.",
                "It was Michelangelo, a contemporary of Leonardo da Vinci.",
                "Leonardo da Vinci or Michelangelo.",
            ],
        );
    }

    #[test]
    fn evidence_quotes_the_sentence_of_the_pick() {
        let opts = options(r#"["Ann", "Ben", "Cal", "Dan"]"#);
        let s = score(
            "Cal",
            &opts,
            "Dan is taller than Ann. So the shortest of the four is Dan.",
        );
        assert_eq!(
            s.evidence,
            "picks Dan (last clause naming an option) in \"So the shortest of the four is Dan.\"; \
             expected Cal"
        );
    }
}
