//! Writes a small watch history into the database at PATH through the store's API (two watches,
//! each status, a missing interval, a string with markup) and prints each check's time, one a
//! line: the input of the trend page's browser check in `.ci/run`.

use std::path::PathBuf;

use coherence::history::{Check, CheckStatus, History};

fn main() -> anyhow::Result<()> {
    let Some(db) = std::env::args_os().nth(1).map(PathBuf::from) else {
        anyhow::bail!("usage: history_fixture PATH (the history database to write)");
    };
    let runs = db
        .parent()
        .map(|dir| dir.join("runs"))
        .unwrap_or_else(|| PathBuf::from("runs"));
    let check = |name: &str, at: &str, status: CheckStatus, identity: &str, e_value: f64| Check {
        endpoint: format!("http://127.0.0.1:8080/{name}/v1"),
        baseline: runs.join("baseline").display().to_string(),
        status,
        identity: identity.into(),
        because: format!("{identity} against the baseline"),
        e_value,
        pair_further: 12,
        control_further: 6,
        ties: 2,
        substituted_share: Some(0.05),
        substituted_low: Some(0.01),
        substituted_high: Some(0.15),
        quality_difference: Some(-0.01),
        quality_low: Some(-0.05),
        quality_high: Some(0.03),
        failed: 0,
        run_dir: runs.join(format!("{name}-{at}")).display().to_string(),
        ..Check::sample(name, at)
    };
    let checks = [
        check(
            "prod",
            "2026-12-01T10:00:00Z",
            CheckStatus::Unchanged,
            "identical",
            0.4,
        ),
        check(
            "prod",
            "2026-12-02T10:00:00Z",
            CheckStatus::Unchanged,
            "undecided",
            3.5,
        ),
        Check {
            behaviour: "different".into(),
            because: "quality fell by 12 points <b>not bold</b> & the identity parted".into(),
            substituted_share: Some(0.2),
            substituted_low: Some(0.11),
            substituted_high: Some(0.33),
            quality_difference: Some(-0.12),
            quality_low: Some(-0.18),
            quality_high: Some(-0.06),
            ..check(
                "prod",
                "2026-12-03T10:00:00Z",
                CheckStatus::Flagged,
                "different",
                4.2e5,
            )
        },
        Check {
            failed: 40,
            substituted_share: None,
            substituted_low: None,
            substituted_high: None,
            quality_difference: None,
            quality_low: None,
            quality_high: None,
            graded: 0,
            ..check(
                "staging",
                "2026-12-02T12:00:00Z",
                CheckStatus::Incomplete,
                "undecided",
                1.0,
            )
        },
        check(
            "staging",
            "2026-12-03T12:00:00Z",
            CheckStatus::Unchanged,
            "identical",
            0.2,
        ),
    ];
    let mut history = History::open_for_writing(&db)?;
    for c in &checks {
        history.insert(c)?;
        println!("{}", c.started_at);
    }
    Ok(())
}
