//! The one request engine: per-endpoint lanes of jobs, at most a lane's limit in flight at once
//! (never more than it has jobs), each outcome handed to one sink as it arrives; Ctrl-C or
//! SIGTERM stops it at once and keeps every outcome that arrived. A lane's jobs may carry a
//! release instant (open-loop traffic sent on a schedule) and a lane may have a deadline after
//! which what has not started is dropped and counted.

pub mod progress;
mod signal;

use std::collections::VecDeque;
use std::future::Future;
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

pub use progress::{Progress, Tally};
pub use signal::{interrupted, is_interrupted, watch};

/// The most requests in flight per endpoint a command or the config file may ask for
/// (`--concurrency`, `concurrency = …`).
pub const MAX_CONCURRENCY: usize = 1024;

/// The most arrivals per second an open-loop soak may ask for (`--rate`).
pub const MAX_RATE: f64 = 1000.0;

/// How often the sink's `tick` is called while the engine runs.
const TICK: Duration = Duration::from_secs(1);

/// `work`, unless Ctrl-C or SIGTERM comes first (None then, and `work` is dropped): for a wait
/// outside the lanes (a metrics probe) that must not hold up an interrupted command.
pub async fn unless_interrupted<T>(work: impl Future<Output = T>) -> Option<T> {
    tokio::select! {
        biased;
        () = interrupted() => None,
        out = work => Some(out),
    }
}

/// The jobs of one endpoint and how many of them may be in flight at once.
pub struct Lane<'a, J> {
    source: Box<dyn Iterator<Item = (Option<Instant>, J)> + Send + 'a>,
    limit: usize,
    deadline: Option<Instant>,
    /// Jobs carry release instants: the next one is drawn ahead to see when it is due.
    paced: bool,
}

impl<'a, J: 'a> Lane<'a, J> {
    /// Jobs sent in order as soon as a slot is free, at most `limit` (at least 1) at once. The
    /// jobs are drawn lazily: an endless iterator is an endless lane.
    pub fn new<I>(jobs: I, limit: usize) -> Self
    where
        I: IntoIterator<Item = J>,
        I::IntoIter: Send + 'a,
    {
        Lane {
            source: Box::new(jobs.into_iter().map(|j| (None, j))),
            limit: limit.max(1),
            deadline: None,
            paced: false,
        }
    }

    /// Jobs each sent at its instant (in order), or as soon as a slot frees after it.
    pub fn paced<I>(jobs: I, limit: usize) -> Self
    where
        I: IntoIterator<Item = (Instant, J)>,
        I::IntoIter: Send + 'a,
    {
        Lane {
            source: Box::new(jobs.into_iter().map(|(at, j)| (Some(at), j))),
            limit: limit.max(1),
            deadline: None,
            paced: true,
        }
    }

    /// A job not started by `deadline` is dropped with every job after it (counted in
    /// `Driven::dropped`).
    pub fn until(self, deadline: Instant) -> Self {
        Lane {
            deadline: Some(deadline),
            ..self
        }
    }
}

/// Where a job is sent from: its lane, the worker slot (0..limit) and whether it waited for
/// that slot after its release instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub endpoint: usize,
    pub worker: usize,
    pub waited: bool,
}

/// Where the outcomes go, in the order they arrive.
pub trait Sink<J, R> {
    /// Keep one outcome (journal it, count it). A job returned is sent next on the same lane,
    /// before its remaining jobs (a retry). An error stops the engine and is returned.
    fn take(&mut self, outcome: R) -> anyhow::Result<Option<J>>;

    /// Called every second while the engine runs (a live status line).
    fn tick(&mut self) {}
}

/// A sink that only keeps outcomes: `take` calls the closure and never asks for a retry.
pub struct Keep<F>(pub F);

impl<J, R, F: FnMut(R) -> anyhow::Result<()>> Sink<J, R> for Keep<F> {
    fn take(&mut self, outcome: R) -> anyhow::Result<Option<J>> {
        (self.0)(outcome).map(|()| None)
    }
}

/// What a drive did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Driven {
    /// Outcomes handed to the sink.
    pub delivered: usize,
    /// Ctrl-C or SIGTERM stopped it (requests then in flight were abandoned).
    pub interrupted: bool,
    /// Per lane: jobs dropped at the lane's deadline.
    pub dropped: Vec<u64>,
}

/// A job drawn from its lane and not yet started.
struct Next<J> {
    at: Option<Instant>,
    job: J,
    /// Released while the lane was full: it is waiting for a slot.
    held: bool,
}

struct State<'a, J> {
    lane: Lane<'a, J>,
    retries: VecDeque<J>,
    next: Option<Next<J>>,
    exhausted: bool,
    in_flight: usize,
    free: Vec<usize>,
    workers: usize,
    dropped: u64,
}

impl<'a, J> State<'a, J> {
    fn new(lane: Lane<'a, J>) -> Self {
        State {
            lane,
            retries: VecDeque::new(),
            next: None,
            exhausted: false,
            in_flight: 0,
            free: Vec::new(),
            workers: 0,
            dropped: 0,
        }
    }

    /// The next job to start now, if a slot is free and one is due.
    fn start(&mut self, now: Instant) -> Option<(J, usize, bool)> {
        if self.deadline_passed(now) {
            self.drop_rest();
        }
        let full = self.in_flight >= self.lane.limit;
        // An unpaced lane draws a job only when a slot is free: its source may decide on the spot
        // whether there is one (an endless lane that stops on a flag or a clock).
        if self.next.is_none() && !self.exhausted && (self.lane.paced || !full) {
            match self.lane.source.next() {
                Some((at, job)) => {
                    self.next = Some(Next {
                        at,
                        job,
                        held: false,
                    })
                }
                None => self.exhausted = true,
            }
        }
        if full {
            if let Some(n) = self
                .next
                .as_mut()
                .filter(|n| n.at.is_some_and(|t| t <= now))
            {
                n.held = true;
            }
            return None;
        }
        let (job, waited) = match self.retries.pop_front() {
            Some(job) => (job, false),
            None => {
                let due = self.next.as_ref()?.at.is_none_or(|t| t <= now);
                if !due {
                    return None;
                }
                let n = self.next.take()?;
                (n.job, n.held)
            }
        };
        self.in_flight += 1;
        let worker = self.free.pop().unwrap_or_else(|| {
            self.workers += 1;
            self.workers - 1
        });
        Some((job, worker, waited))
    }

    fn deadline_passed(&self, now: Instant) -> bool {
        self.lane.deadline.is_some_and(|d| now >= d)
    }

    /// The deadline has passed: drop what has not started.
    fn drop_rest(&mut self) {
        if self.exhausted && self.next.is_none() {
            return;
        }
        let waiting = u64::from(self.next.take().is_some());
        let rest = self.lane.source.by_ref().count() as u64;
        self.dropped += waiting + rest;
        self.exhausted = true;
    }

    fn finished(&self) -> bool {
        self.exhausted && self.next.is_none() && self.retries.is_empty() && self.in_flight == 0
    }

    /// When this lane next needs attention without an outcome arriving: its next release (unless
    /// it is already waiting for a slot) or its deadline.
    fn wake(&self, now: Instant) -> Option<Instant> {
        let release = self
            .next
            .as_ref()
            .filter(|n| !n.held)
            .and_then(|n| n.at)
            .filter(|t| *t > now);
        let deadline = self
            .lane
            .deadline
            .filter(|_| !(self.exhausted && self.next.is_none()));
        release.into_iter().chain(deadline).min()
    }
}

/// Send every job of every lane through `send`, at most each lane's limit in flight, and hand
/// each outcome to `sink` as it arrives. Returns when every lane is done, or at once on Ctrl-C or
/// SIGTERM (outcomes that had arrived are kept), or with the sink's first error.
pub async fn drive<'a, J, R, F, Fut>(
    lanes: Vec<Lane<'a, J>>,
    send: F,
    sink: &mut impl Sink<J, R>,
) -> anyhow::Result<Driven>
where
    F: Fn(J, Slot) -> Fut,
    Fut: Future<Output = R>,
{
    let mut states: Vec<State<'a, J>> = lanes.into_iter().map(State::new).collect();
    let mut in_flight = FuturesUnordered::new();
    let mut driven = Driven {
        dropped: vec![0; states.len()],
        ..Driven::default()
    };
    if is_interrupted() {
        driven.interrupted = true;
        return Ok(driven);
    }
    let interrupt = interrupted();
    tokio::pin!(interrupt);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + TICK, TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let now = Instant::now();
        for (endpoint, state) in states.iter_mut().enumerate() {
            while let Some((job, worker, waited)) = state.start(now) {
                let slot = Slot {
                    endpoint,
                    worker,
                    waited,
                };
                in_flight.push(send(job, slot).map(move |r| (endpoint, worker, r)));
            }
        }
        if states.iter().all(State::finished) {
            break;
        }
        let wake = states.iter().filter_map(|s| s.wake(now)).min();
        let sleep = async {
            match wake {
                Some(t) => tokio::time::sleep_until(t.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            Some((endpoint, worker, outcome)) = in_flight.next() => {
                arrived(&mut states[endpoint], worker);
                driven.delivered += 1;
                if let Some(retry) = sink.take(outcome)? {
                    states[endpoint].retries.push_back(retry);
                }
            }
            _ = sleep => {}
            _ = ticker.tick() => sink.tick(),
            _ = &mut interrupt => {
                driven.interrupted = true;
                // What has already come back is kept; the rest is abandoned.
                while let Some(Some((endpoint, worker, outcome))) = in_flight.next().now_or_never() {
                    arrived(&mut states[endpoint], worker);
                    driven.delivered += 1;
                    sink.take(outcome)?;
                }
                break;
            }
        }
    }
    driven.dropped = states.iter().map(|s| s.dropped).collect();
    Ok(driven)
}

fn arrived<J>(state: &mut State<'_, J>, worker: usize) {
    state.in_flight -= 1;
    state.free.push(worker);
}

#[cfg(test)]
mod tests;
