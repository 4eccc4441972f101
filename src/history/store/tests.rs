//! The history database's tests: every field kept, order, filters, the writer's lock, refusals.

use super::*;

fn db_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("nested").join("history.sqlite")
}

#[test]
fn every_field_comes_back_as_it_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_in(&dir);
    let full = Check::sample("prod", "2026-12-03T10:00:00Z");
    let empty = Check {
        substituted_share: None,
        substituted_low: None,
        substituted_high: None,
        quality_difference: None,
        quality_low: None,
        quality_high: None,
        e_value: f64::INFINITY,
        status: CheckStatus::Incomplete,
        because: "quotes ' \" and <tags> & ünïcode".into(),
        ..Check::sample("prod", "2026-12-03T11:00:00Z")
    };
    let ids = {
        let mut history = History::open(&path).unwrap();
        [
            history.insert(&full).unwrap(),
            history.insert(&empty).unwrap(),
        ]
    };
    assert!(ids[0] < ids[1], "{ids:?}");
    // A fresh connection reads what the first one committed.
    let history = History::open(&path).unwrap();
    assert_eq!(
        history.checks(None).unwrap(),
        vec![(ids[0], full), (ids[1], empty)]
    );
}

#[test]
fn a_nan_e_value_is_kept_as_nan() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&db_in(&dir)).unwrap();
    let check = Check {
        e_value: f64::NAN,
        ..Check::sample("prod", "2026-12-03T10:00:00Z")
    };
    history.insert(&check).unwrap();
    let (_, read) = &history.checks(None).unwrap()[0];
    assert!(read.e_value.is_nan(), "{}", read.e_value);
}

#[test]
fn checks_come_oldest_first_and_filter_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&db_in(&dir)).unwrap();
    for (name, at) in [
        ("staging", "2026-12-03T12:00:00Z"),
        ("prod", "2026-12-03T11:00:00Z"),
        ("prod", "2026-12-03T09:00:00Z"),
        ("prod", "2026-12-03T11:00:00Z"),
    ] {
        history.insert(&Check::sample(name, at)).unwrap();
    }
    let listed = |name| -> Vec<(i64, String, String)> {
        let checks = history.checks(name).unwrap();
        checks
            .into_iter()
            .map(|(id, c)| (id, c.name, c.started_at))
            .collect()
    };
    let at = |s: &str| s.to_string();
    assert_eq!(
        listed(None),
        [
            (3, at("prod"), at("2026-12-03T09:00:00Z")),
            (2, at("prod"), at("2026-12-03T11:00:00Z")),
            (4, at("prod"), at("2026-12-03T11:00:00Z")),
            (1, at("staging"), at("2026-12-03T12:00:00Z")),
        ]
    );
    let prod: Vec<i64> = listed(Some("prod")).iter().map(|r| r.0).collect();
    assert_eq!(prod, [3, 2, 4]);
    assert!(listed(Some("absent")).is_empty());
    assert_eq!(history.names().unwrap(), ["prod", "staging"]);
}

#[test]
fn the_latest_check_of_each_watch_is_the_last_stored_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&db_in(&dir)).unwrap();
    assert!(history.latest().unwrap().is_empty());
    for (name, at, status) in [
        ("prod", "2026-12-03T09:00:00Z", CheckStatus::Flagged),
        ("canary", "2026-12-03T09:00:01Z", CheckStatus::Unchanged),
        ("prod", "2026-12-03T10:00:00Z", CheckStatus::Unchanged),
        ("canary", "2026-12-03T10:00:01Z", CheckStatus::Flagged),
    ] {
        history
            .insert(&Check {
                status,
                ..Check::sample(name, at)
            })
            .unwrap();
    }
    let latest: Vec<(String, String, CheckStatus)> = history
        .latest()
        .unwrap()
        .into_iter()
        .map(|c| (c.name, c.started_at, c.status))
        .collect();
    assert_eq!(
        latest,
        [
            (
                "canary".to_string(),
                "2026-12-03T10:00:01Z".to_string(),
                CheckStatus::Flagged
            ),
            (
                "prod".to_string(),
                "2026-12-03T10:00:00Z".to_string(),
                CheckStatus::Unchanged
            ),
        ]
    );
}

#[test]
fn a_new_history_is_empty_and_journals_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_in(&dir);
    let history = History::open(&path).unwrap();
    assert!(history.checks(None).unwrap().is_empty());
    assert!(history.names().unwrap().is_empty());
    let pragma = |name: &str| -> String {
        history
            .db
            .query_row(&format!("PRAGMA {name}"), [], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            })
            .map(|v| format!("{v:?}"))
            .unwrap()
    };
    assert_eq!(pragma("journal_mode"), r#"Text("wal")"#);
    // FULL is 2.
    assert_eq!(pragma("synchronous"), "Integer(2)");
    assert_eq!(pragma("user_version"), format!("Integer({SCHEMA_VERSION})"));
}

#[cfg(unix)]
#[test]
fn a_second_writer_is_refused_naming_the_database_and_the_holder() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let path = db_in(&dir);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let lock = lock_path(&path);
    // Another process holds the lock file as a writer does: its pid in the file, an flock on it.
    let script = format!(
        "exec 9<>'{}'; echo $$ >&9; flock -n 9 || exit 1; echo held; exec sleep 60",
        lock.display()
    );
    let mut holder = std::process::Command::new("sh")
        .args(["-c", &script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "held");
    let refused = History::open_for_writing(&path)
        .err()
        .map(|e| format!("{e:#}"));
    holder.kill().unwrap();
    holder.wait().unwrap();
    let refused = refused.expect("a second writer is refused");
    assert!(refused.contains(&path.display().to_string()), "{refused}");
    assert!(
        refused.contains(&format!(
            "the history database is in use by pid {}",
            holder.id()
        )),
        "{refused}"
    );
    // Readers take no lock, and the holder's death released it.
    History::open(&path).unwrap();
    let mut writer = History::open_for_writing(&path).unwrap();
    writer
        .insert(&Check::sample("prod", "2026-12-03T10:00:00Z"))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap().trim(),
        std::process::id().to_string()
    );
    // This process holds it already: opening again is not a second writer.
    History::open_for_writing(&path).unwrap();
}

#[cfg(unix)]
#[test]
fn a_lock_file_that_is_a_link_or_a_directory_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_in(&dir);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let precious = dir.path().join("passwd");
    std::fs::write(&precious, "root:x:0:0\n").unwrap();
    std::os::unix::fs::symlink(&precious, lock_path(&path)).unwrap();
    let refused = format!("{:#}", History::open_for_writing(&path).err().unwrap());
    assert!(refused.contains("is a symbolic link"), "{refused}");
    assert!(refused.contains("history.sqlite.lock"), "{refused}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "root:x:0:0\n");
    assert!(!path.exists(), "no database was created");
    std::fs::remove_file(lock_path(&path)).unwrap();
    std::fs::create_dir(lock_path(&path)).unwrap();
    let refused = format!("{:#}", History::open_for_writing(&path).err().unwrap());
    assert!(refused.contains("is a directory"), "{refused}");
}

#[test]
fn a_file_that_is_not_a_history_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "this is not a database, it is a long enough line of text\n",
    )
    .unwrap();
    let error = format!("{:#}", History::open(&text).err().unwrap());
    assert!(error.contains(&text.display().to_string()), "{error}");
    assert!(error.contains("is not a coherence history"), "{error}");
    assert_eq!(
        std::fs::read_to_string(&text).unwrap(),
        "this is not a database, it is a long enough line of text\n"
    );

    let other = dir.path().join("other.sqlite");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE songs (title TEXT)")
        .unwrap();
    let error = format!("{:#}", History::open(&other).err().unwrap());
    assert!(
        error.contains("other.sqlite is not a coherence history"),
        "{error}"
    );
}

#[test]
fn a_history_from_a_newer_coherence_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_in(&dir);
    drop(History::open(&path).unwrap());
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let error = format!("{:#}", History::open(&path).err().unwrap());
    assert!(
        error.contains("history.sqlite was written by a newer coherence"),
        "{error}"
    );
}

#[test]
fn the_default_database_follows_the_environment() {
    let env = |vars: &[(&str, &str)]| {
        default_db_in(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        })
    };
    let all = [
        ("COHERENCE_DATA_DIR", "/data/c"),
        ("XDG_DATA_HOME", "/xdg"),
        ("HOME", "/home/u"),
    ];
    assert_eq!(env(&all), Path::new("/data/c/history.sqlite"));
    assert_eq!(env(&all[1..]), Path::new("/xdg/coherence/history.sqlite"));
    assert_eq!(
        env(&[("XDG_DATA_HOME", "relative"), ("HOME", "/home/u")]),
        Path::new("/home/u/.local/share/coherence/history.sqlite")
    );
    assert_eq!(
        env(&[("COHERENCE_DATA_DIR", ""), ("HOME", "/home/u")]),
        Path::new("/home/u/.local/share/coherence/history.sqlite")
    );
    assert_eq!(env(&[]), Path::new("history.sqlite"));
}

#[test]
fn a_tampered_row_is_skipped_with_a_warning_and_the_others_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_in(&dir);
    let mut history = History::open(&path).unwrap();
    for at in [
        "2026-12-03T10:00:00Z",
        "2026-12-03T11:00:00Z",
        "2026-12-03T12:00:00Z",
    ] {
        history.insert(&Check::sample("prod", at)).unwrap();
    }
    // What a hand edit leaves: a status no coherence writes, text where a count goes.
    history
        .db
        .execute_batch(
            "UPDATE checks SET status = 'pwned' WHERE id = 1;
             UPDATE checks SET graded = 'many' WHERE id = 3;",
        )
        .unwrap();
    let reader = History::open_for_reading(&path).unwrap();
    let (checks, skipped) = reader.checks_and_skipped(None).unwrap();
    assert_eq!(checks.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [2]);
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped[0].contains("check 1 skipped")
            && skipped[0].contains("`pwned` is not a check status"),
        "{skipped:?}"
    );
    assert!(skipped[1].contains("check 3 skipped"), "{skipped:?}");
    assert_eq!(reader.checks(Some("prod")).unwrap().len(), 1);
}

#[test]
fn a_reader_writes_nothing_so_a_database_on_read_only_storage_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_in(&dir);
    History::open_for_writing(&path)
        .unwrap()
        .insert(&Check::sample("prod", "2026-12-03T10:00:00Z"))
        .unwrap();
    // A copy as an archive keeps it: its journal back in rollback mode, no `-wal` or `-shm`.
    Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA journal_mode = DELETE", [], |r| {
            r.get::<_, String>(0)
        })
        .unwrap();
    let files = || {
        let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let (before, listed) = (std::fs::read(&path).unwrap(), files());
    let reader = History::open_for_reading(&path).unwrap();
    assert_eq!(reader.checks(None).unwrap().len(), 1);
    assert_eq!(reader.names().unwrap(), ["prod"]);
    drop(reader);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the reader wrote the database"
    );
    assert_eq!(
        files(),
        listed,
        "the reader made a file beside the database"
    );
    // What the writer's open does to it (the journal mode set): what read-only storage refuses.
    drop(History::open(&path).unwrap());
    assert_ne!(std::fs::read(&path).unwrap(), before);
    // An empty file reads as no checks, and stays empty.
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    let reader = History::open_for_reading(&empty).unwrap();
    assert!(reader.checks(None).unwrap().is_empty() && reader.names().unwrap().is_empty());
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}
