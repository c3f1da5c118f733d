//! The virtual clock: real time plus an offset that tests move forward.
//!
//! Every timestamp the server shows or compares comes from here, so advancing
//! the clock moves expiry and settlement (CONTRACT sections 6 and 10) without
//! anyone sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};

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

/// RFC 3339, UTC, `Z`, milliseconds: `2026-11-22T08:15:30.123Z`.
pub fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `real` (time since the epoch) plus `offset_nanos`, truncated to
/// milliseconds, on integers: [`chrono_shifted`] at a fifth of the cost
/// (it runs twice per request).
fn shifted(real: Duration, offset_nanos: i64) -> DateTime<Utc> {
    let nanos = i128::try_from(real.as_nanos())
        .unwrap_or(i128::MAX)
        .saturating_add(i128::from(offset_nanos));
    i64::try_from(nanos.div_euclid(1_000_000))
        .ok()
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn integer_shift_equals_chrono_shift(
            real_nanos in 0u64..(1u64 << 62),
            offset in 0i64..=i64::MAX,
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
}
