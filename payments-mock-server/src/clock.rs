//! The virtual clock: real time plus an offset that tests move forward.
//!
//! Every timestamp the server shows or compares comes from here, so advancing
//! the clock moves expiry and settlement (CONTRACT sections 6 and 10) without
//! anyone sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

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
        let offset = TimeDelta::nanoseconds(self.offset_nanos.load(Ordering::SeqCst));
        let now = Utc::now()
            .checked_add_signed(offset)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
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
}

/// RFC 3339, UTC, `Z`, milliseconds: `2026-11-22T08:15:30.123Z`.
pub fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
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
    use super::*;

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
