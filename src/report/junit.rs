//! junit.xml for CI systems, written with `quick-junit`: one testsuite per endpoint pair and one
//! testcase per prompt; a diff is a failure, a fail verdict an error. A single-endpoint run has
//! one testsuite per endpoint, a testcase failing when its repeats disagree.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::analysis::{AnswerResult, Class, PromptResult, Results, Verdict};

pub fn render_junit(results: &Results) -> String {
    let mut report = Report::new("coherence");
    let pairs: Vec<(&str, &str)> = results
        .prompts
        .first()
        .map(|p| {
            p.pairs
                .iter()
                .map(|x| (x.reference.as_str(), x.other.as_str()))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        for e in &results.endpoints {
            let mut suite = TestSuite::new(&e.name);
            suite.add_test_cases(
                results
                    .prompts
                    .iter()
                    .map(|p| case(p, repeats_problem(p.answers.get(&e.name)))),
            );
            report.add_test_suite(suite);
        }
    } else {
        for (reference, other) in pairs {
            let mut suite = TestSuite::new(format!("{reference} vs {other}"));
            suite.add_test_cases(
                results
                    .prompts
                    .iter()
                    .map(|p| case(p, pair_problem(p, reference, other))),
            );
            report.add_test_suite(suite);
        }
    }
    report.to_string().expect("junit.xml serialises")
}

/// Why a testcase did not pass: a failure or an error, its `type`, and the text whose first line
/// is also the `message`.
struct Problem {
    kind: NonSuccessKind,
    ty: &'static str,
    text: String,
}

/// Testcase `coherence.<category>` / `<prompt id>`.
fn case(p: &PromptResult, problem: Option<Problem>) -> TestCase {
    let status = match problem {
        None => TestCaseStatus::success(),
        Some(problem) => {
            let mut status = TestCaseStatus::non_success(problem.kind);
            status
                .set_type(problem.ty)
                .set_message(problem.text.lines().next().unwrap_or(""))
                .set_description(problem.text);
            status
        }
    };
    let mut case = TestCase::new(&p.id, status);
    case.set_classname(format!("coherence.{}", p.category));
    case
}

/// A single-endpoint run: an error when the answer failed, a failure when the repeats disagree.
fn repeats_problem(a: Option<&AnswerResult>) -> Option<Problem> {
    let a = a?;
    if let Some(error) = &a.error {
        return Some(Problem {
            kind: NonSuccessKind::Error,
            ty: "fail",
            text: error.clone(),
        });
    }
    a.determinism
        .as_ref()
        .filter(|d| d.class == Class::Nondeterministic)
        .map(|d| Problem {
            kind: NonSuccessKind::Failure,
            ty: "nondeterministic",
            text: format!("answers across repeats: {:?}", d.histogram),
        })
}

/// One pair of endpoints: a failure on diff, an error on fail, with both sides' answers.
fn pair_problem(p: &PromptResult, reference: &str, other: &str) -> Option<Problem> {
    let pair = p.pairs.iter().find(|x| x.other == other)?;
    let (kind, ty) = match pair.verdict {
        Verdict::Diff => (NonSuccessKind::Failure, "diff"),
        Verdict::Fail => (NonSuccessKind::Error, "fail"),
        Verdict::Same | Verdict::Format | Verdict::NoAnswer | Verdict::Review => return None,
    };
    let detail = p
        .answers
        .iter()
        .filter(|(n, _)| *n == reference || *n == other)
        .map(|(n, a)| {
            format!(
                "{n}: {}",
                a.as_written
                    .clone()
                    .or(a.extracted.clone())
                    .or(a.error.clone())
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Some(Problem {
        kind,
        ty,
        text: format!("{}\n{detail}", pair.reason),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn one_suite_per_pair_a_diff_fails_a_fail_errs() {
        insta::assert_snapshot!(render_junit(&fixture::results()));
    }

    #[test]
    fn single_endpoint_fails_on_disagreeing_repeats_and_errs_on_failures() {
        let mut results = fixture::results();
        results.endpoints.retain(|e| e.name == "spark");
        for p in &mut results.prompts {
            p.pairs.clear();
            p.answers.retain(|n, _| n == "spark");
        }
        insta::assert_snapshot!(render_junit(&results));
    }

    #[test]
    fn markup_is_escaped_and_control_characters_dropped() {
        let mut results = fixture::results();
        let spark = results.prompts[3].answers.get_mut("spark").unwrap();
        spark.error = Some("a<b & \"c\"\u{1}".into());
        let xml = render_junit(&results);
        assert!(
            xml.contains("spark: a&lt;b &amp; &quot;c&quot;</error>"),
            "{xml}"
        );
        assert!(!xml.contains('\u{1}'));
    }
}
