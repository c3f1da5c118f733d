//! The virtual clock: real time plus an offset that tests move forward.
//!
//! Every timestamp the server shows or compares comes from here, so advancing
//! the clock moves expiry and settlement (CONTRACT sections 6 and 10) without
//! anyone sleeping. How far an advance may go is here too
//! ([`advance_seconds`]): the admin API and the console read it the same
//! way.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::domain::invalid::Invalid;
use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use serde_json::{Map, Value};

/// Real time plus an offset in nanoseconds.
#[derive(Debug, Default)]
pub struct Clock {
    /// Offset in nanoseconds. An atomic rather than a lock: reads happen on
    /// every request and the value is one independent number.
    offset_nanos: AtomicI64,
}

impl Clock {
    /// A clock showing real time.
    pub fn new() -> Self {
        Self::default()
    }

    /// Virtual now, truncated to milliseconds (the precision timestamps are
    /// shown with, so what is stored equals what is shown).
    pub fn now(&self) -> DateTime<Utc> {
        let offset = self.offset_nanos.load(Ordering::SeqCst);
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(real) => shifted(real, offset),
            // A system clock before 1970: chrono's arithmetic handles it.
            Err(_) => chrono_shifted(Utc::now(), offset),
        }
    }

    /// Moves the clock forward by `by` (saturating at about 292 years).
    pub fn advance(&self, by: Duration) {
        let add = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX);
        let _ = self
            .offset_nanos
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| {
                Some(old.saturating_add(add))
            });
    }

    /// Moves the clock forward by `by` if it has room for all of it, in
    /// one atomic step (of racing advances that only one fits, one moves
    /// it); otherwise moves nothing. The new offset, or [`NoRoom`] with
    /// the offset it met.
    pub fn try_advance(&self, by: Duration) -> Result<i64, NoRoom> {
        self.offset_nanos
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| advanced(old, by))
            .map(|old| advanced(old, by).unwrap_or(i64::MAX))
            .map_err(|offset_nanos| NoRoom { offset_nanos })
    }

    /// Back to real time.
    pub fn reset(&self) {
        self.offset_nanos.store(0, Ordering::SeqCst);
    }

    /// The offset from real time in nanoseconds.
    pub fn offset_nanos(&self) -> i64 {
        self.offset_nanos.load(Ordering::SeqCst)
    }

    /// Sets the offset (a store read it back, or another replica moved it).
    pub fn set_offset_nanos(&self, offset: i64) {
        self.offset_nanos.store(offset, Ordering::SeqCst);
    }

    /// Virtual now for an offset kept elsewhere (a database): real time
    /// plus `offset_nanos`, truncated to milliseconds like [`Clock::now`].
    pub fn at_offset(offset_nanos: i64) -> DateTime<Utc> {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(real) => shifted(real, offset_nanos),
            Err(_) => chrono_shifted(Utc::now(), offset_nanos),
        }
    }
}

/// The longest time a setting on the virtual clock may span (`--expiry`,
/// a product's `settle_after` and `payer_timeout`): 100 years of 365.25
/// days, as `100y` reads (the clock itself ends about 292 years on).
pub const MAX_SETTING: Duration = Duration::from_secs(100 * 31_557_600);

/// What is wrong with `d` as a setting on the virtual clock, if anything:
/// it must be whole milliseconds (times are kept and shown to the
/// millisecond: a finer one is shown a millisecond off the instant it
/// acts at) and at most [`MAX_SETTING`] (past it, times stop at the end of
/// the calendar).
pub fn setting_problem(d: Duration) -> Option<&'static str> {
    if !d.subsec_nanos().is_multiple_of(1_000_000) {
        Some("must be a whole number of milliseconds, e.g. 1500ms")
    } else if d > MAX_SETTING {
        Some("must be at most 100 years")
    } else {
        None
    }
}

/// RFC 3339, UTC, `Z`, milliseconds: `2026-11-22T08:15:30.123Z`.
pub fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `real` (time since the epoch) plus `offset_nanos`, truncated to
/// milliseconds, on integers: [`chrono_shifted`] at a fifth of the cost
/// (it runs twice per request). On `i64` while the sum fits (until 2262):
/// a division by a constant is then a multiplication, where `i128`'s is a
/// call of about a hundred instructions.
fn shifted(real: Duration, offset_nanos: i64) -> DateTime<Utc> {
    let millis = match i64::try_from(real.as_nanos())
        .ok()
        .and_then(|nanos| nanos.checked_add(offset_nanos))
    {
        Some(nanos) => Some(nanos.div_euclid(1_000_000)),
        None => {
            let nanos = i128::try_from(real.as_nanos())
                .unwrap_or(i128::MAX)
                .saturating_add(i128::from(offset_nanos));
            i64::try_from(nanos.div_euclid(1_000_000)).ok()
        }
    };
    millis
        .and_then(DateTime::from_timestamp_millis)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// `real` plus `offset_nanos`, truncated to milliseconds, saturating.
fn chrono_shifted(real: DateTime<Utc>, offset_nanos: i64) -> DateTime<Utc> {
    let now = real
        .checked_add_signed(TimeDelta::nanoseconds(offset_nanos))
        .unwrap_or(DateTime::<Utc>::MAX_UTC);
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}

/// Adds a std duration to a time, saturating.
pub(crate) fn add(t: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    TimeDelta::from_std(d)
        .ok()
        .and_then(|d| t.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// Whole nanoseconds of a non-negative JSON number's text (`1.5`, `2e3`,
/// `0.000000001`), exact: digits past the nanosecond are cut, never
/// rounded through `f64`. `None` for a negative non-zero number; values
/// past `u128` saturate.
fn nanos_of(text: &str) -> Option<u128> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.split_once(['e', 'E']) {
        Some((m, e)) => {
            let e = e.strip_prefix('+').unwrap_or(e);
            let exponent = e.parse::<i64>().unwrap_or(if e.starts_with('-') {
                i64::MIN / 2
            } else {
                i64::MAX / 2
            });
            (m, exponent)
        }
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = format!("{int}{frac}").trim_start_matches('0').to_owned();
    if digits.is_empty() {
        return Some(0);
    }
    if negative {
        return None;
    }
    // value = digits × 10^(exponent − len(frac)); in nanoseconds, + 9.
    let frac_len = i64::try_from(frac.len()).unwrap_or(i64::MAX);
    let shift = exponent.saturating_sub(frac_len).saturating_add(9);
    let kept = if shift < 0 {
        let cut = usize::try_from(shift.unsigned_abs()).unwrap_or(usize::MAX);
        if cut >= digits.len() {
            return Some(0);
        }
        digits[..digits.len() - cut].to_owned()
    } else {
        let zeros = usize::try_from(shift).unwrap_or(usize::MAX);
        if digits.len().saturating_add(zeros) > 38 {
            return Some(u128::MAX);
        }
        format!("{digits}{}", "0".repeat(zeros))
    };
    Some(kept.parse::<u128>().unwrap_or(u128::MAX))
}

/// Seconds from the `{"seconds": N}` body: a JSON number from 0 to
/// [`crate::domain::rules::MAX_ADVANCE_SECONDS`], any precision (cut at the nanosecond).
pub fn advance_seconds(body: &Map<String, Value>) -> Result<Duration, Invalid> {
    let number = match body.get("seconds") {
        None | Some(Value::Null) => return Err(Invalid::rules("seconds is required")),
        Some(Value::Number(n)) => n,
        Some(_) => return Err(Invalid::rules("seconds must be a number")),
    };
    let max = crate::domain::rules::MAX_ADVANCE_SECONDS;
    let nanos = nanos_of(&number.to_string())
        .ok_or_else(|| Invalid::rules("seconds must be greater than or equal to 0"))?;
    if nanos > u128::from(max) * 1_000_000_000 {
        return Err(Invalid::rules(format!("seconds must be at most {max}")));
    }
    // Within u64: the bound above is far below 2^64 nanoseconds.
    let nanos = u64::try_from(nanos)
        .map_err(|_| Invalid::rules(format!("seconds must be at most {max}")))?;
    Ok(Duration::from_nanos(nanos))
}

/// The offset after moving `by` from `offset_nanos`, or `None` past the
/// clock's end (`i64::MAX` nanoseconds, about 292 years), where it would
/// stop moving while an advance still answered "clock advanced".
pub fn advanced(offset_nanos: i64, by: Duration) -> Option<i64> {
    i64::try_from(by.as_nanos())
        .ok()
        .and_then(|add| offset_nanos.checked_add(add))
}

/// An advance refused because the clock has no room for it: it was
/// `offset_nanos` ahead of real time, and nothing moved. As a refusal to
/// the caller, [`Invalid`] says how much room is left, exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoom {
    /// The offset the refused advance met, in nanoseconds.
    pub offset_nanos: i64,
}

impl From<NoRoom> for Invalid {
    fn from(refused: NoRoom) -> Self {
        // Exactly what is left, to the nanosecond (an advance is read to
        // the nanosecond): any advance up to this is accepted.
        let left = i64::MAX - refused.offset_nanos.max(0);
        let (whole, nanos) = (left / 1_000_000_000, left % 1_000_000_000);
        let left = if nanos == 0 {
            whole.to_string()
        } else {
            let frac = format!("{nanos:09}");
            format!("{whole}.{}", frac.trim_end_matches('0'))
        };
        Invalid::rules(format!(
            "seconds must be at most {left}: the virtual clock goes at most about 292 years \
             ahead of real time; reset it to start again"
        ))
    }
}

/// Whether a clock `offset_nanos` ahead of real time may move `by` more
/// (see [`advanced`]); a refusal says how much room is left.
pub fn room_for(offset_nanos: i64, by: Duration) -> Result<(), Invalid> {
    match advanced(offset_nanos, by) {
        Some(_) => Ok(()),
        None => Err(NoRoom { offset_nanos }.into()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn an_advance_past_the_clocks_end_is_refused() {
        let year = Duration::from_secs(365 * 24 * 3600);
        assert!(room_for(0, year * 100).is_ok());
        assert!(room_for(0, Duration::from_nanos(i64::MAX as u64)).is_ok());
        let err = room_for(1, Duration::from_nanos(i64::MAX as u64)).expect_err("past the end");
        assert!(
            format!("{err:?}").contains("seconds must be at most 9223372036"),
            "{err:?}"
        );
        let far = i64::try_from((year * 250).as_nanos()).expect("fits");
        assert!(room_for(far, year * 100).is_err());
        assert!(room_for(far, year * 40).is_ok());
        assert!(room_for(i64::MAX, Duration::from_nanos(1)).is_err());
        assert!(room_for(i64::MAX, Duration::ZERO).is_ok());
        // With 0.85 s left, the message says so (it said "at most 0").
        let near = i64::MAX - 850_000_000;
        let err = room_for(near, Duration::from_secs(1)).expect_err("past the end");
        assert!(format!("{err:?}").contains("at most 0.85:"), "{err:?}");
        assert!(room_for(near, Duration::from_millis(850)).is_ok());
    }

    /// With less than a millisecond left, the refusal says the room to the
    /// nanosecond (it said "at most 0", then took 0.0000001), and exactly
    /// that much is accepted, a nanosecond more is not.
    #[test]
    fn the_room_left_is_said_exactly() {
        let near = i64::MAX - 999_999;
        let err = room_for(near, Duration::from_millis(1)).expect_err("past the end");
        assert!(
            format!("{err:?}").contains("seconds must be at most 0.000999999:"),
            "{err:?}"
        );
        assert!(room_for(near, Duration::from_nanos(100)).is_ok());
        assert!(room_for(near, Duration::from_nanos(999_999)).is_ok());
        assert!(room_for(near, Duration::from_nanos(1_000_000)).is_err());
        let err = room_for(i64::MAX, Duration::from_nanos(1)).expect_err("at the end");
        assert!(format!("{err:?}").contains("at most 0:"), "{err:?}");
        let err = room_for(1, Duration::from_nanos(i64::MAX as u64)).expect_err("past the end");
        assert!(
            format!("{err:?}").contains("at most 9223372036.854775806:"),
            "{err:?}"
        );
    }

    #[test]
    fn try_advance_moves_all_or_nothing() {
        let clock = Clock::new();
        clock.set_offset_nanos(i64::MAX - 10);
        assert_eq!(
            clock.try_advance(Duration::from_nanos(11)),
            Err(NoRoom {
                offset_nanos: i64::MAX - 10
            })
        );
        assert_eq!(clock.offset_nanos(), i64::MAX - 10, "moved nothing");
        assert_eq!(clock.try_advance(Duration::from_nanos(10)), Ok(i64::MAX));
        clock.reset();
        assert!(clock.try_advance(Duration::from_secs(u64::MAX)).is_err());
        assert_eq!(clock.offset_nanos(), 0);
    }

    /// Of many threads racing advances that only one fits, exactly one
    /// moves the clock; the others are refused and move nothing.
    #[test]
    fn racing_advances_only_one_of_which_fits_move_the_clock_once() {
        let clock = std::sync::Arc::new(Clock::new());
        let by = Duration::from_secs(3_000_000_000);
        clock.set_offset_nanos(i64::try_from((by * 2).as_nanos()).expect("fits"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (clock, barrier) = (clock.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    clock.try_advance(by).is_ok()
                })
            })
            .collect();
        let moved = threads
            .into_iter()
            .map(|t| t.join().expect("no panic"))
            .filter(|&moved| moved)
            .count();
        assert_eq!(moved, 1);
        assert_eq!(
            clock.offset_nanos(),
            i64::try_from((by * 3).as_nanos()).expect("fits")
        );
    }

    proptest! {
        #[test]
        fn integer_shift_equals_chrono_shift(
            real_nanos in prop_oneof![0u64..(1u64 << 62), (1u64 << 62)..=u64::MAX],
            offset in prop_oneof![0i64..(1i64 << 40), 0i64..=i64::MAX],
        ) {
            let real = Duration::from_nanos(real_nanos);
            let as_chrono = DateTime::<Utc>::UNIX_EPOCH
                + TimeDelta::from_std(real).expect("in range");
            prop_assert_eq!(shifted(real, offset), chrono_shifted(as_chrono, offset));
        }
    }

    #[test]
    fn advance_moves_now_forward_and_reset_returns() {
        let clock = Clock::new();
        let before = clock.now();
        clock.advance(Duration::from_secs(3600));
        assert!(clock.now() - before >= TimeDelta::seconds(3600));
        clock.reset();
        assert!(clock.now() - before < TimeDelta::seconds(60));
    }

    #[test]
    fn format_has_millis_and_z() {
        let t = DateTime::from_timestamp_millis(1_795_335_330_123).expect("valid constant");
        assert_eq!(format_time(t), "2026-11-22T08:15:30.123Z");
    }

    #[test]
    fn seconds_are_read_exactly_from_the_numbers_text() {
        let nanos = |t: &str| nanos_of(t);
        assert_eq!(nanos("1.5"), Some(1_500_000_000));
        assert_eq!(nanos("0"), Some(0));
        assert_eq!(nanos("-0"), Some(0));
        assert_eq!(nanos("-0.0e5"), Some(0));
        assert_eq!(nanos("-1"), None);
        assert_eq!(nanos("1e-30"), Some(0));
        assert_eq!(nanos("0.0000000019"), Some(1));
        assert_eq!(nanos("2E3"), Some(2_000_000_000_000));
        assert_eq!(nanos("1e+2"), Some(100_000_000_000));
        assert_eq!(nanos("9.6e307"), Some(u128::MAX));
        assert_eq!(nanos("1e99999999999999999999"), Some(u128::MAX));
        assert_eq!(nanos("1e-99999999999999999999"), Some(0));
        assert_eq!(nanos("0.12345678901234567890123456789"), Some(123_456_789));
    }
}
