//! Progress on stderr: a bar per endpoint on a terminal, plain lines otherwise, nothing with --quiet.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::record::Record;

struct Counter {
    done: u64,
    total: u64,
    errors: u64,
    last_line: Option<Instant>,
}

enum Output {
    Quiet,
    Plain,
    Bars {
        multi: MultiProgress,
        bars: HashMap<String, ProgressBar>,
    },
}

pub struct Progress {
    output: Output,
    started: Instant,
    counters: HashMap<String, Counter>,
}

impl Progress {
    /// `work` lists each endpoint with the number of requests it will receive.
    pub fn new(quiet: bool, work: &[(String, u64)]) -> Self {
        let counters = work
            .iter()
            .map(|(name, total)| {
                (
                    name.clone(),
                    Counter {
                        done: 0,
                        total: *total,
                        errors: 0,
                        last_line: None,
                    },
                )
            })
            .collect();
        let output = if quiet {
            Output::Quiet
        } else if std::io::stderr().is_terminal() {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let width = work.iter().map(|(n, _)| n.len()).max().unwrap_or(4);
            let style = ProgressStyle::with_template(&format!(
                "{{prefix:>{width}}} [{{bar:30.cyan/blue}}] {{pos}}/{{len}} {{msg}} {{elapsed_precise}}"
            ))
            .expect("valid template")
            .progress_chars("=> ");
            let bars = work
                .iter()
                .map(|(name, total)| {
                    let bar = multi.add(ProgressBar::new(*total));
                    bar.set_style(style.clone());
                    bar.set_prefix(name.clone());
                    bar.set_message("errors 0");
                    bar.enable_steady_tick(Duration::from_millis(250));
                    (name.clone(), bar)
                })
                .collect();
            Output::Bars { multi, bars }
        } else {
            Output::Plain
        };
        Progress {
            output,
            started: Instant::now(),
            counters,
        }
    }

    /// A line above the bars (or on stderr), unless quiet.
    pub fn note(&self, line: &str) {
        match &self.output {
            Output::Quiet => {}
            Output::Plain => eprintln!("{line}"),
            Output::Bars { multi, .. } => {
                let _ = multi.println(line);
            }
        }
    }

    pub fn record(&mut self, r: &Record) {
        let Some(c) = self.counters.get_mut(&r.endpoint) else {
            return;
        };
        if r.note.is_none() {
            c.done += 1;
        }
        if r.is_request_failure() {
            c.errors += 1;
        }
        let (done, total, errors) = (c.done, c.total, c.errors);
        let due = c
            .last_line
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(2))
            || done == total;
        if due {
            c.last_line = Some(Instant::now());
        }
        let failure = r
            .error
            .as_ref()
            .map(|e| format!("{}: {} failed: {e}", r.endpoint, r.prompt));
        match &self.output {
            Output::Quiet => {}
            Output::Plain => {
                if let Some(f) = failure {
                    eprintln!("{f}");
                }
                if due {
                    eprintln!(
                        "{}: {done}/{total} done, {errors} errors, {:.1}s",
                        r.endpoint,
                        self.started.elapsed().as_secs_f64()
                    );
                }
            }
            Output::Bars { multi, bars } => {
                if let Some(f) = failure {
                    let _ = multi.println(f);
                }
                if let Some(bar) = bars.get(&r.endpoint) {
                    bar.set_position(done);
                    bar.set_message(format!("errors {errors}"));
                }
            }
        }
    }

    pub fn finish(&self) {
        if let Output::Bars { bars, .. } = &self.output {
            for bar in bars.values() {
                bar.finish();
            }
        }
    }
}
