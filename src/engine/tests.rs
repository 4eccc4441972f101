//! The engine's contract: bounded lanes, retries first, pacing, deadlines, sink errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Counts requests in flight and the most seen at once.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
    started: AtomicUsize,
}

impl Gauge {
    async fn hold(&self, for_ms: u64) {
        self.started.fetch_add(1, Ordering::SeqCst);
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(n, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(for_ms)).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn a_lane_never_has_more_in_flight_than_its_limit() {
    let gauge = Arc::new(Gauge::default());
    let mut got = Vec::new();
    let driven = rt()
        .block_on(drive(
            vec![Lane::new(0..10u32, 3), Lane::new(10..12u32, 3)],
            |j, _| {
                let gauge = gauge.clone();
                async move {
                    gauge.hold(20).await;
                    j
                }
            },
            &mut Keep(|j| {
                got.push(j);
                Ok(())
            }),
        ))
        .unwrap();
    assert_eq!(driven.delivered, 12);
    assert!(!driven.interrupted);
    assert_eq!(
        gauge.most.load(Ordering::SeqCst),
        5,
        "3 on the first lane, 2 on the second"
    );
    got.sort();
    assert_eq!(got, (0..12).collect::<Vec<_>>());
}

#[test]
fn an_absurd_limit_starts_only_as_many_requests_as_there_are_jobs() {
    let gauge = Arc::new(Gauge::default());
    let began = Instant::now();
    let driven = rt()
        .block_on(drive(
            vec![Lane::new([1, 2], usize::MAX)],
            |_, slot| {
                let gauge = gauge.clone();
                async move {
                    gauge.hold(1).await;
                    slot.worker
                }
            },
            &mut Keep(|w: usize| {
                assert!(w < 2, "worker {w} of a lane with two jobs");
                Ok(())
            }),
        ))
        .unwrap();
    assert_eq!(driven.delivered, 2);
    assert!(began.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_retry_is_sent_on_the_same_lane_before_its_remaining_jobs() {
    struct Retry(Vec<u32>);
    impl Sink<u32, u32> for Retry {
        fn take(&mut self, outcome: u32) -> anyhow::Result<Option<u32>> {
            self.0.push(outcome);
            Ok((outcome == 1).then_some(100))
        }
    }
    let mut sink = Retry(Vec::new());
    rt().block_on(drive(
        vec![Lane::new([1, 2, 3], 1)],
        |j, _| async move { j },
        &mut sink,
    ))
    .unwrap();
    assert_eq!(sink.0, vec![1, 100, 2, 3]);
}

#[test]
fn a_paced_job_starts_at_its_instant_and_says_when_it_waited_for_a_slot() {
    let origin = Instant::now();
    let at = |ms| origin + Duration::from_millis(ms);
    let mut seen = Vec::new();
    rt().block_on(drive(
        vec![Lane::paced([(at(30), 0u64), (at(40), 1), (at(300), 2)], 1)],
        |j, slot| async move {
            let started = origin.elapsed();
            if j == 0 {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (j, started, slot.waited)
        },
        &mut Keep(|o| {
            seen.push(o);
            Ok(())
        }),
    ))
    .unwrap();
    assert_eq!(seen.len(), 3);
    let (_, first, waited) = seen[0];
    assert!(first >= Duration::from_millis(30) && !waited);
    let (_, second, waited) = seen[1];
    assert!(
        second >= Duration::from_millis(130),
        "held until the slot freed: {second:?}"
    );
    assert!(waited);
    let (_, third, waited) = seen[2];
    assert!(third >= Duration::from_millis(300) && !waited);
}

#[test]
fn jobs_not_started_by_the_deadline_are_dropped_and_counted() {
    let origin = Instant::now();
    let jobs = (0..5u64).map(move |i| (origin + Duration::from_millis(i * 5), i));
    let mut sent = Vec::new();
    let driven = rt()
        .block_on(drive(
            vec![Lane::paced(jobs, 1).until(origin + Duration::from_millis(60))],
            |j, _| async move {
                tokio::time::sleep(Duration::from_millis(150)).await;
                j
            },
            &mut Keep(|j| {
                sent.push(j);
                Ok(())
            }),
        ))
        .unwrap();
    assert_eq!(
        sent,
        vec![0],
        "the request in flight at the deadline is awaited"
    );
    assert_eq!(driven.dropped, vec![4]);
}

#[test]
fn a_sink_error_stops_the_engine() {
    let mut taken = 0;
    let result = rt().block_on(drive(
        vec![Lane::new(0..100u32, 1)],
        |j, _| async move { j },
        &mut Keep(|j| {
            taken += 1;
            anyhow::ensure!(j < 2, "journal full");
            Ok(())
        }),
    ));
    assert!(result.unwrap_err().to_string().contains("journal full"));
    assert_eq!(taken, 3);
}

#[test]
fn the_sink_is_ticked_every_second_while_requests_run() {
    struct Ticks(usize);
    impl Sink<u32, u32> for Ticks {
        fn take(&mut self, _: u32) -> anyhow::Result<Option<u32>> {
            Ok(None)
        }
        fn tick(&mut self) {
            self.0 += 1;
        }
    }
    let mut sink = Ticks(0);
    rt().block_on(drive(
        vec![Lane::new([0u32], 1)],
        |j, _| async move {
            tokio::time::sleep(Duration::from_millis(1300)).await;
            j
        },
        &mut sink,
    ))
    .unwrap();
    assert_eq!(sink.0, 1);
}
