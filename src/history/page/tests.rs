//! The trend page's tests: escaping, report links, an empty history, many checks.

use super::*;

fn rows(checks: Vec<Check>) -> Vec<(i64, Check)> {
    checks
        .into_iter()
        .enumerate()
        .map(|(i, c)| (i as i64 + 1, c))
        .collect()
}

#[test]
fn every_string_from_the_database_is_escaped() {
    let hostile = "<script>alert('x')</script> & \"quoted\"";
    let check = Check {
        name: hostile.into(),
        because: hostile.into(),
        endpoint: hostile.into(),
        identity: hostile.into(),
        status: CheckStatus::Incomplete,
        started_at: "2026-12-03T10:00:00Z<img src=x>".into(),
        run_dir: "/runs/a\"b<c>".into(),
        ..Check::sample("prod", "2026-12-03T10:00:00Z")
    };
    let page = render(&rows(vec![check]), Path::new("/pages"));
    assert!(!page.contains("<script"), "a script tag got through");
    assert!(!page.contains("<img"), "an img tag got through");
    assert!(
        page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;")
    );
    assert!(page.contains("href=\"file:///runs/a%22b%3Cc%3E/report.html\""));
    // An unknown verdict is drawn in the neutral colour, never as a class of its own.
    assert!(page.contains("class=\"v-other\""));
}

#[test]
fn report_links_are_relative_below_the_page_and_file_urls_elsewhere() {
    let dir = Path::new("/home/me/watch");
    assert_eq!(
        report_link("/home/me/watch/runs/check 1", dir).as_deref(),
        Some("runs/check%201/report.html")
    );
    assert_eq!(
        report_link("/srv/runs/c1", dir).as_deref(),
        Some("file:///srv/runs/c1/report.html")
    );
    // Beside the page's folder, not below it, even with the folder's name as a prefix.
    assert_eq!(
        report_link("/home/me/watcher/c1", dir).as_deref(),
        Some("file:///home/me/watcher/c1/report.html")
    );
    assert_eq!(
        report_link("/home/me/watch/../elsewhere", dir).as_deref(),
        Some("file:///home/me/watch/../elsewhere/report.html")
    );
    assert_eq!(
        report_link("runs/c1", dir).as_deref(),
        Some("runs/c1/report.html")
    );
    assert_eq!(report_link("", dir), None);
}

#[test]
fn an_empty_history_says_there_are_no_checks_yet() {
    let page = render(&[], Path::new("/pages"));
    assert!(page.contains("No checks yet."), "{page}");
    assert!(!page.contains("<svg"));
    assert!(!page.contains("<section"));
    assert!(page.ends_with("</html>\n"));
}

#[test]
fn each_watch_has_its_timelines_and_a_row_per_check() {
    let mut checks = Vec::new();
    for i in 0..3 {
        checks.push(Check::sample("prod", &format!("2026-12-03T1{i}:00:00Z")));
    }
    checks.push(Check {
        status: CheckStatus::Unchanged,
        identity: "identical".into(),
        e_value: 0.5,
        substituted_share: None,
        quality_difference: None,
        ..Check::sample("staging", "2026-12-03T13:00:00Z")
    });
    let page = render(&rows(checks), Path::new("/runs"));
    assert!(page.contains(
        "<strong>4 checks</strong> of 2 watches from 2026-12-03T10:00:00Z to 2026-12-03T13:00:00Z."
    ));
    assert_eq!(page.matches("<section id=\"watch-").count(), 2);
    assert_eq!(page.matches("<svg ").count(), 6);
    assert_eq!(page.matches("<tr><td class=\"num\">").count(), 4);
    assert!(page.contains("3 checks: 0 unchanged, 3 flagged, 0 incomplete."));
    // prod's run folders are below /runs: relative links.
    assert!(page.contains("href=\"prod-2026-12-03T10%3A00%3A00Z/report.html\""));
    // staging has no interval nor quality: one identity point, none on the other charts.
    let staging = &page[page.find("id=\"watch-1\"").unwrap()..];
    assert_eq!(staging.matches("<circle").count(), 1);
    assert!(staging.contains("e-value 0.5"));
    // No script, nothing fetched.
    assert!(!page.contains("<script"));
    assert!(!page.contains("http-equiv=\"refresh\""));
    assert!(!page.contains("src="));
}

#[test]
fn many_checks_stay_inside_their_charts() {
    let checks: Vec<Check> = (0..1000)
        .map(|i| Check {
            e_value: match i % 4 {
                0 => f64::INFINITY,
                1 => f64::NAN,
                2 => 1e-40,
                _ => 1e250,
            },
            quality_difference: Some(if i % 2 == 0 { 3.0 } else { -0.001 }),
            ..Check::sample(
                "prod",
                &format!("2026-12-{:02}T{:02}:00:00Z", 1 + i / 24, i % 24),
            )
        })
        .collect();
    let page = render(&rows(checks), Path::new("/runs"));
    assert_eq!(page.matches("<tr><td class=\"num\">").count(), 1000);
    let circles =
        regex::Regex::new(r#"<circle class="[^"]+" cx="([-\d.]+)" cy="([-\d.]+)""#).unwrap();
    // Identity: every check but the 250 without a number; behaviour and share: every check.
    assert_eq!(circles.captures_iter(&page).count(), 750 + 1000 + 1000);
    for cap in circles.captures_iter(&page) {
        let (x, y): (f64, f64) = (cap[1].parse().unwrap(), cap[2].parse().unwrap());
        assert!((LEFT..=WIDTH - RIGHT).contains(&x), "x {x}");
        assert!((TOP..=190.0 - BOTTOM).contains(&y), "y {y}");
    }
    assert!(
        !page.contains("NaN") && !page.contains("inf\""),
        "a number leaked"
    );
}

#[test]
fn the_e_value_axis_always_labels_the_line_of_no_evidence() {
    let checks = vec![
        Check {
            e_value: 0.4,
            ..Check::sample("prod", "2026-12-01T10:00:00Z")
        },
        Check {
            e_value: 4.2e5,
            ..Check::sample("prod", "2026-12-02T10:00:00Z")
        },
    ];
    let page = render(&rows(checks), Path::new("/runs"));
    let identity = &page[..page.find("Behaviour:").unwrap()];
    let labels: Vec<&str> = regex::Regex::new(r#"text-anchor="end">([^<]+)</text>"#)
        .unwrap()
        .captures_iter(identity)
        .map(|c| c.get(1).unwrap().as_str())
        .filter(|l| !l.starts_with("2026"))
        .collect();
    assert_eq!(labels, ["1", "100", "1e4", "1e6"]);
}
