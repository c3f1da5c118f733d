//! The interface's timestamps (`createdAt`, `confirmedAt`: "string (ISO
//! 8601, UTC)"), read once for every tool: the client decodes them with
//! [`parse`], the contract proxy judges them with [`parse_iso8601`], so
//! whatever the proxy passes the client reads, and what the client refuses
//! the proxy flags.
//!
//! What is read (ISO 8601-1 date and time of day, and CONTRACT section 11):
//!
//! - a calendar (`2026-11-22`), ordinal (`2026-326`) or week date
//!   (`2026-W47-7`), extended or basic format (`20261122`, `2026326`,
//!   `2026W477`), a four-digit year;
//! - `T`, then hours, minutes and seconds (`08:15:30`, basic `081530`), or
//!   reduced to minutes (`08:15`) or hours (`08`); a time in basic format
//!   after a date in basic format, extended after extended;
//! - a decimal fraction of the last of them, after `.` or `,`, of any
//!   length: kept to the nanosecond, truncated (digits past the twentieth
//!   are not read; of seconds, those past the ninth change nothing);
//! - `Z`, an offset `±hh`, `±hh:mm` or `±hhmm` (`±hhmm` also after an
//!   extended date, as services send it) from −23:59 to +23:59 (RFC 3339's
//!   and chrono's range: `+24:00` is refused), converted to UTC; or no
//!   offset at all, taken as UTC (CONTRACT section 11);
//! - `24:00:00` (also `24:00`, `24`, with a fraction of zeros only) as the
//!   next day's `00:00:00`, as ISO 8601 has it; `:60` as a leap second, at
//!   the end of any minute (as chrono reads it).
//!
//! After the conversion to UTC the year must be 0000–9999: an instant
//! outside them cannot be written as the interface's UTC timestamp
//! (`9999-12-31T23:59:59-01:00` is refused, like `10000-01-01T00:00:00Z`).
//!
//! [`parse`] (what a client reads) also takes what is not ISO 8601 but
//! RFC 3339 allows or services send: `t` and `z` in lower case, a space
//! instead of `T`, white space around, and U+2212 for the offset's minus.
//! [`parse_iso8601`] refuses these: everything it accepts, [`parse`] reads
//! as the same instant.
//!
//! # Examples
//!
//! ```
//! use payments_interface::timestamp::{self, Error};
//!
//! let utc = timestamp::parse_iso8601("2026-11-22T08:15:30,5-05").expect("ISO 8601");
//! assert_eq!(utc.to_string(), "2026-11-22T13:15:30.500Z");
//! assert_eq!(utc.offset_minutes(), Some(-300));
//! let read = timestamp::parse("2026-11-22 13:15:30.5z").expect("what a client reads");
//! assert_eq!(read.to_string(), utc.to_string());
//! assert!(timestamp::parse_iso8601("2026-11-22 13:15:30.5z").is_err());
//! assert_eq!(timestamp::parse("9999-12-31T23:59:59-01:00"), Err(Error::Year));
//! ```

use std::fmt;

mod examples;
mod scan;
#[cfg(test)]
mod tests;

pub use examples::{EXAMPLES, Example};

/// An instant of an interface timestamp, in UTC, to the nanosecond, and
/// the offset it was written with (two are equal when both are: compare
/// [`Timestamp::unix_seconds`] and the rest for the instant alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp {
    year: u16,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    /// 0–60: 60 is a leap second.
    second: u8,
    nanosecond: u32,
    /// The offset as written, in minutes east of UTC; `None`: none was
    /// written (the time is taken as UTC).
    offset: Option<i16>,
}

impl Timestamp {
    /// The year in UTC, 0–9999.
    pub fn year(&self) -> u16 {
        self.year
    }
    /// The month in UTC, 1–12.
    pub fn month(&self) -> u8 {
        self.month
    }
    /// The day of the month in UTC, 1–31.
    pub fn day(&self) -> u8 {
        self.day
    }
    /// The hour in UTC, 0–23.
    pub fn hour(&self) -> u8 {
        self.hour
    }
    /// The minute in UTC, 0–59.
    pub fn minute(&self) -> u8 {
        self.minute
    }
    /// The second, 0–60 (60: a leap second).
    pub fn second(&self) -> u8 {
        self.second
    }
    /// The fraction of the second in nanoseconds, 0–999,999,999.
    pub fn nanosecond(&self) -> u32 {
        self.nanosecond
    }
    /// The offset the text was written with, in minutes east of UTC
    /// (`Z`: 0); `None` when it had none and was taken as UTC.
    pub fn offset_minutes(&self) -> Option<i16> {
        self.offset
    }
    /// Whether the second is a leap second (`:60`).
    pub fn is_leap_second(&self) -> bool {
        self.second == 60
    }
    /// Whole seconds since 1970-01-01T00:00:00Z (a leap second counts as
    /// the second before it, as in Unix time).
    pub fn unix_seconds(&self) -> i64 {
        let days = days_from_civil(i64::from(self.year), self.month, self.day);
        let second = i64::from(self.second.min(59));
        days * 86_400 + i64::from(self.hour) * 3600 + i64::from(self.minute) * 60 + second
    }
}

/// RFC 3339 in UTC with `Z`, the fraction in 0, 3, 6 or 9 digits (as
/// chrono's `SecondsFormat::AutoSi` writes it): `2026-11-22T13:15:30.500Z`.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )?;
        match self.nanosecond {
            0 => {}
            ns if ns % 1_000_000 == 0 => write!(f, ".{:03}", ns / 1_000_000)?,
            ns if ns % 1_000 == 0 => write!(f, ".{:06}", ns / 1_000)?,
            ns => write!(f, ".{ns:09}")?,
        }
        f.write_str("Z")
    }
}

/// Why a text is not a timestamp the interface can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// Not the shape of an ISO 8601 date and time.
    Syntax,
    /// No such date (`2026-02-30`, `2026-367`, `2026-W54-1`).
    Date,
    /// No such time of day (`25:00`, `08:61`, `24:00:01`).
    Time,
    /// An offset beyond ±23:59.
    Offset,
    /// In UTC, a year outside 0000–9999.
    Year,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::Syntax => "not an ISO 8601 date and time",
            Error::Date => "no such date",
            Error::Time => "no such time of day",
            Error::Offset => "the offset is beyond ±23:59",
            Error::Year => "its year in UTC is outside 0000–9999",
        })
    }
}

impl std::error::Error for Error {}

/// Reads a timestamp as a client does: ISO 8601 as [`parse_iso8601`]
/// reads it, and also `t`/`z` in lower case, a space for `T`, white space
/// around and U+2212 for the offset's minus (RFC 3339 and what services
/// send).
pub fn parse(text: &str) -> Result<Timestamp, Error> {
    scan::read(text.trim(), true)
}

/// Reads a timestamp as ISO 8601 only (the contract proxy's judgement of
/// a service's `createdAt`): see the [module](self) for what that is.
pub fn parse_iso8601(text: &str) -> Result<Timestamp, Error> {
    scan::read(text, false)
}

/// Whether `text` is an ISO 8601 timestamp the interface can carry.
pub fn is_iso8601(text: &str) -> bool {
    parse_iso8601(text).is_ok()
}

/// The date and the time of day as written, before the offset.
struct Written {
    /// Days since 1970-01-01.
    days: i64,
    /// Nanoseconds since the day's start (up to 24:00, a day's worth).
    nanos: i64,
    /// A leap second (`:60`), counted in `nanos` as the second before.
    leap: bool,
    /// Minutes east of UTC.
    offset: Option<i16>,
}

/// The UTC timestamp `written` names, or [`Error::Year`].
fn to_utc(written: Written) -> Result<Timestamp, Error> {
    const DAY: i128 = 86_400 * 1_000_000_000;
    let shift = i128::from(written.offset.unwrap_or(0)) * 60 * 1_000_000_000;
    let total = i128::from(written.days) * DAY + i128::from(written.nanos) - shift;
    let (days, in_day) = (total.div_euclid(DAY), total.rem_euclid(DAY));
    let (year, month, day) = civil_from_days(i64::try_from(days).map_err(|_| Error::Year)?);
    let year = u16::try_from(year)
        .ok()
        .filter(|y| *y <= 9999)
        .ok_or(Error::Year)?;
    let seconds = in_day / 1_000_000_000;
    let second = (seconds % 60) as u8 + u8::from(written.leap);
    Ok(Timestamp {
        year,
        month,
        day,
        hour: (seconds / 3600) as u8,
        minute: (seconds / 60 % 60) as u8,
        second,
        nanosecond: (in_day % 1_000_000_000) as u32,
        offset: written.offset,
    })
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u8) -> u8 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: u8, day: u8) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The ISO weekday of a day since 1970-01-01: Monday 1 … Sunday 7.
fn weekday(days: i64) -> i64 {
    (days + 3).rem_euclid(7) + 1
}

/// Days since 1970-01-01 of the Monday of ISO week 1 of `year`.
fn week_one(year: i64) -> i64 {
    let jan4 = days_from_civil(year, 1, 4);
    jan4 - (weekday(jan4) - 1)
}

/// ISO weeks in `year`: 52 or 53.
fn weeks_in_year(year: i64) -> u32 {
    ((week_one(year + 1) - week_one(year)) / 7) as u32
}
