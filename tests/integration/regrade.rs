//! What the careful re-grade of the committed example found (issue 20, item 6), end to end
//! against fake endpoints: a format-only divergence is not a difference, a looping answer cut
//! off at the budget is no answer, repeats that disagree are shown, answers appear as written,
//! the gate says where it came from, and text that changes under load is batch non-invariance.

use serde_json::json;

use crate::common::*;

/// Two endpoints that fail the eggs prompt the same way (no number at all), in other words.
fn same_failure_in_other_words() -> (FakeServer, FakeServer) {
    let reply = |unreadable: &'static str| {
        move |req: &Incoming| match req.question().as_str() {
            EGGS_Q => Reply::content(unreadable),
            q => Reply::content(correct_answer(q)),
        }
    };
    (
        FakeServer::start("m", reply("I cannot say how much she makes.")),
        FakeServer::start("m", reply("That is impossible to tell.")),
    )
}

#[test]
fn the_same_failure_rendered_differently_is_not_a_difference() {
    let (a, b) = same_failure_in_other_words();
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = compare(
        dir.path(),
        &[("a", &a), ("b", &b)],
        &["--only", "eggs", "--fail-on", "diff>0,deployment>0"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let r = results(&run);
    let p = prompt(&r, "eggs");
    assert_eq!(p["verdict"], json!("format"), "{p}");
    assert_eq!(p["pairs"][0]["kind"], json!("format"), "{p}");
    assert_eq!(p["pairs"][0]["difference"], json!(null), "{p}");
    assert_eq!(r["summary"]["diff"], json!(0));
    assert_eq!(r["summary"]["format"], json!(1));
    assert_eq!(r["deployment_differences"], json!(0));
    assert_eq!(r["gate"]["failed"], json!([]));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("0 diff"), "{report}");
    assert!(report.contains("1 format"), "{report}");
}
