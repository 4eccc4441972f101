//! Live output on stderr: a status line redrawn in place on a terminal, plain lines at an interval
//! otherwise, nothing with `--quiet`. Notes are permanent lines in every mode but quiet.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How the live output is shown.
enum LiveMode {
    Quiet,
    Plain,
    Line(ProgressBar),
}

/// The live output of one bench or soak.
pub struct Live {
    mode: LiveMode,
    every: Duration,
    last: Option<Instant>,
}

impl Live {
    /// `every`: how often a plain status line is printed when stderr is not a terminal.
    pub fn new(quiet: bool, every: Duration) -> Self {
        let mode = if quiet {
            LiveMode::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("template"));
            bar.enable_steady_tick(Duration::from_millis(250));
            LiveMode::Line(bar)
        } else {
            LiveMode::Plain
        };
        Live {
            mode,
            every,
            last: None,
        }
    }

    /// A permanent line.
    pub fn note(&self, line: &str) {
        match &self.mode {
            LiveMode::Quiet => {}
            LiveMode::Plain => eprintln!("{line}"),
            LiveMode::Line(bar) => bar.println(line),
        }
    }

    /// The current status: redrawn on a terminal; printed when due (or `force`d) otherwise.
    pub fn status(&mut self, line: &str, force: bool) {
        match &self.mode {
            LiveMode::Quiet => {}
            LiveMode::Line(bar) => bar.set_message(line.to_string()),
            LiveMode::Plain => {
                let due = self.last.is_none_or(|t| t.elapsed() >= self.every);
                if due || force {
                    self.last = Some(Instant::now());
                    eprintln!("{line}");
                }
            }
        }
    }

    /// What is happening now, shown only on a terminal (plain output would repeat it forever).
    pub fn activity(&self, line: &str) {
        if let LiveMode::Line(bar) = &self.mode {
            bar.set_message(line.to_string());
        }
    }

    pub fn finish(&self) {
        if let LiveMode::Line(bar) = &self.mode {
            bar.finish_and_clear();
        }
    }
}
