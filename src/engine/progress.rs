//! The one progress reporter on stderr: a bar per endpoint (or one status line) on a terminal,
//! plain lines otherwise, nothing with `--quiet`. Notes and warnings go through it so that they
//! print above the bars instead of through them.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a plain per-endpoint count line is printed when stderr is not a terminal.
const PLAIN_COUNT_EVERY: Duration = Duration::from_secs(2);

/// In plain output, the longest silence before [`Progress::heartbeat`] says the run is waiting.
const HEARTBEAT_AFTER: Duration = Duration::from_secs(30);

/// One outcome, as progress counts it.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Counts toward the endpoint's planned total (an unplanned retry does not).
    pub planned: bool,
    /// Counts as an error.
    pub failed: bool,
    /// A line to print about it (a failure message), if any.
    pub line: Option<String>,
}

struct Counter {
    done: u64,
    total: u64,
    errors: u64,
    last_line: Option<Instant>,
}

enum Output {
    Quiet,
    Plain,
    Terminal {
        multi: MultiProgress,
        bars: HashMap<String, ProgressBar>,
        status: Option<ProgressBar>,
    },
}

pub struct Progress {
    output: Output,
    started: Instant,
    counters: HashMap<String, Counter>,
    /// How often a plain status line is printed.
    status_every: Duration,
    last_status: Option<Instant>,
    /// When plain output last printed a line (or started).
    last_printed: Cell<Instant>,
}

impl Progress {
    /// Counts per endpoint: `work` lists each endpoint with the number of outcomes it will give.
    pub fn counting(quiet: bool, work: &[(String, u64)]) -> Self {
        let mut progress = Progress::with(quiet, PLAIN_COUNT_EVERY);
        progress.counters = work
            .iter()
            .map(|(name, total)| {
                let counter = Counter {
                    done: 0,
                    total: *total,
                    errors: 0,
                    last_line: None,
                };
                (name.clone(), counter)
            })
            .collect();
        if let Output::Terminal { multi, bars, .. } = &mut progress.output {
            let width = work.iter().map(|(n, _)| n.len()).max().unwrap_or(4);
            let style = ProgressStyle::with_template(&format!(
                "{{prefix:>{width}}} [{{bar:30.cyan/blue}}] {{pos}}/{{len}} {{msg}} {{elapsed_precise}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            for (name, total) in work {
                let bar = multi.add(ProgressBar::new(*total));
                bar.set_style(style.clone());
                bar.set_prefix(name.clone());
                bar.set_message("errors 0");
                bar.enable_steady_tick(Duration::from_millis(250));
                bars.insert(name.clone(), bar);
            }
        }
        progress
    }

    /// One status line (bench, soak): redrawn on a terminal, printed every `every` otherwise.
    pub fn status_line(quiet: bool, every: Duration) -> Self {
        let mut progress = Progress::with(quiet, every);
        if let Output::Terminal { multi, status, .. } = &mut progress.output {
            let bar = multi.add(ProgressBar::no_length());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            *status = Some(bar);
        }
        progress
    }

    fn with(quiet: bool, status_every: Duration) -> Self {
        let output = if quiet {
            Output::Quiet
        } else if std::io::stderr().is_terminal() {
            Output::Terminal {
                multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
                bars: HashMap::new(),
                status: None,
            }
        } else {
            Output::Plain
        };
        Progress {
            output,
            started: Instant::now(),
            counters: HashMap::new(),
            status_every,
            last_status: None,
            last_printed: Cell::new(Instant::now()),
        }
    }

    /// A permanent line (above the bars on a terminal), unless quiet.
    pub fn note(&self, line: &str) {
        match &self.output {
            Output::Quiet => {}
            Output::Plain => self.print(line),
            Output::Terminal { multi, .. } => {
                let _ = multi.println(line);
            }
        }
    }

    /// Count one outcome of `endpoint`.
    pub fn record(&mut self, endpoint: &str, tally: Tally) {
        let Some(c) = self.counters.get_mut(endpoint) else {
            return;
        };
        if tally.planned {
            c.done += 1;
        }
        if tally.failed {
            c.errors += 1;
        }
        let (done, total, errors) = (c.done, c.total, c.errors);
        let due = c.last_line.is_none_or(|t| t.elapsed() >= PLAIN_COUNT_EVERY) || done == total;
        if due {
            c.last_line = Some(Instant::now());
        }
        if let Some(line) = &tally.line {
            self.note(line);
        }
        match &self.output {
            Output::Quiet => {}
            Output::Plain => {
                if due {
                    let line = format!(
                        "{endpoint}: {done}/{total} done, {errors} errors, {:.1}s",
                        self.started.elapsed().as_secs_f64()
                    );
                    self.print(&line);
                }
            }
            Output::Terminal { bars, .. } => {
                if let Some(bar) = bars.get(endpoint) {
                    bar.set_position(done);
                    bar.set_message(format!("errors {errors}"));
                }
            }
        }
    }

    /// The current status: redrawn on a terminal; printed when due (or `force`d) otherwise.
    pub fn status(&mut self, line: &str, force: bool) {
        match &self.output {
            Output::Quiet => {}
            Output::Terminal { status, .. } => {
                if let Some(bar) = status {
                    bar.set_message(line.to_string());
                }
            }
            Output::Plain => {
                let due = self
                    .last_status
                    .is_none_or(|t| t.elapsed() >= self.status_every);
                if due || force {
                    self.last_status = Some(Instant::now());
                    self.print(line);
                }
            }
        }
    }

    /// In plain output, after [`HEARTBEAT_AFTER`] without a line (long generations in flight): a
    /// line saying so, with each endpoint's count, so that a log shows a live run. A terminal's
    /// bars tick by themselves.
    pub fn heartbeat(&self) {
        if let Some(line) = self.heartbeat_line() {
            self.print(&line);
        }
    }

    fn heartbeat_line(&self) -> Option<String> {
        if !matches!(self.output, Output::Plain)
            || self.last_printed.get().elapsed() < HEARTBEAT_AFTER
        {
            return None;
        }
        let mut counts: Vec<String> = self
            .counters
            .iter()
            .map(|(name, c)| format!("{name} {}/{}", c.done, c.total))
            .collect();
        counts.sort();
        Some(format!(
            "waiting for answers ({}), {:.1}s",
            counts.join(", "),
            self.started.elapsed().as_secs_f64()
        ))
    }

    fn print(&self, line: &str) {
        self.last_printed.set(Instant::now());
        eprintln!("{line}");
    }

    /// What is happening now, shown only on a terminal (plain output would repeat it forever).
    pub fn activity(&self, line: &str) {
        if let Output::Terminal {
            status: Some(bar), ..
        } = &self.output
        {
            bar.set_message(line.to_string());
        }
    }

    /// Leave the bars at their final counts and clear the status line.
    pub fn finish(&self) {
        if let Output::Terminal { bars, status, .. } = &self.output {
            for bar in bars.values() {
                bar.finish();
            }
            if let Some(bar) = status {
                bar.finish_and_clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_output_says_it_is_waiting_after_thirty_silent_seconds() {
        let mut progress = Progress::with(false, PLAIN_COUNT_EVERY);
        progress.output = Output::Plain;
        progress.counters = Progress::counting(true, &[("b".into(), 2), ("a".into(), 3)]).counters;
        assert_eq!(
            progress.heartbeat_line(),
            None,
            "nothing is due at the start"
        );
        let long_ago = Instant::now() - HEARTBEAT_AFTER - Duration::from_secs(1);
        progress.last_printed.set(long_ago);
        let line = progress.heartbeat_line().unwrap();
        assert!(
            line.starts_with("waiting for answers (a 0/3, b 0/2), "),
            "{line}"
        );
        progress.heartbeat();
        assert_eq!(
            progress.heartbeat_line(),
            None,
            "the line just printed resets it"
        );
        progress.output = Output::Quiet;
        progress.last_printed.set(long_ago);
        assert_eq!(progress.heartbeat_line(), None, "--quiet prints nothing");
    }
}
