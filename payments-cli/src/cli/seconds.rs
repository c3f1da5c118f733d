//! `--timeout`, `--wait-timeout`, `--poll-interval` and the config's
//! `timeout`: a positive number of seconds, with an optional fraction.

use std::time::Duration;

/// The most seconds: a year.
const MAX_SECONDS: u64 = 24 * 60 * 60 * 365;

/// Parses a positive number of seconds, with an optional fraction (`0.5`),
/// to the nanosecond (`0.0000000001` is below it: said so, not "more than
/// 0"). `-1` and `-0` are numbers, but not more than 0 seconds.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    if !looks_like_seconds(text) {
        return Err("not a number of seconds, e.g. 30 or 0.5".to_owned());
    }
    let Some((whole, fraction)) = unsigned(text) else {
        return Err("must be more than 0 seconds".to_owned());
    };
    let secs: u64 = if whole.is_empty() {
        0
    } else {
        whole
            .parse()
            .map_err(|_| "too many seconds: at most a year".to_owned())?
    };
    let nanos = fraction
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(9)
        .fold(0u32, |acc, b| acc * 10 + u32::from(b - b'0'));
    let duration = Duration::new(secs, nanos);
    if duration.is_zero() {
        return Err(if fraction.bytes().any(|b| b != b'0') {
            "must be at least 0.000000001 seconds".to_owned()
        } else {
            "must be more than 0 seconds".to_owned()
        });
    }
    if secs > MAX_SECONDS {
        return Err("too many seconds: at most a year".to_owned());
    }
    Ok(duration)
}

/// Whether `text` is written as a number of seconds: digits with an
/// optional fraction (`30`, `0.5`, `.5`), a `-` before them allowed (a
/// number, if not a usable one).
pub fn looks_like_seconds(text: &str) -> bool {
    unsigned(text.strip_prefix('-').unwrap_or(text)).is_some()
}

/// The whole and fractional digits of an unsigned number (`30`, `0.5`,
/// `.5`, `5.`), or `None`.
fn unsigned(text: &str) -> Option<(&str, &str)> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (!(whole.is_empty() && fraction.is_empty()) && digits_only(whole) && digits_only(fraction))
        .then_some((whole, fraction))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_accept_fractions_and_reject_junk() {
        assert_eq!(parse_seconds("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_seconds("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_seconds(".5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_seconds("0.000000001"), Ok(Duration::from_nanos(1)));
        for bad in [
            "",
            ".",
            "0",
            "-1",
            "1e3",
            "abc",
            "1.2.3",
            "99999999999999999999",
        ] {
            assert!(parse_seconds(bad).is_err(), "{bad:?} accepted");
        }
        // A negative number is a number: said so, not "not a number"; -0
        // as well.
        for negative in ["-1", "-0.5", "-0", "-0.0", "-.0", "0", "0.000"] {
            assert_eq!(
                parse_seconds(negative),
                Err("must be more than 0 seconds".to_owned()),
                "{negative}"
            );
        }
        // More than 0, but less than the nanosecond the timeout is kept in.
        assert_eq!(
            parse_seconds("0.0000000001"),
            Err("must be at least 0.000000001 seconds".to_owned())
        );
        for junk in ["-x", "--1", "-", "-.", "1e-10", " 1"] {
            assert_eq!(
                parse_seconds(junk),
                Err("not a number of seconds, e.g. 30 or 0.5".to_owned()),
                "{junk}"
            );
        }
    }
}
