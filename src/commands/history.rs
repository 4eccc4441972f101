//! `coherence history`: the checks `coherence watch` recorded, as a table, as JSON or as the
//! trend page.

use std::path::Path;

use super::stdout;
use crate::cli::HistoryArgs;
use crate::doc::visible;
use crate::error::{CliError, Exit};
use crate::history::{default_db, page, Check, History};
use crate::report::markdown_table;

pub fn history(args: &HistoryArgs) -> Result<Exit, CliError> {
    let db = args.db.clone().unwrap_or_else(default_db);
    if !db.exists() {
        return Err(CliError::usage(anyhow::anyhow!(
            "{}: no history there; `coherence watch` creates it with its first check (or give \
             --db PATH)",
            db.display()
        )));
    }
    let history = History::open_for_reading(&db).map_err(CliError::usage)?;
    let (checks, skipped) = history
        .checks_and_skipped(args.name.as_deref())
        .map_err(CliError::usage)?;
    for warning in skipped {
        eprintln!("warning: {}", visible(&warning));
    }
    if let Some(file) = &args.html {
        write_page(file, &checks)?;
        stdout::print(&format!("{}\n", file.display()))?;
    } else if args.json {
        let listed: Vec<serde_json::Value> = checks
            .iter()
            .map(|(id, check)| with_id(*id, check))
            .collect::<Result<_, _>>()
            .map_err(CliError::usage)?;
        let text = serde_json::to_string_pretty(&listed).map_err(CliError::usage)?;
        stdout::print(&(text + "\n"))?;
    } else if checks.is_empty() {
        stdout::print(&no_checks(&history, args.name.as_deref())?)?;
    } else {
        stdout::print(&table(&checks, &db))?;
    }
    Ok(Exit::Success)
}

/// One check as JSON, its id first.
fn with_id(id: i64, check: &Check) -> serde_json::Result<serde_json::Value> {
    let mut fields = serde_json::Map::new();
    fields.insert("id".into(), id.into());
    if let serde_json::Value::Object(rest) = serde_json::to_value(check)? {
        fields.extend(rest);
    }
    Ok(fields.into())
}

/// What an empty listing says: no checks at all, or none of this watch (naming those there are).
fn no_checks(history: &History, name: Option<&str>) -> Result<String, CliError> {
    let db = history.path().display();
    let Some(name) = name else {
        return Ok(format!("No checks yet in {db}.\n"));
    };
    let names = history.names().map_err(CliError::usage)?;
    Ok(if names.is_empty() {
        format!("No checks yet in {db}.\n")
    } else {
        format!(
            "No checks of the watch {} in {db} (it has checks of: {}).\n",
            visible(name),
            visible(&names.join(", "))
        )
    })
}

/// One row per check, oldest first, and a closing count.
fn table(checks: &[(i64, Check)], db: &Path) -> String {
    let rows: Vec<Vec<String>> = checks
        .iter()
        .map(|(_, c)| {
            vec![
                c.started_at.clone(),
                c.name.clone(),
                c.status.to_string(),
                c.identity.clone(),
                c.behaviour.clone(),
                c.substituted_text(),
                c.quality_text(),
                format!("{} / {}", c.requests, c.failed),
                c.run_dir.clone(),
            ]
        })
        .collect();
    let headers = [
        "time",
        "name",
        "status",
        "identity",
        "behaviour",
        "substituted share",
        "quality difference",
        "requests / failed",
        "run folder",
    ];
    let mut watches: Vec<&str> = checks.iter().map(|(_, c)| c.name.as_str()).collect();
    watches.sort_unstable();
    watches.dedup();
    format!(
        "{}\n{} of {} in {}\n",
        markdown_table(&headers, &rows),
        count(checks.len(), "check", "checks"),
        count(watches.len(), "watch", "watches"),
        db.display()
    )
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Write the trend page to `file` (its folder created when missing).
fn write_page(file: &Path, checks: &[(i64, Check)]) -> Result<(), CliError> {
    let cannot = |e: std::io::Error| {
        CliError::output(anyhow::Error::new(e).context(format!("cannot write {}", file.display())))
    };
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(cannot)?;
    let page_dir = dir.canonicalize().map_err(cannot)?;
    std::fs::write(file, page::render(checks, &page_dir)).map_err(cannot)
}
