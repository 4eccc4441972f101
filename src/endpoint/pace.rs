//! `--max-rps`: the attempts made to one endpoint start at least 1/rps seconds apart, retries
//! included, however many are in flight, so a production endpoint sees a bounded request rate.
//! A ceiling, not a schedule: the engine's paced lanes (`engine::Lane::paced`) start jobs at
//! chosen instants for soak's arrivals, while retries happen inside the client, below the
//! engine, so only the client can count every attempt.

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// The next free start time of one endpoint's attempts.
#[derive(Debug)]
pub struct Pacer {
    gap: Duration,
    next: Mutex<Option<Instant>>,
}

impl Pacer {
    /// A pacer for at most `rps` attempts per second (None when `rps` is not a positive finite
    /// number: no limit).
    pub fn new(rps: f64) -> Option<Pacer> {
        (rps.is_finite() && rps > 0.0).then(|| Pacer {
            gap: Duration::from_secs_f64(1.0 / rps),
            next: Mutex::new(None),
        })
    }

    /// Wait for this attempt's turn: the first starts at once, each later one a gap after the
    /// one before it.
    pub async fn wait(&self) {
        let at = {
            let mut next = self.next.lock().await;
            let now = Instant::now();
            let at = next.map_or(now, |n| n.max(now));
            *next = Some(at + self.gap);
            at
        };
        tokio::time::sleep_until(at).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_limit_without_a_positive_rate() {
        for rps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(Pacer::new(rps).is_none(), "{rps}");
        }
    }

    /// Five attempts started together with a 20 ms gap: each starts at least a gap after the
    /// one before (load can only make the gaps longer).
    #[tokio::test]
    async fn attempts_in_flight_together_start_a_gap_apart() {
        let pacer = std::sync::Arc::new(Pacer::new(50.0).unwrap());
        let start = Instant::now();
        let tasks: Vec<_> = (0..5)
            .map(|_| {
                let p = pacer.clone();
                tokio::spawn(async move {
                    p.wait().await;
                    Instant::now()
                })
            })
            .collect();
        let mut starts = Vec::new();
        for t in tasks {
            starts.push(t.await.unwrap() - start);
        }
        starts.sort();
        for (i, s) in starts.iter().enumerate() {
            assert!(
                *s >= Duration::from_millis(20 * i as u64),
                "attempt {i} started at {s:?}: {starts:?}"
            );
        }
    }
}
