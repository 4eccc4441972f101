//! The bounds of the duration and rate flags, checked when the flag is parsed: a value past them
//! is a usage error that names the flag (clap adds it) and the range allowed, never a panic in
//! the arithmetic of a schedule (`watch --every 300000y`) or a pacer (`--max-rps 1e-300`).

use std::time::Duration;

/// `--timeout`: seconds per request attempt, at most a day.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// `--backoff-ms`: the first backoff, at most the 30 s every backoff is capped at.
pub const MAX_BACKOFF_MS: u64 = 30_000;

/// `--max-rps`: at least one request every 1,000 s, at most the engine's arrival-rate cap.
pub const MIN_RPS: f64 = 0.001;

/// `watch --every`: from 100 ms (checks back to back: a check takes longer) to a year between
/// the starts of checks; 0 is refused as a slip.
const EVERY: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(31_557_600));

/// `soak --duration`: from a second to 30 days of traffic.
const SOAK: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(30 * 86_400));

/// `contract --deadline`: from a second to a day for every probe of an endpoint.
const DEADLINE: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(86_400));

/// A humantime duration (`40m`, `90s`, `1h30m`, `1500ms`) or a bare number of seconds, from
/// `min` to `max`; the error says the range.
fn duration_within(raw: &str, (min, max): (Duration, Duration)) -> Result<Duration, String> {
    let raw = raw.trim();
    let range = || {
        format!(
            "give a duration from {} to {}, e.g. 30m or 90s",
            humantime::format_duration(min),
            humantime::format_duration(max)
        )
    };
    let parsed = match raw.parse::<f64>() {
        Ok(secs) => Duration::try_from_secs_f64(secs).map_err(|e| e.to_string()),
        Err(_) => humantime::parse_duration(raw).map_err(|e| e.to_string()),
    };
    match parsed {
        Ok(d) if (min..=max).contains(&d) => Ok(d),
        Ok(_) => Err(format!("`{raw}` is out of range: {}", range())),
        Err(e) => Err(format!("`{raw}` is not a duration ({e}): {}", range())),
    }
}

/// `watch --every`.
pub fn every(raw: &str) -> Result<Duration, String> {
    duration_within(raw, EVERY)
}

/// `soak --duration`.
pub fn soak_duration(raw: &str) -> Result<Duration, String> {
    duration_within(raw, SOAK)
}

/// `contract --deadline`.
pub fn deadline(raw: &str) -> Result<Duration, String> {
    duration_within(raw, DEADLINE)
}

/// `--max-rps`: requests per second from [`MIN_RPS`] to the engine's cap.
pub fn requests_per_second(raw: &str) -> Result<f64, String> {
    let max = crate::engine::MAX_RATE;
    match raw.trim().parse::<f64>() {
        Ok(v) if (MIN_RPS..=max).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{raw}` is not a rate allowed: give requests per second from {MIN_RPS} to {max}, \
             e.g. 2 or 0.5"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_humantime_units_or_bare_seconds() {
        assert_eq!(soak_duration("40m"), Ok(Duration::from_secs(2400)));
        assert_eq!(soak_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(soak_duration("3s"), Ok(Duration::from_secs(3)));
        assert_eq!(soak_duration("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(soak_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(soak_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(every("1y"), Ok(Duration::from_secs(31_557_600)));
        assert!(soak_duration("5 parsecs").is_err());
        assert!(soak_duration("-3").is_err());
    }

    #[test]
    fn a_duration_or_a_rate_past_its_bounds_is_refused_saying_the_range() {
        for (raw, parse) in [
            ("300000y", every as fn(&str) -> Result<Duration, String>),
            ("0", every),
            ("0s", soak_duration),
            ("1e30", soak_duration),
            ("500ms", deadline),
            ("0s", every),
            ("99999999999999999999y", every),
        ] {
            let e = parse(raw).unwrap_err();
            assert!(e.contains("give a duration from 1"), "{raw}: {e}");
        }
        for raw in ["1e-9", "0", "-1", "NaN", "inf", "1e300", "fast"] {
            let e = requests_per_second(raw).unwrap_err();
            assert!(e.contains("from 0.001 to 1000"), "{raw}: {e}");
        }
        assert_eq!(requests_per_second("0.5"), Ok(0.5));
    }
}
