//! Dates and weekdays: given the weekday of one date, the weekday of another date weeks or
//! months away (across month ends and leap days).

use chrono::{Datelike, Days, NaiveDate, Weekday};
use fastrand::Rng;

use super::levels::by_level;
use super::{one_of, Item};

const WEEKDAYS: [Weekday; 7] = [
    Weekday::Mon,
    Weekday::Tue,
    Weekday::Wed,
    Weekday::Thu,
    Weekday::Fri,
    Weekday::Sat,
    Weekday::Sun,
];

pub(super) fn make(rng: &mut Rng) -> Item {
    dated(rng, (1950, 2080), (9, 800))
}

/// At `level`: the day after a named day (level 1: "the day after Monday"), two to six days on,
/// one to three weeks on; then dates a month, two years (version 2's), ten and a hundred years
/// apart, and centuries apart (level 8: up to 550 years, from 1600 to 2400).
pub(super) fn at(rng: &mut Rng, level: u8) -> Item {
    let later = match level {
        ..=1 => 1,
        2 => rng.u64(2..7),
        3 => rng.u64(8..22),
        _ => {
            let (years, days) = by_level(
                level,
                [
                    ((0, 0), (0, 0)),
                    ((0, 0), (0, 0)),
                    ((0, 0), (0, 0)),
                    ((1950, 2080), (9, 40)),
                    ((1950, 2080), (9, 800)),
                    ((1900, 2100), (800, 4_000)),
                    ((1800, 2200), (4_000, 40_000)),
                    ((1600, 2000), (40_000, 200_000)),
                ],
            );
            return dated(rng, years, days);
        }
    };
    let first = *super::pick(rng, &WEEKDAYS);
    let second = (0..later).fold(first, |d, _| d.succ());
    let asked = if later == 1 {
        format!("What is the day after {}?", name(first))
    } else {
        format!(
            "Today is {}. What day of the week is it in {later} days?",
            name(first)
        )
    };
    answered(
        format!("{asked} Answer with the name of the day."),
        format!("Counting {later} days on, it is"),
        second,
    )
}

/// A date in `years` and the weekday of one `days` later.
fn dated(rng: &mut Rng, years: (i32, i32), days: (u64, u64)) -> Item {
    let year = rng.i32(years.0..years.1);
    let day_of_year = rng.u64(0..365);
    let first = NaiveDate::from_ymd_opt(year, 1, 1)
        .and_then(|d| d.checked_add_days(Days::new(day_of_year)))
        .unwrap_or_default();
    let later = rng.u64(days.0..days.1);
    let second = first.checked_add_days(Days::new(later)).unwrap_or_default();
    answered(
        format!(
            "{} was a {}. What day of the week was {}? Answer with the name of the day.",
            written(first),
            name(first.weekday()),
            written(second)
        ),
        format!(
            "{} is {later} days later, which is {} weeks and {} days, so it was a",
            written(second),
            later / 7,
            later % 7
        ),
        second.weekday(),
    )
}

/// The question, its reference (`worked`, then the day) and the weekday it expects.
fn answered(question: String, worked: String, day: Weekday) -> Item {
    let answer = name(day);
    let wrong = name(day.succ());
    Item {
        question,
        reference: format!("{worked} {answer}."),
        wrong: format!("It was a {wrong}."),
        score: one_of(
            answer,
            WEEKDAYS
                .iter()
                .map(|&d| name(d))
                .filter(|d| *d != answer)
                .map(String::from)
                .collect(),
        ),
    }
}

fn written(date: NaiveDate) -> String {
    date.format("%B %-d, %Y").to_string()
}

fn name(day: Weekday) -> &'static str {
    match day {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}
