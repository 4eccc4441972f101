//! Structure checks of report.html rendered from the hand-made fixture in `report/fixture.rs`:
//! every section in order, the headline in the DOM, nothing fetched, hostile text inert.

use super::{base64, render_html};
use crate::analysis::{RepeatAnswer, Results};
use crate::report::fixture;

/// The fixture with every repeat's answer filled in (the fixture itself has none).
fn with_repeats() -> Results {
    let mut results = fixture::results();
    for p in &mut results.prompts {
        for a in p.answers.values_mut() {
            a.repeats = (0..3)
                .map(|i| RepeatAnswer {
                    repeat: i,
                    answer: a.answer.clone(),
                    correct: a.correct,
                    truncated: false,
                    sent: i as usize * 4,
                    after: (i > 0).then(|| "other_prompt".to_string()),
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
fn every_section_is_present_in_order() {
    let html = render_html(&with_repeats());
    let ids = attribute_values(&html, "id");
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
            "quality",
            "endpoints",
            "categories",
            "determinism",
            "distributions",
            "divergences",
            "prompts",
            "notes"
        ]
    );
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
    assert!(html.contains("<h1>full vs spark</h1>"));
    assert!(html.contains("Incomplete run"));
}

#[test]
fn the_quality_answer_comes_first_with_its_verdict() {
    let results = fixture::results();
    let html = render_html(&results);
    let q = &results.quality[0];
    let badge = format!("<span class=\"badge q-{0}\">{0}</span>", q.verdict.as_str());
    let at = html.find(&badge).expect("quality verdict badge");
    assert!(at < html.find("<section id=\"endpoints\"").unwrap());
}

#[test]
fn answers_side_by_side_with_word_diff_and_every_repeat() {
    let html = render_html(&with_repeats());
    assert!(html.contains("class=\"side-by-side\""));
    assert!(html.contains("<del>") && html.contains("<ins>"));
    assert!(html.contains("<table class=\"repeats\">"));
    assert!(html.contains("after <code>other_prompt</code>"));
    assert!(
        html.contains("class=\"hist\""),
        "a non-deterministic prompt's histogram"
    );
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

#[test]
fn hostile_model_output_is_inert() {
    let mut results = with_repeats();
    let evil = "</pre><script>alert(\"x\")</script><img src=x onerror=alert(1)>'";
    results.endpoints[1].name = evil.into();
    results.warnings.push(evil.into());
    for p in &mut results.prompts {
        p.question = evil.into();
        p.category = evil.into();
        for a in p.answers.values_mut() {
            a.answer = Some(format!("{evil} and more"));
            a.extracted = Some(evil.into());
            for r in &mut a.repeats {
                r.answer = Some(evil.into());
            }
            if let Some(d) = &mut a.determinism {
                d.histogram.insert(evil.into(), 1);
            }
        }
    }
    let html = render_html(&results);
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!html.contains("<img"));
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
    assert!(!html.contains("alert(\"x\")"));
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
}

#[test]
fn csp_hashes_are_standard_base64() {
    assert_eq!(base64(b"f"), "Zg==");
    assert_eq!(base64(b"fo"), "Zm8=");
    assert_eq!(base64(b"foo"), "Zm9v");
    assert_eq!(base64(b"foobar"), "Zm9vYmFy");
}
