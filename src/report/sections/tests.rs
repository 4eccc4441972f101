//! Snapshots of each section rendered from the hand-made fixture in `report/fixture.rs` (as
//! Markdown; review a change to one as a diff of that section alone), and checks of the whole
//! report in both formats: sections in order, the headline, nothing fetched, hostile text inert.

use super::{
    categories, caveats, details, determinism, distributions, divergences, endpoints, errors,
    families, headline, look, prompts, statistics, weak_reads, Section,
};
use crate::analysis::{RepeatAnswer, Results, Verdict};
use crate::doc::to_markdown;
use crate::report::{fixture, render_html, render_report};

fn render(section: Section, results: &Results) -> String {
    to_markdown(&section(results))
}

/// The details section, handed on a prompt at a time, kept whole.
fn details(results: &Results) -> Vec<crate::doc::Block> {
    let mut blocks = crate::doc::Blocks::default();
    details::render(results, &mut blocks);
    blocks.into_blocks()
}

/// The fixture with every repeat's answer filled in (the fixture itself has none).
fn with_repeats() -> Results {
    let mut results = fixture::results();
    for p in &mut results.prompts {
        for a in p.answers.values_mut() {
            a.repeats = (0..3)
                .map(|i| RepeatAnswer {
                    repeat: i,
                    answer: a.answer.as_deref().map(Into::into),
                    as_written: None,
                    correct: a.correct,
                    truncated: false,
                    sent: i as usize * 4,
                    after: (i > 0).then(|| "other_prompt".into()),
                    text: None,
                })
                .collect();
        }
    }
    results
}

/// Every value of `attribute="…"` in the page.
fn attribute_values<'a>(html: &'a str, attribute: &str) -> Vec<&'a str> {
    let needle = format!(" {attribute}=\"");
    html.match_indices(&needle)
        .map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
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
fn distributions_state_completion_tokens_but_no_latency_in_markdown() {
    let md = render(distributions::render, &fixture::results());
    insta::assert_snapshot!(md.clone());
    assert!(!md.contains("Latency per answer"), "{md}");
    let html = render_html(&fixture::results());
    assert!(html.contains("Latency per answer (ms)"));
}

#[test]
fn statistics_state_each_pair_and_skip_ungraded_categories() {
    insta::assert_snapshot!(render(statistics::render, &fixture::results()));
}

#[test]
fn weak_reads_list_each_pairs_flips_with_the_side_and_reason() {
    insta::assert_snapshot!(render(weak_reads::render, &fixture::results()));
    let mut none = fixture::results();
    none.weak_reads.clear();
    assert_eq!(render(weak_reads::render, &none), "");
}

#[test]
fn details_quote_answers_side_by_side_with_word_diffs() {
    insta::assert_snapshot!(render(details, &fixture::results()));
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
        "## Divergences\n\nNone: every prompt got the same verdict on every endpoint.\n"
    );
    // Every prompt stays reachable: a brief block each, no word diffs.
    let details = render(details, &results);
    for p in &results.prompts {
        assert!(details.contains(&format!("<a id=\"prompt-{}\"></a>", p.id)));
    }
    assert!(!details.contains("Word diff"), "{details}");
}

#[test]
fn report_is_the_sections_in_order() {
    let report = render_report(&fixture::results());
    let headings: Vec<&str> = report.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        [
            "## Endpoints",
            "## Categories",
            "## Divergences",
            "## Flips on a weak read",
            "## Same, but look",
            "## Determinism (3 repeats at temperature 0)",
            "## Latency and completion tokens",
            "## Statistics",
            "## Families",
            "## Prompt details",
            "## All prompts",
            "## Errors",
            "## Warnings",
            "## Scorer caveats",
        ]
    );
}

#[test]
fn the_page_has_every_section_in_order_and_every_prompt() {
    let html = render_html(&with_repeats());
    let sections: Vec<&str> = html
        .match_indices("<section id=\"")
        .map(|(i, _)| {
            let rest = &html[i + 13..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        sections,
        [
            "endpoints",
            "categories",
            "divergences",
            "weak-reads",
            "look",
            "determinism",
            "distributions",
            "statistics",
            "families",
            "prompts",
            "all-prompts",
            "errors",
            "warnings",
            "caveats"
        ]
    );
    let ids = attribute_values(&html, "id");
    assert!(ids.contains(&"divergence-table"));
    for p in &fixture::results().prompts {
        assert!(
            ids.contains(&format!("prompt-{}", p.id).as_str()),
            "{}",
            p.id
        );
    }
    for tag in ["section", "details", "table", "svg", "div", "header", "p"] {
        assert_eq!(
            html.matches(&format!("<{tag}>")).count() + html.matches(&format!("<{tag} ")).count(),
            html.matches(&format!("</{tag}>")).count(),
            "<{tag}> opened and closed as often"
        );
    }
    // The charts: verdict bars, the quality interval, box plots, answer histograms.
    for chart in [
        "<svg class=\"bar\"",
        "<svg class=\"chart interval\"",
        "<g class=\"box\">",
        "<p class=\"hist-name\">",
    ] {
        assert!(html.contains(chart), "{chart}");
    }
}

#[test]
fn headline_is_in_the_dom() {
    let results = fixture::results();
    let html = render_html(&results);
    let headline = results.summary.headline();
    assert!(headline.contains("diff"), "{headline}");
    assert!(
        html.contains(&format!("<strong id=\"headline\">{headline}</strong>")),
        "{headline}"
    );
    assert!(html.contains("<h1>coherence report: full vs spark</h1>"));
    assert!(html.contains("Incomplete run"));
}

#[test]
fn answers_with_word_diff_and_every_repeat() {
    let html = render_html(&with_repeats());
    assert!(html.contains("<del>") && html.contains("<ins>"));
    assert!(html.contains("Repeats in send order"));
    assert!(html.contains("<code>other_prompt</code>"));
    assert!(html.contains("<pre class=\"text\">"));
}

#[test]
fn nothing_is_fetched() {
    let html = render_html(&with_repeats());
    for attribute in ["src", "href", "action", "srcset", "poster", "data"] {
        for v in attribute_values(&html, attribute) {
            assert!(
                !v.contains("//") && !v.to_lowercase().starts_with("javascript:"),
                "{attribute}=\"{v}\""
            );
        }
    }
    for needle in ["<link", "<img", "<iframe", "@import", "url(", "<script src"] {
        assert!(!html.contains(needle), "{needle}");
    }
    assert!(html.contains("default-src 'none'"));
}

/// What a hostile server controls: the model id it serves, finish_reason, answers (with raw ESC
/// bytes), fingerprints; and a hostile catalogue or config: names, questions, categories.
fn hostile() -> Results {
    let mut results = with_repeats();
    let evil = "</pre><script>alert(\"x\")</script><img src=x onerror=alert(1)>'\u{1b}[2J\u{7}";
    results.endpoints[1].name = evil.into();
    results.endpoints[0].served_models = vec!["</script><script>alert(1)</script>".into()];
    results.endpoints[1].system_fingerprints = vec![evil.into()];
    results.warnings.push(evil.into());
    for p in &mut results.prompts {
        p.question = evil.into();
        p.category = evil.into();
        for a in p.answers.values_mut() {
            a.answer = Some(format!("{evil} and more"));
            a.extracted = Some(evil.into());
            a.finish_reason = Some("<img src=x onerror=alert(2)>".into());
            for r in &mut a.repeats {
                r.answer = Some(evil.into());
            }
            if let Some(d) = &mut a.determinism {
                d.histogram.insert(evil.into(), 1);
            }
        }
    }
    results
}

#[test]
fn hostile_text_is_inert_in_the_page() {
    let html = render_html(&hostile());
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!html.contains("<img"));
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
    assert!(!html.contains("alert(\"x\")"));
    assert!(!html.contains('\u{1b}') && !html.contains('\u{7}'));
    assert!(html.contains("␛[2J␇"));
}

#[test]
fn hostile_text_is_inert_in_the_markdown() {
    let md = render_report(&hostile());
    assert!(
        !md.contains('\u{1b}') && !md.contains('\u{7}'),
        "raw control bytes"
    );
    assert!(md.contains("␛[2J␇"));
    // Outside code spans, no tag can open: every `<` is escaped.
    let mut outside = String::new();
    for (i, piece) in md.split('`').enumerate() {
        if i % 2 == 0 {
            outside.push_str(piece);
        }
    }
    for needle in ["<script", "<img", "</script", "</pre"] {
        for (at, _) in outside.match_indices(needle) {
            assert!(
                outside[..at].ends_with('\\'),
                "unescaped {needle} at {at}: {}",
                &outside[at.saturating_sub(40)..(at + 40).min(outside.len())]
            );
        }
    }
    assert!(md.contains("\\</script>\\<script>alert(1)\\</script>"));
    assert!(md.contains("\\<img src=x onerror=alert(2)>"));
}

#[test]
fn empty_results_still_render() {
    let mut results = fixture::results();
    results.prompts.clear();
    results.categories.clear();
    results.quality.clear();
    let html = render_html(&results);
    assert!(html.contains("<strong id=\"headline\">"));
    assert!(html.ends_with("</html>\n"));
    assert!(render_report(&results).starts_with("# coherence report: full vs spark\n"));
}

#[test]
fn families_name_the_family_that_differs_and_say_so_for_none() {
    use crate::analysis::behaviour::families::{family_verdicts, GradedItem};
    use crate::analysis::Paired;
    let mut results = fixture::results();
    let quiet = render(families::render, &results);
    assert!(
        quiet.contains("no family differs at family-wise α = 0.05"),
        "{quiet}"
    );
    let counts = |both_correct, reference_only, other_only, both_wrong| Paired {
        both_correct,
        reference_only,
        other_only,
        both_wrong,
    };
    results.families[0].verdicts = family_verdicts(
        [
            ("dates", counts(70, 2, 3, 5)),
            ("counting", counts(25, 45, 0, 10)),
        ],
        0.05,
    );
    // Counting items that expect 3 on a quarter of them; spark says 3 to all.
    let items: Vec<GradedItem> = (0..80)
        .map(|i| GradedItem {
            expected: Some(if i % 4 == 0 { 3 } else { 100 + i }.to_string()),
            reference: Some("4".into()),
            other: Some("3".into()),
        })
        .collect();
    results.families[0].verdicts.families[1].add_answers(&items);
    let named = render(families::render, &results);
    assert!(named.contains("**different in 1**"), "{named}");
    assert!(named.contains("**counting**"), "{named}");
    assert!(named.contains("The floor is the accuracy"), "{named}");
    // The family that differs is the first row: its floor, both accuracies, both endpoints' most
    // common answers and its Holm p.
    let first_row = named
        .lines()
        .find(|l| l.starts_with("| counting") || l.starts_with("| dates"))
        .unwrap_or_default();
    assert!(
        first_row.starts_with("| counting | 80 | 25% (always 3) | 88% ["),
        "{first_row}"
    );
    assert!(
        first_row.contains("| 4 (80/80) / 3 (80/80) |"),
        "{first_row}"
    );
    assert!(first_row.ends_with("| different |"), "{first_row}");
    // One answer read of ten, and ten answers all different: no answer is repeated, whatever
    // share of the read ones it is (issue 48: "217289 (50%)" was 1 of 2 reads, 8 unanswered).
    let items: Vec<GradedItem> = (0..10)
        .map(|i| GradedItem {
            expected: Some("7".into()),
            reference: (i == 0).then(|| "217289".into()),
            other: Some(format!("{i}")),
        })
        .collect();
    results.families[0].verdicts.families[1].add_answers(&items);
    let rendered = render(families::render, &results);
    let row = rendered
        .lines()
        .find(|l| l.starts_with("| counting"))
        .unwrap_or_default();
    assert!(
        row.contains("| no repeated answer / no repeated answer |"),
        "{row}"
    );
}
