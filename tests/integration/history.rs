//! `coherence history` over a database written through the library's store: the table, JSON,
//! the trend page, a watch's name as a filter, the default database, and the refusals.

use std::path::{Path, PathBuf};

use coherence::history::{Check, CheckStatus, History};

use crate::common::{assert_no_terminal_controls, coherence, exit_code, stderr, stdout};

/// The library's sample check, as `status`, linking `run_dir`.
fn check(name: &str, started_at: &str, status: CheckStatus, run_dir: &Path) -> Check {
    Check {
        status,
        identity: match status {
            CheckStatus::Flagged => "different",
            _ => "identical",
        }
        .into(),
        behaviour: "equivalent".into(),
        because: format!("{status} <because> & so"),
        run_dir: run_dir.display().to_string(),
        ..Check::sample(name, started_at)
    }
}

/// `dir/data/history.sqlite` with three checks of two watches, written out of time order; the
/// checks in time order.
fn history_in(dir: &Path) -> (PathBuf, Vec<Check>) {
    let db = dir.join("data").join("history.sqlite");
    let runs = dir.join("runs");
    let checks = vec![
        check(
            "prod",
            "2026-12-03T09:00:00Z",
            CheckStatus::Unchanged,
            &runs.join("p1"),
        ),
        check(
            "staging",
            "2026-12-03T10:00:00Z",
            CheckStatus::Incomplete,
            &runs.join("s1"),
        ),
        check(
            "prod",
            "2026-12-03T11:00:00Z",
            CheckStatus::Flagged,
            &runs.join("p2"),
        ),
    ];
    let mut history = History::open_for_writing(&db).unwrap();
    for i in [2, 0, 1] {
        history.insert(&checks[i]).unwrap();
    }
    (db, checks)
}

#[test]
fn the_table_lists_every_check_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = history_in(dir.path());
    let out = coherence(
        &["history", "--db", &db.display().to_string()],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("| time | name | status | identity | behaviour |"),
        "{text}"
    );
    let rows: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("| 2026"))
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(
        rows[0].starts_with("| 2026-12-03T09:00:00Z | prod | unchanged | identical | equivalent |")
    );
    assert!(rows[1].starts_with("| 2026-12-03T10:00:00Z | staging | incomplete |"));
    assert!(rows[2].starts_with("| 2026-12-03T11:00:00Z | prod | flagged | different |"));
    assert!(
        rows[2].contains("| 20% [11–33%] | −4 pts [−9, +1] | 160 / 1 |"),
        "{}",
        rows[2]
    );
    assert!(rows[2].ends_with(&format!("{} |", dir.path().join("runs/p2").display())));
    assert!(
        text.contains(&format!("3 checks of 2 watches in {}", db.display())),
        "{text}"
    );
}

#[test]
fn a_name_keeps_that_watchs_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = history_in(dir.path());
    let db = db.display().to_string();
    let out = coherence(&["history", "prod", "--db", &db], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("| prod |").count(), 2, "{text}");
    assert!(!text.contains("staging"), "{text}");
    assert!(text.contains("2 checks of 1 watch in"), "{text}");

    let out = coherence(&["history", "absent", "--db", &db], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("No checks of the watch absent in {db} (it has checks of: prod, staging).\n")
    );
}

#[test]
fn json_gives_every_check_with_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let (db, checks) = history_in(dir.path());
    let db = db.display().to_string();
    let out = coherence(&["history", "--db", &db, "--json"], dir.path(), &[]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let listed: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    // Inserted as checks 3, 1, 2: ids in insertion order, listed in time order.
    let ids: Vec<i64> = listed.iter().map(|c| c["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [2, 3, 1]);
    let read: Vec<Check> = listed
        .into_iter()
        .map(|c| serde_json::from_value(c).unwrap())
        .collect();
    assert_eq!(read, checks);
}

#[test]
fn html_writes_the_trend_page_and_prints_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let (db, checks) = history_in(dir.path());
    let db = db.display().to_string();
    let page = dir.path().join("trend.html");
    let page_arg = page.display().to_string();
    let out = coherence(
        &["history", "--db", &db, "--html", &page_arg],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{page_arg}\n"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<strong>3 checks</strong> of 2 watches"),
        "{html}"
    );
    for c in &checks {
        assert!(html.contains(&format!("<td class=\"time\">{}</td>", c.started_at)));
    }
    // The run folders are below the page's folder: relative links.
    for run in ["runs/p1", "runs/s1", "runs/p2"] {
        assert!(
            html.contains(&format!("href=\"{run}/report.html\"")),
            "{run}"
        );
    }
    assert!(html.contains("unchanged &lt;because&gt; &amp; so"));
    assert!(!html.contains("<because>"));
}

#[test]
fn a_missing_database_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nowhere").join("history.sqlite");
    let out = coherence(
        &["history", "--db", &db.display().to_string()],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert!(err.contains("`coherence watch` creates it"), "{err}");
    assert!(!db.exists(), "reading must not create the database");
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_file_that_is_not_a_history_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "not a database at all, just a few words of text\n").unwrap();
    let out = coherence(
        &["history", "--db", &file.display().to_string()],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{} is not a coherence history", file.display())),
        "{err}"
    );
}

#[test]
fn the_default_database_is_found_in_the_data_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = history_in(dir.path());
    let data = db.parent().unwrap().display().to_string();
    let out = coherence(&["history"], dir.path(), &[("COHERENCE_DATA_DIR", &data)]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("3 checks of 2 watches"));

    let empty = dir.path().join("empty");
    History::open(&empty.join("history.sqlite")).unwrap();
    let empty = empty.display().to_string();
    let out = coherence(&["history"], dir.path(), &[("COHERENCE_DATA_DIR", &empty)]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("No checks yet in "),
        "{}",
        stdout(&out)
    );
}

/// Text from the database (a tampered row, a hostile run folder's name) cannot drive the
/// terminal the table is printed on: ESC, OSC, BEL, C1 and bidi overrides are shown visible.
#[test]
fn control_characters_in_the_database_are_shown_visible_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite");
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{202e}gnp.exe";
    let mut history = History::open_for_writing(&db).unwrap();
    history
        .insert(&Check {
            identity: evil.into(),
            run_dir: evil.into(),
            ..check(
                "prod",
                "2026-12-03T09:00:00Z",
                CheckStatus::Unchanged,
                dir.path(),
            )
        })
        .unwrap();
    drop(history);
    let out = coherence(
        &["history", "--db", &db.display().to_string()],
        dir.path(),
        &[],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert_no_terminal_controls(&text);
    assert!(text.contains("␛]0;pwned␇␛[2J"), "{text}");
}
