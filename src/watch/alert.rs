//! `watch --on-alert CMD`: the user's command, run through `sh -c` in its own process group
//! after a check that is not `unchanged`, with the check as one JSON object on its standard
//! input; past its timeout the whole group is killed.

use std::io::Write;
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};

use crate::history::{Check, CheckStatus};

/// How long the command may run before it is killed: a hung webhook must not stall the watch.
pub const ALERT_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether a check calls for the alert: flagged or incomplete.
pub fn alerts(check: &Check) -> bool {
    check.status != CheckStatus::Unchanged
}

/// Run `command` for `check`: the check as JSON on its stdin, its stdout and stderr on the
/// watch's stderr (the watch's stdout stays one line, or one JSON object, per check), and
/// `COHERENCE_WATCH`, `COHERENCE_STATUS`, `COHERENCE_RUN_DIR` and `COHERENCE_REPORT` set.
/// An exit other than 0, a command that cannot start, or one killed after `timeout` (with every
/// process it started, and whether or not it read its input) is an error that says which; the
/// caller warns and the watch goes on.
pub fn run_alert(command: &str, check: &Check, timeout: Duration) -> anyhow::Result<()> {
    let json = serde_json::to_string(check)? + "\n";
    let to_stderr = || -> anyhow::Result<Stdio> {
        Ok(Stdio::from(std::io::stderr().as_fd().try_clone_to_owned()?))
    };
    let report = std::path::Path::new(&check.run_dir).join("report.html");
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(command)
        .env("COHERENCE_WATCH", &check.name)
        .env("COHERENCE_STATUS", check.status.as_str())
        .env("COHERENCE_RUN_DIR", &check.run_dir)
        .env("COHERENCE_REPORT", report)
        .stdin(Stdio::piped())
        .stdout(to_stderr()?)
        .stderr(to_stderr()?);
    // Its own process group, so that the timeout ends whatever the command started too.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut sh, 0);
    let mut child = sh.spawn().context("cannot start `sh`")?;
    if let Some(mut stdin) = child.stdin.take() {
        // Written beside the wait, so a command that never reads a check larger than the pipe
        // holds cannot stall the watch past the timeout (the pipe breaks when the group ends);
        // one that does not read closes the pipe: not an error of the alert.
        std::thread::spawn(move || {
            let _ = stdin.write_all(json.as_bytes());
        });
    }
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return match status.code() {
                Some(0) => Ok(()),
                Some(code) => Err(anyhow!("exited with {code}")),
                None => Err(anyhow!("ended by a signal ({status})")),
            };
        }
        if started.elapsed() >= timeout {
            end_group(&mut child);
            let _ = child.wait();
            return Err(anyhow!(
                "still running after {}s: killed with every process it started",
                timeout.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kill the command's process group (the shell and whatever it started), else the shell.
fn end_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on the group this process created for the child (its pid is the
        // group's id while the child is not yet reaped, as it is not here).
        if unsafe { libc::kill(-pid, libc::SIGKILL) } == 0 {
            return;
        }
    }
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flagged(dir: &std::path::Path) -> Check {
        Check {
            run_dir: dir.join("run").display().to_string(),
            ..Check::sample("prod", "2026-12-03T10:00:00Z")
        }
    }

    #[test]
    fn the_command_reads_the_check_and_its_variables() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("alert.txt");
        let command = format!(
            "cat > '{}'; echo \"$COHERENCE_WATCH $COHERENCE_STATUS $COHERENCE_REPORT\" >> '{}'",
            out.display(),
            out.display()
        );
        let check = flagged(dir.path());
        run_alert(&command, &check, ALERT_TIMEOUT).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        let (json, vars) = text.split_once('\n').unwrap();
        let read: Check = serde_json::from_str(json).unwrap();
        assert_eq!(read, check);
        assert_eq!(
            vars.trim(),
            format!("prod flagged {}/run/report.html", dir.path().display())
        );
    }

    #[test]
    fn a_failing_or_hanging_command_is_an_error_that_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let check = flagged(dir.path());
        let e = run_alert("exit 3", &check, ALERT_TIMEOUT).unwrap_err();
        assert_eq!(e.to_string(), "exited with 3");
        let started = Instant::now();
        let e = run_alert("sleep 30", &check, Duration::from_millis(200)).unwrap_err();
        assert!(e.to_string().contains("killed"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
        // A command that ignores its input still runs.
        run_alert("true", &check, ALERT_TIMEOUT).unwrap();
    }

    /// Whether process `pid` is gone (or a zombie no one reaped) within two seconds.
    #[cfg(target_os = "linux")]
    fn gone(pid: i32) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(2) {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
            let state = stat.as_deref().ok().and_then(|s| s.rsplit(')').next());
            if state.is_none_or(|s| s.trim_start().starts_with('Z')) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_timeout_ends_what_the_command_started_and_an_unread_check_cannot_stall_it() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // A command that leaves a child behind and never reads its input, for a check far
        // larger than a pipe holds.
        let command = format!("sleep 60 & echo $! > '{}'; exec sleep 60", pids.display());
        let check = Check {
            because: "x".repeat(4 << 20),
            ..flagged(dir.path())
        };
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(run_alert(&command, &check, Duration::from_millis(500)));
        });
        let e = finished
            .recv_timeout(Duration::from_secs(10))
            .expect("the watch went on past the timeout")
            .unwrap_err();
        assert!(e.to_string().contains("killed"), "{e}");
        let left: i32 = std::fs::read_to_string(&pids)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            gone(left),
            "the command's child {left} outlived the timeout"
        );
    }

    #[test]
    fn only_a_check_that_is_not_unchanged_alerts() {
        let dir = tempfile::tempdir().unwrap();
        let mut check = flagged(dir.path());
        assert!(alerts(&check));
        check.status = CheckStatus::Incomplete;
        assert!(alerts(&check));
        check.status = CheckStatus::Unchanged;
        assert!(!alerts(&check));
    }
}
