//! When to try a call again, and how long to wait first: [`RetryPolicy`]
//! (also at the crate root), the [`Failure`] it judges and the
//! [`Decision`] it makes.
//!
//! [`RetryPolicy::decide`] is a pure function of the attempt number, the
//! failure and a random number, so every decision is unit-tested without
//! sleeping; the transport only sleeps what it says.

use std::time::Duration;

/// How a failed attempt may be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// Retrying cannot help (a 400, a decode error).
    Final,
    /// Retrying may help: a connection failure, a timeout, 429, 500, 502,
    /// 503 or 504.
    Retryable {
        /// The server's `Retry-After`, if it sent one.
        retry_after: Option<Duration>,
    },
}

impl Failure {
    pub(crate) fn of(error: &crate::Error) -> Self {
        if error.is_retryable() {
            Failure::Retryable {
                retry_after: error.retry_after(),
            }
        } else {
            Failure::Final
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Give up and report the failure.
    Stop,
    /// Wait this long, then try again.
    RetryAfter(Duration),
}

/// Retry limits and backoff.
// CONTRACT section 12.
///
/// The default retries at most twice (three attempts), with exponential
/// backoff and full jitter from 200 ms up to 5 s, and honours `Retry-After`
/// up to 30 s.
///
/// # Examples
///
/// ```
/// use payments_client::RetryPolicy;
/// use std::time::Duration;
/// let patient = RetryPolicy::default().max_retries(5).base_delay(Duration::from_millis(50));
/// assert_eq!(patient.max_retries_value(), 5);
/// assert_eq!(RetryPolicy::none().max_retries_value(), 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    max_retries: u32,
    base_delay: Duration,
    max_delay: Duration,
    max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// Retries after the first attempt (0 means one attempt only).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// The backoff ceiling of the first retry; it doubles per retry.
    pub fn base_delay(mut self, d: Duration) -> Self {
        self.base_delay = d;
        self
    }

    /// The largest backoff ceiling.
    pub fn max_delay(mut self, d: Duration) -> Self {
        self.max_delay = d;
        self
    }

    /// The longest `Retry-After` honoured; longer ones are shortened to it.
    pub fn max_retry_after(mut self, d: Duration) -> Self {
        self.max_retry_after = d;
        self
    }

    /// The configured number of retries.
    pub fn max_retries_value(&self) -> u32 {
        self.max_retries
    }

    /// The backoff ceiling before retry number `attempt` (1-based):
    /// `min(max_delay, base_delay * 2^(attempt - 1))`.
    pub fn backoff_ceiling(&self, attempt: u32) -> Duration {
        let factor = 1u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// Decides after attempt number `attempt` (1-based) failed.
    ///
    /// `random` picks the jittered delay uniformly in `[0, ceiling]` (full
    /// jitter); the client passes a random `u64` from the operating system
    /// (`getrandom`), tests pass fixed values.
    /// A `Retry-After` replaces the backoff, capped at
    /// [`max_retry_after`](Self::max_retry_after).
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::retry::{Decision, Failure, RetryPolicy};
    /// use std::time::Duration;
    /// let p = RetryPolicy::default();
    /// let busy = Failure::Retryable { retry_after: Some(Duration::from_secs(2)) };
    /// assert_eq!(p.decide(1, busy, 0), Decision::RetryAfter(Duration::from_secs(2)));
    /// assert_eq!(p.decide(3, busy, 0), Decision::Stop);
    /// assert_eq!(p.decide(1, Failure::Final, 0), Decision::Stop);
    /// ```
    pub fn decide(&self, attempt: u32, failure: Failure, random: u64) -> Decision {
        let Failure::Retryable { retry_after } = failure else {
            return Decision::Stop;
        };
        if attempt > self.max_retries {
            return Decision::Stop;
        }
        if let Some(wait) = retry_after {
            return Decision::RetryAfter(wait.min(self.max_retry_after));
        }
        let ceiling = self.backoff_ceiling(attempt).as_nanos();
        let nanos = u128::from(random) % ceiling.saturating_add(1);
        Decision::RetryAfter(Duration::from_nanos(
            u64::try_from(nanos).unwrap_or(u64::MAX),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUSY: Failure = Failure::Retryable { retry_after: None };

    #[test]
    fn final_failures_stop_at_once() {
        assert_eq!(
            RetryPolicy::default().decide(1, Failure::Final, 7),
            Decision::Stop
        );
    }

    #[test]
    fn default_retries_twice_then_stops() {
        let p = RetryPolicy::default();
        assert!(matches!(p.decide(1, BUSY, 1), Decision::RetryAfter(_)));
        assert!(matches!(p.decide(2, BUSY, 1), Decision::RetryAfter(_)));
        assert_eq!(p.decide(3, BUSY, 1), Decision::Stop);
    }

    #[test]
    fn none_never_retries() {
        assert_eq!(RetryPolicy::none().decide(1, BUSY, 1), Decision::Stop);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RetryPolicy::default()
            .max_retries(10)
            .base_delay(Duration::from_millis(100))
            .max_delay(Duration::from_millis(1000));
        assert_eq!(p.backoff_ceiling(1), Duration::from_millis(100));
        assert_eq!(p.backoff_ceiling(2), Duration::from_millis(200));
        assert_eq!(p.backoff_ceiling(4), Duration::from_millis(800));
        assert_eq!(p.backoff_ceiling(5), Duration::from_millis(1000));
        assert_eq!(p.backoff_ceiling(64), Duration::from_millis(1000));
    }

    #[test]
    fn full_jitter_stays_within_zero_and_the_ceiling() {
        let p = RetryPolicy::default().base_delay(Duration::from_millis(100));
        assert_eq!(p.decide(1, BUSY, 0), Decision::RetryAfter(Duration::ZERO));
        let ceiling = Duration::from_millis(100).as_nanos() as u64;
        assert_eq!(
            p.decide(1, BUSY, ceiling),
            Decision::RetryAfter(Duration::from_millis(100))
        );
        for r in [1u64, 12_345, u64::MAX, ceiling + 1] {
            match p.decide(1, BUSY, r) {
                Decision::RetryAfter(d) => assert!(d <= Duration::from_millis(100)),
                Decision::Stop => panic!("should retry"),
            }
        }
    }

    #[test]
    fn retry_after_is_honoured() {
        let f = Failure::Retryable {
            retry_after: Some(Duration::from_secs(3)),
        };
        assert_eq!(
            RetryPolicy::default().decide(1, f, 99),
            Decision::RetryAfter(Duration::from_secs(3))
        );
    }

    #[test]
    fn retry_after_is_capped() {
        let f = Failure::Retryable {
            retry_after: Some(Duration::from_secs(3600)),
        };
        let p = RetryPolicy::default().max_retry_after(Duration::from_secs(10));
        assert_eq!(
            p.decide(1, f, 0),
            Decision::RetryAfter(Duration::from_secs(10))
        );
    }

    #[test]
    fn retry_after_does_not_lift_the_retry_limit() {
        let f = Failure::Retryable {
            retry_after: Some(Duration::from_secs(1)),
        };
        assert_eq!(RetryPolicy::none().decide(1, f, 0), Decision::Stop);
    }
}
