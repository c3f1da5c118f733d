//! The text of a timestamp, read left to right: the date, the time of
//! day, the offset; then [`super::to_utc`].

use super::{
    Error, Timestamp, Written, days_from_civil, days_in_month, is_leap_year, to_utc, week_one,
    weeks_in_year,
};

/// Fraction digits read (past them a digit changes less than 10⁻⁸ ns of
/// an hour's fraction).
const FRACTION_DIGITS: usize = 20;

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let found = self.peek() == Some(c);
        self.i += usize::from(found);
        found
    }

    /// The number of ASCII digits from here on.
    fn run(&self) -> usize {
        self.b[self.i..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    }

    /// Exactly `n` digits, as a number.
    fn number(&mut self, n: usize) -> Result<u32, Error> {
        let digits = self.b.get(self.i..self.i + n).ok_or(Error::Syntax)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return Err(Error::Syntax);
        }
        self.i += n;
        Ok(digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    }
}

/// Reads `text` (`tolerant`: also what [`super::parse`] adds to ISO 8601).
pub(super) fn read(text: &str, tolerant: bool) -> Result<Timestamp, Error> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
    };
    let (days, extended) = date(&mut s)?;
    let separator = s.peek();
    let separated = separator == Some(b'T') || (tolerant && matches!(separator, Some(b't' | b' ')));
    if !separated {
        return Err(Error::Syntax);
    }
    s.i += 1;
    let (nanos, leap) = time(&mut s, extended)?;
    let offset = offset(&mut s, extended, tolerant)?;
    if s.i != s.b.len() {
        return Err(Error::Syntax);
    }
    to_utc(Written {
        days,
        nanos,
        leap,
        offset,
    })
}

/// The date (calendar, ordinal or week) as days since 1970-01-01, and
/// whether it was in extended format.
fn date(s: &mut Scanner<'_>) -> Result<(i64, bool), Error> {
    let year = i64::from(s.number(4)?);
    let extended = s.eat(b'-');
    if s.eat(b'W') {
        let week = s.number(2)?;
        if extended && !s.eat(b'-') {
            return Err(Error::Syntax);
        }
        let day = s.number(1)?;
        if week == 0 || week > weeks_in_year(year) || !(1..=7).contains(&day) {
            return Err(Error::Date);
        }
        return Ok((
            week_one(year) + i64::from((week - 1) * 7 + day - 1),
            extended,
        ));
    }
    // Three digits: the day of the year (a month and day are four, or two
    // and two).
    if s.run() == 3 {
        let day = s.number(3)?;
        let length = if is_leap_year(year) { 366 } else { 365 };
        if day == 0 || day > length {
            return Err(Error::Date);
        }
        return Ok((days_from_civil(year, 1, 1) + i64::from(day) - 1, extended));
    }
    let month = s.number(2)?;
    if extended && !s.eat(b'-') {
        return Err(Error::Syntax);
    }
    let day = s.number(2)?;
    let month = u8::try_from(month).map_err(|_| Error::Date)?;
    let day = u8::try_from(day).map_err(|_| Error::Date)?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err(Error::Date);
    }
    Ok((days_from_civil(year, month, day), extended))
}

/// The time of day as nanoseconds since midnight (24:00 is a day's), and
/// whether it is a leap second (counted as the second before).
fn time(s: &mut Scanner<'_>, extended: bool) -> Result<(i64, bool), Error> {
    let hour = s.number(2)?;
    let mut parts = [hour, 0, 0];
    let mut len = 1;
    while len < 3 {
        let more = if extended {
            s.peek() == Some(b':') && {
                s.i += 1;
                true
            }
        } else {
            s.run() >= 2
        };
        if !more {
            break;
        }
        parts[len] = s.number(2)?;
        len += 1;
    }
    // The unit of the last component, in nanoseconds.
    let unit: u128 = [3_600_000_000_000, 60_000_000_000, 1_000_000_000][len - 1];
    let fraction = if s.eat(b'.') || s.eat(b',') {
        let n = s.run();
        if n == 0 {
            return Err(Error::Syntax);
        }
        let digits = &s.b[s.i..s.i + n.min(FRACTION_DIGITS)];
        // The digits past those read change no nanosecond, but 24:00:00
        // takes a fraction of zeros only: any other digit is past the day.
        let skipped_zeros = s.b[s.i + digits.len()..s.i + n].iter().all(|&d| d == b'0');
        if hour == 24 && !skipped_zeros {
            return Err(Error::Time);
        }
        s.i += n;
        let numerator = digits
            .iter()
            .fold(0u128, |n, d| n * 10 + u128::from(d - b'0'));
        let exponent = u32::try_from(digits.len()).unwrap_or(0);
        // < unit ≤ 3.6e12: fits an i64.
        i64::try_from(numerator * unit / 10u128.pow(exponent)).map_err(|_| Error::Syntax)?
    } else {
        0
    };
    let [_, minute, second] = parts;
    let end_of_day = hour == 24 && minute == 0 && second == 0 && fraction == 0;
    if !(end_of_day || (hour < 24 && minute < 60 && second <= 60)) {
        return Err(Error::Time);
    }
    let leap = second == 60;
    let seconds = i64::from(hour * 3600 + minute * 60 + second.min(59));
    Ok((seconds * 1_000_000_000 + fraction, leap))
}

/// `Z`, an offset in minutes east of UTC, or none (`None`).
fn offset(s: &mut Scanner<'_>, extended: bool, tolerant: bool) -> Result<Option<i16>, Error> {
    const MINUS: &[u8] = "\u{2212}".as_bytes();
    if s.eat(b'Z') || (tolerant && s.eat(b'z')) {
        return Ok(Some(0));
    }
    let negative = if s.eat(b'+') {
        false
    } else if s.eat(b'-') {
        true
    } else if tolerant && s.b[s.i..].starts_with(MINUS) {
        s.i += MINUS.len();
        true
    } else {
        return Ok(None);
    };
    let hours = s.number(2)?;
    let colon = extended && s.eat(b':');
    let minutes = if colon || s.run() > 0 {
        s.number(2)?
    } else {
        0
    };
    if hours > 23 || minutes > 59 {
        return Err(Error::Offset);
    }
    let minutes = i16::try_from(hours * 60 + minutes).map_err(|_| Error::Offset)?;
    Ok(Some(if negative { -minutes } else { minutes }))
}
