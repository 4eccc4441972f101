//! Retry policy: exponential backoff with jitter, `Retry-After` parsing (each wait capped at
//! 60 s), and the per-request deadline that every wait counts against.

use std::time::{Duration, SystemTime};

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// The first backoff; each later one doubles, capped at `max_backoff`.
    pub base_backoff: Duration,
    pub max_backoff: Duration,
    /// The longest `Retry-After` that is honoured as given; longer ones are capped to this.
    pub max_retry_after: Duration,
}

/// The longest wait a server's `Retry-After` can impose before one retry
/// (`docs/src/comparing.md`, `--retries`).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Why a failed attempt is not retried although retries are left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PastDeadline {
    /// The wait the retry would have needed.
    pub wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 3,
            base_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: MAX_RETRY_AFTER,
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): the server's `Retry-After` when given,
    /// else half the exponential step plus a random half ("equal jitter").
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let step = self
            .base_backoff
            .saturating_mul(1u32.checked_shl(retry.min(20)).unwrap_or(u32::MAX))
            .min(self.max_backoff);
        let half = step / 2;
        half + half.mul_f64(fastrand::f64())
    }

    /// The wait before retry number `retry`, if it fits in `left` (what remains of the request's
    /// deadline): a server that asks for more time than the request has left is not waited for.
    pub fn wait_within(
        &self,
        retry: u32,
        retry_after: Option<Duration>,
        left: Duration,
    ) -> Result<Duration, PastDeadline> {
        let wait = self.delay(retry, retry_after);
        if wait <= left {
            Ok(wait)
        } else {
            Err(PastDeadline { wait })
        }
    }
}

/// `Retry-After` as delta-seconds or an HTTP date.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        // try_: a huge or negative value is no wait at all, never a panic.
        return Duration::try_from_secs_f64(secs).ok();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            retries: 5,
            base_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(400),
            max_retry_after: Duration::from_secs(2),
        };
        for _ in 0..50 {
            let d0 = p.delay(0, None);
            assert!(d0 >= Duration::from_millis(50) && d0 <= Duration::from_millis(100));
            let d3 = p.delay(3, None);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400));
        }
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(1))),
            Duration::from_secs(1)
        );
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(60))),
            Duration::from_secs(2)
        );
    }

    #[test]
    fn a_long_retry_after_is_capped_at_a_minute_and_must_fit_the_deadline() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(300))),
            Duration::from_secs(60)
        );
        let minute = Some(Duration::from_secs(60));
        assert_eq!(
            p.wait_within(0, minute, Duration::from_secs(61)),
            Ok(Duration::from_secs(60))
        );
        assert_eq!(
            p.wait_within(0, minute, Duration::from_secs(5)),
            Err(PastDeadline {
                wait: Duration::from_secs(60)
            })
        );
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(parse_retry_after(&later, now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("1e300", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }
}
