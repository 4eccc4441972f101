//! One round of a fleet's checks (`coherence watch --all`), run side by side within bounds: at
//! most one check per endpoint at a time, and the requests the running checks may have in
//! flight never more than a total. Each check runs on a thread of its own; its outcome is handed
//! back on the calling thread as it arrives, so the history has one writer.

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc;

/// What one check of the round asks of the bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// The endpoint it sends to (its base URL): two checks of one endpoint never overlap.
    pub endpoint: String,
    /// The requests it may have in flight (its concurrency), counted against the total.
    pub requests: usize,
}

/// Run `work(i)` for every slot `i`, starting each as soon as its endpoint is free and the
/// total allows its requests (a slot asking for more than `total` runs with `total`, alone),
/// in slot order where several could start. `done(i, outcome)` is called on this thread as each
/// ends. A panic in `work` is raised again here once the running checks have ended.
pub fn run_round<T: Send>(
    slots: &[Slot],
    total: usize,
    work: impl Fn(usize) -> T + Sync,
    mut done: impl FnMut(usize, T),
) {
    let total = total.max(1);
    let (tx, rx) = mpsc::channel();
    let mut panicked = None;
    std::thread::scope(|scope| {
        let mut pending: VecDeque<usize> = (0..slots.len()).collect();
        let mut free = total;
        let mut busy: Vec<&str> = Vec::new();
        let mut running = 0;
        loop {
            let mut k = 0;
            while k < pending.len() {
                let i = pending[k];
                let need = slots[i].requests.clamp(1, total);
                if need > free || busy.contains(&slots[i].endpoint.as_str()) {
                    k += 1;
                    continue;
                }
                pending.remove(k);
                free -= need;
                busy.push(&slots[i].endpoint);
                running += 1;
                let (tx, work) = (tx.clone(), &work);
                scope.spawn(move || {
                    let outcome = catch_unwind(AssertUnwindSafe(|| work(i)));
                    let _ = tx.send((i, outcome));
                });
            }
            if running == 0 {
                break;
            }
            let Ok((i, outcome)) = rx.recv() else { break };
            running -= 1;
            free += slots[i].requests.clamp(1, total);
            busy.retain(|e| *e != slots[i].endpoint);
            match outcome {
                Ok(out) => done(i, out),
                Err(p) => {
                    panicked.get_or_insert(p);
                }
            }
        }
    });
    if let Some(p) = panicked {
        resume_unwind(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::time::Duration;

    fn slot(endpoint: &str, requests: usize) -> Slot {
        Slot {
            endpoint: endpoint.into(),
            requests,
        }
    }

    /// Runs `slots` under `total`, each check holding its requests for a while; the most
    /// requests ever in flight, the endpoints seen overlapping, and the order outcomes came in.
    fn measure(slots: &[Slot], total: usize) -> (usize, bool, Vec<usize>) {
        let in_flight = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let running: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let overlap = AtomicUsize::new(0);
        let mut order = Vec::new();
        run_round(
            slots,
            total,
            |i| {
                let need = slots[i].requests.clamp(1, total);
                let now = in_flight.fetch_add(need, Ordering::SeqCst) + need;
                peak.fetch_max(now, Ordering::SeqCst);
                {
                    let mut r = running.lock().unwrap();
                    if r.contains(&slots[i].endpoint) {
                        overlap.fetch_add(1, Ordering::SeqCst);
                    }
                    r.push(slots[i].endpoint.clone());
                }
                std::thread::sleep(Duration::from_millis(20));
                {
                    let mut r = running.lock().unwrap();
                    let at = r.iter().position(|e| *e == slots[i].endpoint).unwrap();
                    r.remove(at);
                }
                in_flight.fetch_sub(need, Ordering::SeqCst);
                i * 10
            },
            |i, out| {
                assert_eq!(out, i * 10);
                order.push(i);
            },
        );
        (
            peak.load(Ordering::SeqCst),
            overlap.load(Ordering::SeqCst) > 0,
            order,
        )
    }

    #[test]
    fn checks_run_side_by_side_within_the_total_and_one_per_endpoint() {
        let slots = [
            slot("a", 2),
            slot("b", 2),
            slot("c", 2),
            slot("a", 2),
            slot("d", 4),
        ];
        let (peak, overlap, mut order) = measure(&slots, 4);
        assert!(peak <= 4, "{peak} requests in flight over a total of 4");
        assert_eq!(peak, 4, "two checks of 2 ran side by side");
        assert!(!overlap, "two checks of endpoint a overlapped");
        order.sort();
        assert_eq!(order, vec![0, 1, 2, 3, 4], "every check ran once");
    }

    #[test]
    fn a_check_asking_more_than_the_total_runs_alone_with_the_total() {
        let (peak, _, order) = measure(&[slot("a", 8), slot("b", 1)], 3);
        assert_eq!(peak, 3);
        assert_eq!(order.len(), 2);
        let (peak, _, order) = measure(&[slot("a", 1), slot("b", 1), slot("c", 1)], 1);
        assert_eq!(
            (peak, order),
            (1, vec![0, 1, 2]),
            "a total of 1 runs in order"
        );
    }

    #[test]
    fn a_panicking_check_is_raised_after_the_others_end() {
        let finished = AtomicUsize::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            run_round(
                &[slot("a", 1), slot("b", 1), slot("c", 1)],
                2,
                |i| {
                    if i == 0 {
                        panic!("check 0 failed");
                    }
                    std::thread::sleep(Duration::from_millis(10));
                },
                |_, ()| {
                    finished.fetch_add(1, Ordering::SeqCst);
                },
            )
        }));
        assert!(caught.is_err());
        assert_eq!(finished.load(Ordering::SeqCst), 2);
    }
}
