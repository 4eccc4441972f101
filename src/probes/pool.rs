//! Keeps K filler requests in flight on one endpoint: an endless lane of fillers on the request
//! engine, K at a time, until the pool is stopped; stopping lets the fillers in flight finish so
//! the next phase starts on a quiet server.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;

use super::fillers::{chat_body, filler_text};
use super::Target;
use crate::engine::{drive, Keep, Lane};
use crate::run::Sampling;

/// How long to wait, once every filler has been sent, before the first probe: long enough for
/// the requests to reach the server and join its batch.
const SETTLE: Duration = Duration::from_millis(300);
/// Pause after a failed filler, so that an endpoint rejecting fillers is not hammered.
const FAILURE_PAUSE: Duration = Duration::from_millis(200);

#[derive(Default)]
struct Counters {
    in_flight: AtomicUsize,
    sent: AtomicUsize,
    failed: AtomicUsize,
    stop: AtomicBool,
}

/// What the fillers of one load level did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FillerStats {
    pub sent: usize,
    pub failed: usize,
}

pub struct FillerPool {
    size: usize,
    counters: Arc<Counters>,
    /// The engine driving the fillers (dropping the pool aborts it).
    task: JoinSet<()>,
}

impl FillerPool {
    /// Start `size` fillers in flight against `target`.
    pub fn start(target: &Target, size: usize, sampling: &Sampling, max_tokens: u32) -> Self {
        let counters = Arc::new(Counters::default());
        let (target, sampling) = (target.clone(), sampling.clone());
        let fillers = {
            let counters = counters.clone();
            (0..).take_while(move |_| !counters.stop.load(Ordering::SeqCst))
        };
        let c = counters.clone();
        let mut task = JoinSet::new();
        task.spawn(async move {
            let send = |n: usize, _| {
                let (target, sampling, counters) = (&target, &sampling, &c);
                async move {
                    let body = chat_body(target, &filler_text(n), max_tokens, sampling);
                    counters.in_flight.fetch_add(1, Ordering::SeqCst);
                    let ex = target.client.complete("chat/completions", &body).await;
                    counters.in_flight.fetch_sub(1, Ordering::SeqCst);
                    counters.sent.fetch_add(1, Ordering::SeqCst);
                    if ex.failure.is_some() {
                        counters.failed.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(FAILURE_PAUSE).await;
                    }
                }
            };
            let _ = drive(vec![Lane::new(fillers, size)], send, &mut Keep(|()| Ok(()))).await;
        });
        FillerPool {
            size,
            counters,
            task,
        }
    }

    /// Fillers sent and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.counters.in_flight.load(Ordering::SeqCst)
    }

    /// Wait until every worker has a filler in flight, then a little longer (bounded: a worker
    /// whose fillers fail fast may never be seen in flight).
    pub async fn settle(&self) {
        for _ in 0..100 {
            if self.in_flight() >= self.size {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(SETTLE).await;
    }

    /// Send no more fillers and wait for those in flight to come back.
    pub async fn stop(mut self) -> FillerStats {
        self.counters.stop.store(true, Ordering::SeqCst);
        while self.task.join_next().await.is_some() {}
        FillerStats {
            sent: self.counters.sent.load(Ordering::SeqCst),
            failed: self.counters.failed.load(Ordering::SeqCst),
        }
    }
}
