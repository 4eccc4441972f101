//! Dates and weekdays: given the weekday of one date, the weekday of another date weeks or
//! months away (across month ends and leap days).

use chrono::{Datelike, Days, NaiveDate, Weekday};
use fastrand::Rng;

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
    let year = rng.i32(1950..2080);
    let day_of_year = rng.u64(0..365);
    let first = NaiveDate::from_ymd_opt(year, 1, 1)
        .and_then(|d| d.checked_add_days(Days::new(day_of_year)))
        .unwrap_or_default();
    let later = rng.u64(9..800);
    let second = first.checked_add_days(Days::new(later)).unwrap_or_default();
    let answer = name(second.weekday());
    let wrong = name(second.weekday().succ());
    Item {
        question: format!(
            "{} was a {}. What day of the week was {}? Answer with the name of the day.",
            written(first),
            name(first.weekday()),
            written(second)
        ),
        reference: format!(
            "{} is {later} days later, which is {} weeks and {} days, so it was a {answer}.",
            written(second),
            later / 7,
            later % 7
        ),
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
