//! An answer read from a completion cut off at the token budget (`finish_reason: length`): one
//! rule for every scorer that reads an answer out of the text (numeric, exact, choice, output,
//! JSON). A cut-off completion did not end where it stops, it was stopped; so what a scorer reads
//! where the text ends (its last line, concluding sentence, last clause, last number, a mention
//! anywhere) is not an answer the model gave. The answer counts only when it was **committed
//! before the cut**:
//! - it is marked as the answer (`\boxed{}`, "the answer is", `####`, bold, an "Output:" prefix,
//!   a fenced block after one, a JSON value that parsed whole), or it is stated in the answer's
//!   opening sentence (ended before the cut, or reached within its first clause: "The string
//!   'mm' occurs twice in 'mmmrcrcrc…" states 2 however the loop after it ends); and
//! - it is complete: a marked answer's line or sentence (or its box, bold or code block) closed
//!   before the cut ("#### 1000000 - 100" was still being written); an opening one has text
//!   after it (a value at the very end may be cut mid-way: "…is 3" of "…is 38.4"); a JSON value
//!   closes itself. A marked answer cut off in its own line leaves an earlier one that was
//!   committed standing ("#### 219\nThe answer is: 2" answers 219).
//!
//! Otherwise it is `no answer` (wrong, nothing extracted), the evidence naming why: cut off
//! while looping (a stuck word, a repeated line or a loop of phrases, as `sanity.rs` finds them),
//! mid-list (the read is a list) or mid-working; and what was read there, not taken. A wrong text
//! answer (`exact` reads it whole) is committed only where it is marked: its own opening may be
//! working ("To solve this problem, …"). The scorers that judge the text as a whole (text checks,
//! code, tool calls) set no [`ReadAt`] and keep their score; a score that read no answer says the
//! completion was cut off ("cut off at the token limit: no number found"). Every score of a
//! cut-off completion is marked as a weak read (`Score::weak`).

use std::sync::LazyLock;

use regex::Regex;

use super::text::sentence_spans;
use super::{sanity, Detail, ReadAt, Score};

/// The weak-read reason of every score of a cut-off completion.
const CUT: &str = "cut off at the token limit";

/// The score of an answer whose completion was cut off at the budget: unchanged when nothing was
/// read where the answer is, or what was read was committed before the cut; else no answer.
/// Either way marked as a weak read. A marked answer cut off in its own line ("#### 219\nThe
/// answer is: 2") does not undo one marked and finished on an earlier line: `rescore` scores the
/// text before that line, and a marked answer committed there stands.
pub fn cut_off(answer: &str, scored: Score, rescore: impl Fn(&str) -> Score) -> Score {
    let Some(at) = scored.at else {
        return said_cut(scored).weakly(CUT);
    };
    if committed_before_cut(answer, at) {
        return scored.weakly(CUT);
    }
    if at.marked {
        let line_start = answer[..at.start.min(answer.len())].rfind('\n');
        if let Some(earlier) = line_start.map(|i| rescore(&answer[..i])) {
            if earlier
                .at
                .is_some_and(|e| e.marked && committed_before_cut(answer, e))
            {
                return earlier.weakly(CUT);
            }
        }
    }
    let why = if sanity::loops(answer) {
        "while looping"
    } else if is_list(
        scored
            .as_written
            .as_deref()
            .unwrap_or_else(|| answer.get(at.start..at.end).unwrap_or_default()),
    ) {
        "mid-list"
    } else {
        "mid-working"
    };
    no_answer(scored, why).weakly(CUT)
}

/// A score that read no answer says that its completion was cut off.
fn said_cut(mut scored: Score) -> Score {
    if scored.detail == Detail::NotFound {
        scored.evidence = format!("{CUT}: {}", scored.evidence);
    }
    scored
}

/// The read is marked or opens the answer, and it ended before the cut: a marked one with its
/// line or sentence (or its box or bold) closed after it, an opening one with text after it.
fn committed_before_cut(answer: &str, at: ReadAt) -> bool {
    let rest = answer.get(at.end..).unwrap_or_default();
    if at.closed {
        return true;
    }
    if at.marked {
        let closed_mark = rest.starts_with(['}', '*', '`', '$']);
        return closed_mark || rest.contains('\n') || SENTENCE_END.is_match(rest);
    }
    !rest.trim().is_empty() && in_opening_statement(answer, at.start)
}

/// The end of a sentence, with more text or the end after it.
static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[.;!?](?:\s|$)").unwrap());

/// `start` lies in the answer's first sentence, and that sentence ended before the cut or
/// `start` is in its first clause.
fn in_opening_statement(answer: &str, start: usize) -> bool {
    let Some(&(first, last)) = sentence_spans(answer).first() else {
        return false;
    };
    if start < first || start >= last {
        return false;
    }
    let ended = answer
        .get(last..)
        .is_some_and(|rest| !rest.trim().is_empty());
    ended
        || answer
            .get(first..start)
            .is_some_and(|head| !CLAUSE_BREAK.is_match(head))
}

/// Where a sentence passes from one clause to the next.
static CLAUSE_BREAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[,;:=]|\b(?:and|so|then|but|which|therefore|thus|hence|because)\b").unwrap()
});

/// Two or more short items (three words at most) separated by commas, on one line.
fn is_list(read: &str) -> bool {
    let items: Vec<&str> = read
        .split(',')
        .filter(|item| !item.trim().is_empty())
        .collect();
    !read.trim().contains('\n')
        && items.len() >= 2
        && items.iter().all(|i| i.split_whitespace().count() <= 3)
}

/// No answer in place of `scored`: what it read is named as not taken.
fn no_answer(scored: Score, why: &str) -> Score {
    let unread = scored
        .as_written
        .as_deref()
        .or(scored.extracted.as_deref())
        .unwrap_or_default();
    let unread = crate::text::clip(unread, 60);
    Score {
        correct: Some(false),
        extracted: None,
        as_written: None,
        evidence: format!(
            "no answer: {CUT} {why}, before it committed to an answer (one marked as the \
             answer, or stated in an opening sentence finished before the cut); `{unread}` read \
             where it stopped is not taken"
        ),
        detail: Detail::NotFound,
        weak: None,
        at: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::testing::{assert_no_answer, exact, numeric, output};
    use crate::score::{score_completion, JsonType, Options, ScoreContext, ScorerSpec};

    fn knights() -> ScorerSpec {
        let names = |label: &str| {
            vec![
                format!("{label} is the knight"),
                format!("{label} is a knight"),
            ]
        };
        ScorerSpec::Choice {
            expected: "A".into(),
            options: Options([("A".to_string(), names("A")), ("B".to_string(), names("B"))].into()),
        }
    }

    /// The score of `answer` from a completion cut off at the budget.
    fn cut(spec: &ScorerSpec, answer: &str) -> Score {
        let ctx = ScoreContext::for_catalogue(std::path::Path::new("prompts"));
        score_completion(spec, answer, true, &ctx)
    }

    /// The re-grade's logic_knights: a loop cut off at 1024 tokens that names A in its last clause.
    const LOOP: &str = "If A is a knight and B is a knave, then A could be both. \
        But we can only consider the scenario where A is a knight and B is a knave. ";

    #[test]
    fn working_cut_off_in_any_scorer_is_no_answer_with_its_reason() {
        // runs/example-smollm2-kv-demo, every one `length`, every one read before.
        // gen.state_tracking.0009 on kv-f16: the exact scorer credited "thimble".
        let s = cut(
            &exact("thimble", &[]),
            "To solve this problem, we need to consider the possible combinations of items that \
             can be placed in the boxes.\n\nLet's start by considering the possible combinations \
             of items that can be placed in the boxes. We can start by considering the items \
             that can be placed in the boxes, which are the thimble,",
        );
        assert_no_answer(&s, "no answer: cut off at the token limit mid-working");
        // gen.programs.0006 and 0001 on kv-f16: the output scorer took "c =" and "}", the last
        // lines of a cut echo of the program.
        let echo = "This JavaScript program prints:\n\n```javascript\nlet a = 12;\nlet b = 13;\n\
                    let c = 1;\nfor (let i = 0; i < 3; i++) {\n  if (a < c) {\n    c = c + 8;\n  \
                    } else {\n    c = c * 3;\n  }\n  c = c - 1;\n}\nc =";
        assert_no_answer(
            &cut(&output("12 13 1"), echo),
            "no answer: cut off at the token limit mid-working",
        );
        let s = cut(&output("12 13 1"), &echo[..echo.len() - 4]);
        assert_no_answer(&s, "no answer: cut off at the token limit mid-working");
        assert!(s.evidence.contains("let a = 12;"), "{}", s.evidence);
        // gen.sorting.0001 on kv-q4: a list cut mid-way.
        let s = cut(
            &output("110, 195, 414, 440, 600, 645"),
            "110, 195, 20, 21, 22, 22, 23, 23, 24, 24, 25, 25, 26, 26, 26, 27, 27, 27, 28, 28, \
             29, 29, 30, 30, 30, 30, 31, 31, 32, 32, 33, 34",
        );
        assert_no_answer(&s, "no answer: cut off at the token limit mid-list");
        // gen.word_problems.0000 on kv-q4: numeric working, as before.
        let s = cut(
            &numeric("188"),
            "Omar has 35 boxes with 12 pencils in each box and sells 232 pencils.\nOmar has 35 x \
             12 = 375 pencils left.\nOmar has 375 - 35 = 225 pencils left.\nOmar has 225 - 35 = \
             180 pencils left.\nOmar has 180 - 22 =",
        );
        assert_no_answer(
            &s,
            "cut off at the token limit: no answer: the number `180`",
        );
        // gen.state_tracking.0008 on kv-q4: a wrong text answer that is working.
        let s = cut(
            &exact("apple", &[]),
            "To solve this problem, we need to find the item in box 2.\n\nFirst, we swap the \
             contents of box 2 and box 3. This means we swap the contents of box 3 and box 1.\n\n\
             Next, we swap the contents of box 3 and box 2",
        );
        assert_no_answer(&s, "no answer: cut off at the token limit mid-working");
        // A loop of reasoning that names A in its last clause: looping.
        let s = cut(&knights(), &LOOP.repeat(12));
        assert_no_answer(&s, "no answer: cut off at the token limit while looping");
        assert!(s.evidence.contains("`A`"), "{}", s.evidence);
        // Not looping, but the pick is read where the text stops: still no answer.
        assert_no_answer(
            &cut(&knights(), LOOP),
            "no answer: cut off at the token limit mid-working",
        );
    }

    #[test]
    fn an_answer_committed_before_the_cut_counts_in_any_scorer() {
        // A count stated in the opening statement before a degenerate loop, and a name stated in
        // an opening sentence before one: both count (gen.substrings.0004 was refused, and
        // fact_mona_lisa credited, on kv-q4 of runs/example-smollm2-kv-demo-catalogue).
        let s = cut(
            &numeric("2"),
            &format!("The string 'mm' occurs twice in 'mmm{}", "rc".repeat(60)),
        );
        assert_eq!((s.correct, s.extracted.as_deref()), (Some(true), Some("2")));
        let s = cut(
            &exact("Leonardo da Vinci", &["Leonardo", "da Vinci"]),
            &format!(
                "The Mona Lisa is attributed to Leonardo da Vinci, but it's not just a painting. \
                 It's actually a portrait of Lisa del Carmine, a woman believed to be a patron of \
                 the arts.{}",
                " The painting is actually a portrait of a woman named Lisa del Carmine, who was \
                 a patron of the arts."
                    .repeat(8)
            ),
        );
        assert_eq!(s.correct, Some(true), "{s:?}");
        assert_eq!(s.weak.as_deref(), Some(CUT));
        // Marked answers, then more text: the answer stands.
        let marked = format!("{}So the answer is A.\n\nLet me check", LOOP.repeat(12));
        assert_eq!(cut(&knights(), &marked).correct, Some(true));
        let boxed = format!("{}\\boxed{{A}} and then", LOOP.repeat(12));
        assert_eq!(cut(&knights(), &boxed).correct, Some(true));
        let s = cut(
            &numeric("18"),
            "Eggs left: 16 - 3 - 4 = 9. The answer is 18.\n\nTo check: 9 × 2",
        );
        assert_eq!((s.correct, s.weak.as_deref()), (Some(true), Some(CUT)));
        // gen.programs.0005 on kv-f16: an output named by its prefix, then an explanation.
        let s = cut(
            &output("6 11"),
            "This JavaScript program prints the Fibonacci sequence up to the 4th Fibonacci \
             number.\n\nThe output is:\n\n```\n1\n3\n4\n5\n```\n\nExplanation:\n\nThe outer loop \
             starts with `i = 0` and goes up to `i = 4`, where the inner loop starts with `i = 1` \
             and goes up to `i = 5`. The inner loop then increments `i` by",
        );
        assert_eq!(
            (s.correct, s.extracted.as_deref()),
            (Some(false), Some("1\n3\n4\n5"))
        );
        // A list stated first, then an explanation cut off.
        let s = cut(
            &output("74, 117, 260"),
            "74, 117, 260\n\nI compared each number with the next and",
        );
        assert_eq!(s.correct, Some(true), "{s:?}");
        // gen.word_problems.0007 on kv-q4: a second answer line cut off after the first was
        // written whole; and gen.word_problems.0005 on kv-q4: the answer line itself cut off.
        let s = cut(
            &numeric("186"),
            "The number of kilograms left is 539 - 281 = 219 kilograms of rice.\nThe number of \
             kilograms left is 219.\n#### 219\nThe answer is: 2",
        );
        assert_eq!(
            (s.correct, s.extracted.as_deref()),
            (Some(false), Some("219"))
        );
        let s = cut(
            &numeric("243"),
            "Dalia gets 1000000 - 23 * 1000000 = 1000000 dollars of change.\n#### 1000000 - 100",
        );
        assert_no_answer(&s, "no answer: cut off at the token limit mid-working");
        // A reasoning model's marked answer, its self-check cut off.
        let s = cut(
            &numeric("42"),
            "**Final answer:** 42\n\nLet me double-check: 6 × 7 = 42, and 40 + 2 =",
        );
        assert_eq!(s.correct, Some(true), "{s:?}");
        // A value at the very end may itself be cut ("3" of "38.4"): not committed.
        // runs/example-smollm2-kv-q4-decided, gen.decimals.0031 on kv-q4.
        let s = cut(
            &numeric("38.4"),
            "To solve this problem, we need to find the greatest integer that is exactly 38.4.\n\n\
             To find the answer, we can use the floor function to find the largest integer that \
             is exactly 38.4.\n\nThe largest integer that is exactly 38.4 is 3",
        );
        assert_no_answer(&s, "no answer: cut off at the token limit mid-working");
        // A value at the very end may itself be cut ("3" of "38"): not committed.
        let s = cut(&numeric("3"), "The answer is 3");
        assert_no_answer(&s, "no answer: cut off at the token limit mid-working");
    }

    #[test]
    fn json_that_closes_before_the_cut_counts_and_a_fragment_of_one_does_not() {
        let spec = ScorerSpec::Json {
            required: [("city".to_string(), JsonType::String)].into(),
            values: Default::default(),
        };
        // gen.json_extraction.0001 on kv-q4: a closed ```json block, then a second one cut off.
        let s = cut(
            &spec,
            "Here is a sample JSON object with the desired format:\n\n```json\n{\n  \"city\": \
             \"Malmo\",\n  \"items\": [\n    {\n      \"qty\": 2\n    }\n  ]\n}\n```\n\nThis JSON \
             object has the following structure:\n\n```json\n{\n  \"city\": \"Malmo\",\n  \"items\
             \": [\n    {\n      \"name",
        );
        assert_eq!(s.correct, Some(true), "{s:?}");
        // gen.json_extraction.0005 on kv-q4: the record echoed and cut; its inner object was read.
        let s = cut(
            &spec,
            "{\n  \"order_id\": 52129,\n  \"customer\": {\n    \"name\": \"Jana Horvat\",\n    \
             \"address\": {\n      \"city\": \"Bergen\",\n      \"postcode\": \"37791\"\n    }\n  \
             },\n  \"lines\": [\n    {\n      \"sku\": \"procession\",\n      \"qty\": 3\n    },\n \
             {\n      \"",
        );
        assert_eq!((s.correct, s.extracted.as_deref()), (Some(false), None));
        assert_eq!(s.detail, Detail::NotFound);
    }

    #[test]
    fn text_checks_and_nothing_read_keep_their_score() {
        let open = ScorerSpec::Open(crate::score::TextChecks::default());
        let s = cut(&open, "Once upon a time there was a lighthouse keeper who");
        assert_eq!((s.correct, s.weak.as_deref()), (None, Some(CUT)));
        let s = cut(&numeric("3"), "I do not know how to");
        assert_no_answer(&s, "cut off at the token limit: no number found");
        assert_eq!(s.weak.as_deref(), Some(CUT));
    }
}
