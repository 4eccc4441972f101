//! Normalised string scoring with accepted aliases: the answer must contain the expected phrase
//! or an alias as whole words, ignoring case, whitespace, punctuation, quotes, markdown and accents.
//!
//! A mention that a careful grader would not take as the answer does not count: negated ("Saturn,
//! not Jupiter"), rejected, corrected ("Jupiter, but it's actually Saturn"), ranked below the
//! question ("Jupiter is only the second largest") or someone else's relation ("Michelangelo, a
//! rival of Leonardo da Vinci"); see `reading.rs`. One mention that survives is enough.
//!
//! An answer that also credits one of the prompt's `distractors` (a mention of it that is not
//! dismissed the same way) names two answers, and is wrong. A mention offered beside another
//! phrase as its alternative ("It's either Sydney or Canberra", "Canberra or Sydney, depending
//! on…") names no one answer: `no answer` (hedged, `hedge.rs`), unless a later mention stands
//! alone; a question ("Sydney or Canberra?") offers nothing.
//!
//! With `closed` (the expected phrase and the distractors are every answer there is: a weekday,
//! an item in the boxes, a person of the puzzle), a wrong answer is read as the one candidate it
//! names ("The item that is in box 6 is the feather" reads "feather", as does "The item in box 6
//! is the feather"); one that names none ("The day of the week is 16.") gives no answer, and two
//! offered as alternatives are a hedge.
//!
//! An answer in another language or script than the question is read as a careful grader who
//! asked in English reads it: "作者是乔治·奥威尔" names George Orwell, but not in the words asked
//! for, so it is wrong unless the prompt lists that form among its aliases; the evidence names
//! the script it was written in. (Digits are digits in any language: "答案是 3" answers 3.)
//!
//! A one-letter phrase is refused at validation: "A" would match the article "a" in any sentence.
//! Letter answers belong to the `choice` scorer, which knows where a bare letter is a label.

use super::hedge::{alternative_phrase, alternatives};
use super::markers::{after_answer_marker, marked_spans};
use super::reading::{dismissed, opens_with_name};
use super::text::{
    contains_phrase, normalize, offset_in, phrase_spans, script, sentence_at, sentence_spans,
    QUOTE_CHARS,
};
use super::{Detail, ReadAt, Score};

pub fn validate(expected: &str, aliases: &[String]) -> Result<(), String> {
    for phrase in std::iter::once(expected).chain(aliases.iter().map(String::as_str)) {
        let norm = normalize(phrase);
        if norm.is_empty() {
            return Err("expected and aliases must contain letters or digits".into());
        }
        if norm.chars().count() == 1 && norm.chars().all(char::is_alphabetic) {
            return Err(format!(
                "`{phrase}` is a single letter, which matches the words \"a\" and \"I\"; \
                 use type = \"choice\" for letter answers"
            ));
        }
    }
    Ok(())
}

/// What an exact answer is scored against: the spec's phrases (see `ScorerSpec::Exact`).
pub struct Phrases<'a> {
    pub expected: &'a str,
    pub aliases: &'a [String],
    pub distractors: &'a [String],
    /// The expected phrase and the distractors are every answer there is.
    pub closed: bool,
}

pub fn score(p: &Phrases, answer: &str) -> Score {
    let (expected, aliases, distractors) = (p.expected, p.aliases, p.distractors);
    let norm_answer = normalize(answer);
    if norm_answer.is_empty() {
        return Score::new(Some(false), Detail::NotFound, "empty answer");
    }
    let accepted: Vec<&str> = std::iter::once(expected)
        .chain(aliases.iter().map(String::as_str))
        .collect();
    let mut mentions: Vec<(usize, usize, &str)> = accepted
        .iter()
        .flat_map(|&c| {
            phrase_spans(answer, &normalize(c))
                .into_iter()
                .map(move |(a, b)| (a, b, c))
        })
        .collect();
    // "da Vinci" inside "Leonardo da Vinci" is the same mention.
    let all = mentions.clone();
    mentions.retain(|&(a, b, _)| {
        !all.iter()
            .any(|&(x, y, _)| x <= a && b <= y && (x, y) != (a, b))
    });
    mentions.sort_by_key(|m| m.0);
    let accepted_in = |a: usize, b: usize| mentions.iter().any(|&(x, y, _)| x < b && a < y);
    let other = |a: usize, b: usize| opens_with_name(answer, a, b) && !accepted_in(a, b);
    let marks = marked_spans(answer);
    let mut first_dismissed = None;
    let mut first_hedge = None;
    for &(a, b, candidate) in &mentions {
        if let Some(why) = dismissed(answer, a, b, &other) {
            first_dismissed.get_or_insert((a, why));
            continue;
        }
        if let Some(alternative) = hedged(answer, a, b, &accepted) {
            first_hedge.get_or_insert((a, candidate, alternative));
            continue;
        }
        if let Some((d, at)) = credited(answer, distractors, &other) {
            return Score::new(
                Some(false),
                Detail::Value,
                format!(
                    "\"{candidate}\" is named, but so is \"{d}\" in \"{}\"",
                    sentence_at(answer, at, QUOTE_CHARS)
                ),
            )
            .read(norm_answer, answer.trim())
            .at(wrong_read_at(answer));
        }
        let marked = marks.iter().any(|&(x, y)| x <= a && b <= y);
        return Score::new(
            Some(true),
            Detail::Value,
            format!(
                "found \"{candidate}\" in \"{}\"",
                sentence_at(answer, a, QUOTE_CHARS)
            ),
        )
        .read(normalize(expected), &answer[a..b])
        .at(ReadAt::new(a, b, marked));
    }
    if let Some((a, candidate, alternative)) = first_hedge {
        return Score::new(
            Some(false),
            Detail::NotFound,
            format!(
                "no answer: hedged between \"{candidate}\" and \"{alternative}\" in \"{}\"",
                sentence_at(answer, a, QUOTE_CHARS)
            ),
        );
    }
    let evidence = match first_dismissed {
        Some((a, why)) => format!(
            "\"{expected}\" is only mentioned {why} in \"{}\"",
            sentence_at(answer, a, QUOTE_CHARS)
        ),
        None => format!("\"{expected}\" not found{}", other_script(expected, answer)),
    };
    if p.closed {
        return candidate_read(p, answer, &other, &marks, evidence);
    }
    Score::new(Some(false), Detail::Value, evidence)
        .read(norm_answer, answer.trim())
        .at(wrong_read_at(answer))
}

/// A wrong answer among a closed set of candidates: read as the one distractor it names; no
/// answer when it names none, or offers two as alternatives; the whole text, wrong, when it names
/// several.
fn candidate_read(
    p: &Phrases,
    answer: &str,
    other: &dyn Fn(usize, usize) -> bool,
    marks: &[(usize, usize)],
    not_found: String,
) -> Score {
    let mut named: Vec<(&str, usize, usize)> = p
        .distractors
        .iter()
        .filter_map(|d| {
            phrase_spans(answer, &normalize(d))
                .into_iter()
                .find(|&(a, b)| dismissed(answer, a, b, other).is_none())
                .map(|(a, b)| (d.as_str(), a, b))
        })
        .collect();
    named.sort_by_key(|n| n.1);
    let expected = p.expected;
    match named.as_slice() {
        [] => Score::new(
            Some(false),
            Detail::NotFound,
            format!(
                "no answer: names none of the answers there are ({expected} or {}); {not_found}",
                p.distractors.join(", ")
            ),
        ),
        [(d, a, b)] => {
            let marked = marks.iter().any(|&(x, y)| x <= *a && *b <= y);
            Score::new(
                Some(false),
                Detail::Value,
                format!(
                    "names \"{d}\" in \"{}\"; expected \"{expected}\"",
                    sentence_at(answer, *a, QUOTE_CHARS)
                ),
            )
            .read(normalize(d), &answer[*a..*b])
            .at(ReadAt::new(*a, *b, marked))
        }
        several
            if several
                .windows(2)
                .all(|w| w[0].2 <= w[1].1 && alternatives(&answer[w[0].2..w[1].1])) =>
        {
            let names: Vec<&str> = several.iter().map(|n| n.0).collect();
            Score::new(
                Some(false),
                Detail::NotFound,
                format!(
                    "no answer: hedged between {} in \"{}\"",
                    names.join(" and "),
                    sentence_at(answer, several[0].1, QUOTE_CHARS)
                ),
            )
        }
        several => {
            let names: Vec<&str> = several.iter().map(|n| n.0).collect();
            Score::new(
                Some(false),
                Detail::Value,
                format!("names several answers ({}); {not_found}", names.join(", ")),
            )
            .read(normalize(answer), answer.trim())
            .at(wrong_read_at(answer))
        }
    }
}

/// "; written in Han script, the expected answer in Latin (…)" when the answer is in another
/// writing system than every accepted phrase: a translation is not recognised, so the evidence
/// says why nothing matched.
fn other_script(expected: &str, answer: &str) -> String {
    match (script(expected), script(answer)) {
        (Some(want), Some(got)) if want != got => format!(
            "; the answer is written in {got} script, the expected answer in {want} (a \
             translation counts only when the prompt lists it among its aliases)"
        ),
        _ => String::new(),
    }
}

/// Where a wrong text answer was read: the clause after an answer phrase when there is one
/// (marked), else the whole text, which marks nothing as its answer.
fn wrong_read_at(answer: &str) -> ReadAt {
    match after_answer_marker(answer).filter(|c| !c.is_empty()) {
        Some(clause) => {
            let a = offset_in(answer, clause);
            ReadAt::new(a, a + clause.len(), true)
        }
        None => ReadAt::new(0, answer.len(), false),
    }
}

/// The phrase offered as an alternative to the mention at `a..b` ("either Sydney or Canberra"),
/// when it names another answer than the accepted ones and the sentence is not a question.
fn hedged<'a>(answer: &'a str, a: usize, b: usize, accepted: &[&str]) -> Option<&'a str> {
    let (x, y) = alternative_phrase(answer, a, b)?;
    let offered = normalize(&answer[x..y]);
    let same = accepted
        .iter()
        .any(|c| contains_phrase(&offered, &normalize(c)));
    let question = sentence_spans(answer)
        .into_iter()
        .find(|&(s, e)| s <= a && a < e)
        .is_some_and(|(_, e)| answer[..e].ends_with('?'));
    (!same && !question).then(|| &answer[x..y])
}

/// The first distractor the answer credits: a mention that no reading rule dismisses.
fn credited<'a>(
    answer: &str,
    distractors: &'a [String],
    other: &dyn Fn(usize, usize) -> bool,
) -> Option<(&'a str, usize)> {
    distractors.iter().find_map(|d| {
        phrase_spans(answer, &normalize(d))
            .into_iter()
            .find(|&(a, b)| dismissed(answer, a, b, other).is_none())
            .map(|(a, _)| (d.as_str(), a))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An open set: the phrases as the tests write them.
    fn score(expected: &str, aliases: &[String], distractors: &[String], answer: &str) -> Score {
        super::score(
            &Phrases {
                expected,
                aliases,
                distractors,
                closed: false,
            },
            answer,
        )
    }

    /// A closed set: `expected` and the distractors are every answer there is.
    fn one_of(expected: &str, others: &[&str], answer: &str) -> Score {
        super::score(
            &Phrases {
                expected,
                aliases: &[],
                distractors: &aliases(others),
                closed: true,
            },
            answer,
        )
    }

    #[test]
    fn a_closed_set_reads_the_candidate_named_or_no_answer() {
        // runs/example-smollm2-kv-demo, gen.state_tracking.0003: one item in two wordings.
        let items = ["pencil", "candle", "key", "whistle", "shell"];
        for text in [
            "The item in box 5 is the key.",
            "The item that is in box 5 is the key.",
        ] {
            let s = one_of("feather", &items, text);
            assert_eq!(
                (s.correct, s.extracted.as_deref(), s.as_written.as_deref()),
                (Some(false), Some("key"), Some("key"))
            );
        }
        assert_eq!(
            one_of("feather", &items, "The item in box 5 is the feather.").correct,
            Some(true)
        );
        // gen.weekdays.0005 and 0007: no day named on either side.
        let days = [
            "Monday",
            "Tuesday",
            "Wednesday",
            "Thursday",
            "Friday",
            "Saturday",
        ];
        for text in [
            "February 13, 2000 is February 14, 2000.",
            "February 13, 2000",
            "The day of the week is 21.",
        ] {
            let s = one_of("Sunday", &days, text);
            crate::score::testing::assert_no_answer(&s, "no answer: names none of the answers");
        }
        let s = one_of("Sunday", &days, "April 16, 2030 was a Tuesday.");
        assert_eq!(s.extracted.as_deref(), Some("tuesday"));
        // gen.logic.0004: the person named; two named is a statement, not a pick.
        let people = ["Mateo", "Jana", "Chen"];
        assert_eq!(
            one_of("Ivo", &people, "Mateo is the oldest.")
                .extracted
                .as_deref(),
            Some("mateo")
        );
        let s = one_of("Ivo", &people, "Chen is shorter than Mateo.");
        assert_eq!(s.extracted.as_deref(), Some("chen is shorter than mateo"));
        assert!(
            s.evidence.starts_with("names several answers"),
            "{}",
            s.evidence
        );
        crate::score::testing::assert_no_answer(
            &one_of("Ivo", &people, "It is either Mateo or Jana."),
            "no answer: hedged between Mateo and Jana",
        );
        // Open sets keep reading a wrong answer whole.
        let s = score(
            "Leonardo da Vinci",
            &[],
            &aliases(&["Michelangelo"]),
            "It was Botticelli.",
        );
        assert_eq!(s.extracted.as_deref(), Some("it was botticelli"));
    }

    fn aliases(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn accepts_expected_or_alias_in_prose() {
        let a = aliases(&["Eric Arthur Blair", "Orwell"]);
        for ok in [
            "It was **George Orwell**.",
            "eric arthur blair",
            "Nineteen Eighty-Four was written by George Orwell (Eric Blair) in 1949.",
            "ORWELL",
            "\"George Orwell\"",
        ] {
            assert_eq!(
                score("George Orwell", &a, &[], ok).correct,
                Some(true),
                "{ok}"
            );
        }
        for bad in ["Aldous Huxley wrote it.", "Orwellian", "Georgeorwell", ""] {
            assert_eq!(
                score("George Orwell", &a, &[], bad).correct,
                Some(false),
                "{bad}"
            );
        }
        let wrong = score("George Orwell", &a, &[], "Aldous Huxley wrote it.");
        assert_eq!(wrong.extracted.as_deref(), Some("aldous huxley wrote it"));
        assert_eq!(wrong.evidence, "\"George Orwell\" not found");
    }

    #[test]
    fn accents_and_case_are_ignored_but_words_are_whole() {
        assert_eq!(
            score("ecnerehoc", &[], &[], "ECNEREHOC").correct,
            Some(true)
        );
        assert_eq!(
            score("ecnerehoc", &[], &[], "`ecnerehoc`").correct,
            Some(true)
        );
        assert_eq!(
            score("ecnerehoc", &[], &[], "ecnerehco").correct,
            Some(false)
        );
        assert_eq!(
            score("São Paulo", &[], &[], "It is sao paulo.").correct,
            Some(true)
        );
        assert_eq!(
            score("Au", &[], &[], "The symbol is Au.").correct,
            Some(true)
        );
        assert_eq!(
            score("Au", &[], &[], "The symbol is Ag.").correct,
            Some(false)
        );
    }

    #[test]
    fn one_letter_phrases_are_refused() {
        assert!(validate("A", &[]).is_err());
        assert!(validate("Canberra", &aliases(&["c"])).is_err());
        assert!(validate("7", &[]).is_ok());
        assert!(validate("Au", &[]).is_ok());
        assert!(validate("?", &[]).is_err());
    }

    #[test]
    fn extracted_is_the_whole_answer_so_late_differences_show() {
        let head = "The largest planet in our solar system is one of the four gas giants, and it is called";
        let a = score("Jupiter", &[], &[], &format!("{head} Saturn."));
        let b = score("Jupiter", &[], &[], &format!("{head} Neptune."));
        assert_ne!(a.extracted, b.extracted);
        assert!(a.extracted.unwrap().ends_with("called saturn"));
    }

    #[test]
    fn negated_corrected_and_demoted_mentions_do_not_count() {
        let reject = [
            // SmolLM2-135M in runs/example-smollm2-kv-q4 (fact_largest_planet, kv-q4).
            "The largest planet in our solar system is Jupiter, but it's actually Saturn. However, \
             the largest planet in our solar system isn't a gas giant like Neptune or Uranus.",
            "Saturn, not Jupiter.",
            "It is not Jupiter but Saturn.",
            "Saturn (not Jupiter) is the largest.",
            "Jupiter? No, Saturn.",
            "Jupiter is only the second largest planet.",
            "Jupiter, or rather Saturn.",
            "Jupiter isn't the largest; Saturn is.",
        ];
        let accept = [
            "Jupiter, not Saturn.",
            "It is not Saturn but Jupiter.",
            "Jupiter (not Saturn) is the largest planet.",
            "Saturn? No, Jupiter.",
            "Saturn is only the second largest; Jupiter is the largest.",
            "The largest planet is Saturn, but it's actually Jupiter.",
            "Jupiter is actually enormous: it is the largest planet.",
            "Jupiter, the fifth planet from the Sun, is the largest.",
        ];
        crate::score::testing::assert_scores(&accept, &reject, |a| score("Jupiter", &[], &[], a));
        let s = score("Jupiter", &[], &[], reject[0]);
        assert!(
            s.evidence
                .starts_with("\"Jupiter\" is only mentioned corrected in \"The largest"),
            "{}",
            s.evidence
        );
    }

    #[test]
    fn a_name_given_as_someone_elses_relation_does_not_count() {
        let a = aliases(&["Leonardo", "da Vinci"]);
        let score = |t: &str| score("Leonardo da Vinci", &a, &[], t).correct;
        assert_eq!(
            score("Michelangelo, a rival of Leonardo da Vinci, painted the Mona Lisa."),
            Some(false)
        );
        assert_eq!(
            score("Michelangelo was a student of da Vinci."),
            Some(false)
        );
        assert_eq!(
            score("The Mona Lisa was painted by Leonardo da Vinci, a rival of Michelangelo."),
            Some(true)
        );
        assert_eq!(
            score("The Mona Lisa, a portrait by Leonardo da Vinci, hangs in the Louvre."),
            Some(true)
        );
        // SmolLM2-135M (fact_mona_lisa, kv-q4): the attribution stands.
        assert_eq!(
            score(
                "The Mona Lisa is attributed to Leonardo da Vinci, but it's not just a painting. It \
                 was actually painted by da Vinci himself in 1503-1506."
            ),
            Some(true)
        );
    }

    #[test]
    fn crediting_a_distractor_as_well_names_two_answers() {
        let a = aliases(&["Leonardo", "da Vinci"]);
        let d = aliases(&["Michelangelo", "Raphael"]);
        let score = |t: &str| score("Leonardo da Vinci", &a, &d, t);
        // SmolLM2-135M (fact_mona_lisa, kv-f16): Leonardo, then Michelangelo "completed it".
        let s = score(
            "It's said to be the work of Leonardo da Vinci, but it actually dates back to 1503 \
             when Michelangelo completed it in Florence. However, the painting was originally \
             painted by da Vinci himself.",
        );
        assert_eq!(s.correct, Some(false));
        assert!(
            s.evidence.contains("so is \"Michelangelo\""),
            "{}",
            s.evidence
        );
        assert_eq!(
            score("Leonardo da Vinci, not Michelangelo.").correct,
            Some(true)
        );
        assert_eq!(score("It was Leonardo da Vinci.").correct, Some(true));
    }

    #[test]
    fn evidence_quotes_the_sentence() {
        let s = score(
            "Ottawa",
            &[],
            &[],
            "Canada is big. Its capital is Ottawa.\nMore text.",
        );
        assert_eq!(s.evidence, "found \"Ottawa\" in \"Its capital is Ottawa.\"");
    }
}
