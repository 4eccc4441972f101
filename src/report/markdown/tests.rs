//! Snapshots of each report.md section rendered from the hand-made fixture in `report/fixture.rs`
//! (review a change to one as a diff of that section alone).

use super::{
    categories, caveats, details, determinism, divergences, endpoints, errors, headline, look,
    prompts, statistics, Section,
};
use crate::analysis::{Results, Verdict};
use crate::report::fixture;

fn render(section: Section, results: &Results) -> String {
    let mut out = String::new();
    section(results, &mut out);
    out
}

#[test]
fn same_but_look_lists_a_different_finish_length_and_truncation() {
    insta::assert_snapshot!(render(look::render, &fixture::results()));
}

#[test]
fn one_repeat_says_stability_was_not_measured_and_what_repeats_would_add() {
    let mut results = fixture::results();
    results.sampling.repeats = 1;
    let headline = render(headline::render, &results);
    assert!(
        headline.contains("**Stability**: not measured: 1 repeat"),
        "{headline}"
    );
    assert!(
        headline.contains("repeats (`--repeats 3`) would also let sampler noise be told apart"),
        "{headline}"
    );
}

#[test]
fn inconclusive_never_reads_as_same_and_each_verdict_says_why() {
    use crate::analysis::QualityVerdict;
    let mut results = fixture::results();
    let line = |r: &Results| render(headline::render, r);
    let inconclusive = line(&results);
    assert!(inconclusive.contains("**Inconclusive: cannot tell whether quality is the same**"));
    assert!(inconclusive.contains("About 61 graded prompts (this run has 5) would decide it"));
    results.quality[0].verdict = QualityVerdict::Equivalent;
    results.quality[0].decide_with = None;
    assert!(line(&results).contains("**Equivalent** within ±5 points"));
    results.quality[0].verdict = QualityVerdict::Different;
    assert!(line(&results).contains("**Different**: the accuracy difference `spark` − `full` is -20.0 points, 90% interval [-58.0, +12.0]"));
}

#[test]
fn headline_has_verdicts_gate_retries_and_incomplete_note() {
    insta::assert_snapshot!(render(headline::render, &fixture::results()));
}

#[test]
fn endpoints_flag_differing_fingerprints() {
    insta::assert_snapshot!(render(endpoints::render, &fixture::results()));
}

#[test]
fn categories_count_verdicts_and_correct_answers() {
    insta::assert_snapshot!(render(categories::render, &fixture::results()));
}

#[test]
fn divergences_list_every_prompt_that_is_not_same() {
    insta::assert_snapshot!(render(divergences::render, &fixture::results()));
}

#[test]
fn determinism_lists_prompts_whose_repeats_differed() {
    insta::assert_snapshot!(render(determinism::render, &fixture::results()));
}

#[test]
fn statistics_state_each_pair_and_skip_ungraded_categories() {
    insta::assert_snapshot!(render(statistics::render, &fixture::results()));
}

#[test]
fn details_quote_answers_side_by_side_with_word_diffs() {
    insta::assert_snapshot!(render(details::render, &fixture::results()));
}

#[test]
fn all_prompts_table_has_every_prompt() {
    insta::assert_snapshot!(render(prompts::render, &fixture::results()));
}

#[test]
fn errors_and_warnings() {
    insta::assert_snapshot!(render(errors::render, &fixture::results()));
}

#[test]
fn caveats() {
    insta::assert_snapshot!(render(caveats::render, &fixture::results()));
}

#[test]
fn one_repeat_drops_determinism_and_warns_in_caveats() {
    let mut results = fixture::results();
    results.sampling.repeats = 1;
    assert_eq!(render(determinism::render, &results), "");
    assert!(render(caveats::render, &results).contains("One repeat per prompt"));
}

#[test]
fn all_same_has_no_divergences_and_brief_details() {
    let mut results = fixture::results();
    for p in &mut results.prompts {
        p.verdict = Verdict::Same;
    }
    assert_eq!(
        render(divergences::render, &results),
        "\n## Divergences\n\nNone: every prompt got the same verdict on every endpoint.\n"
    );
    // Every prompt stays reachable: a brief block each, no word diffs.
    let details = render(details::render, &results);
    for p in &results.prompts {
        assert!(details.contains(&format!("<a id=\"prompt-{}\"></a>", p.id)));
    }
    assert!(!details.contains("Word diff"), "{details}");
}

#[test]
fn report_is_the_sections_in_order() {
    let results = fixture::results();
    let report = super::render_report(&results);
    let headings: Vec<&str> = report.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        [
            "## Endpoints",
            "## Categories",
            "## Divergences",
            "## Same, but look",
            "## Determinism (3 repeats at temperature 0)",
            "## Statistics",
            "## Prompt details",
            "## All prompts",
            "## Errors",
            "## Warnings",
            "## Scorer caveats",
        ]
    );
}
