//! Injected faults (CONTRACT section 10): the `X-Mock-Fault` header, faults
//! queued through the library, the start-time fail rate with its seeded RNG,
//! latency and the rate limit. This module decides; `guard.rs` applies.

use std::collections::VecDeque;
use std::ops::RangeInclusive;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::error::ApiError;

/// One injected fault.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// 500 before any change.
    InternalError,
    /// The change is made, then 500.
    CommitThenError,
    /// The connection is closed with no response, before any change.
    Reset,
    /// The change is made, then the connection is closed with no response.
    CommitThenReset,
    /// Wait this long first.
    Delay(Duration),
    /// 429 with `Retry-After`.
    RateLimit,
}

impl Fault {
    /// The header token, e.g. `commit-then-error` or `delay=50`.
    pub fn token(&self) -> String {
        match self {
            Self::InternalError => "internal-error".to_owned(),
            Self::CommitThenError => "commit-then-error".to_owned(),
            Self::Reset => "reset".to_owned(),
            Self::CommitThenReset => "commit-then-reset".to_owned(),
            Self::Delay(d) => format!("delay={}", d.as_millis()),
            Self::RateLimit => "rate-limit".to_owned(),
        }
    }
}

/// Longest accepted `delay=`: one minute.
const MAX_DELAY: Duration = Duration::from_secs(60);

/// Parses an `X-Mock-Fault` value (comma-separated tokens).
///
/// # Errors
///
/// `VALIDATION_ERROR` naming the unknown token.
pub fn parse_header(value: &[u8]) -> Result<Vec<Fault>, ApiError> {
    let text = std::str::from_utf8(value)
        .map_err(|_| ApiError::validation("X-Mock-Fault must be ASCII"))?;
    let mut faults = Vec::new();
    for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let fault = match token.to_ascii_lowercase().as_str() {
            "internal-error" => Fault::InternalError,
            "commit-then-error" => Fault::CommitThenError,
            "reset" => Fault::Reset,
            "commit-then-reset" => Fault::CommitThenReset,
            "rate-limit" => Fault::RateLimit,
            other => match other.strip_prefix("delay=").map(str::parse::<u64>) {
                Some(Ok(ms)) if Duration::from_millis(ms) <= MAX_DELAY => {
                    Fault::Delay(Duration::from_millis(ms))
                }
                _ => {
                    return Err(ApiError::validation(format!(
                        "X-Mock-Fault: unknown fault {token:?}; expected internal-error, \
                         commit-then-error, reset, commit-then-reset, rate-limit or \
                         delay=<ms> (at most 60000)"
                    )));
                }
            },
        };
        faults.push(fault);
    }
    Ok(faults)
}

/// What to do with one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Total delay before handling.
    pub delay: Duration,
    /// The first non-delay fault, if any.
    pub action: Option<Fault>,
    /// Every fault applied, for the journal.
    pub applied: Vec<Fault>,
}

impl Plan {
    fn add(&mut self, fault: Fault) {
        match &fault {
            Fault::Delay(d) => self.delay = self.delay.saturating_add(*d),
            _ if self.action.is_none() => self.action = Some(fault.clone()),
            _ => return,
        }
        self.applied.push(fault);
    }
}

#[derive(Debug)]
struct Window {
    started: Instant,
    count: u32,
}

/// Fault sources of one server.
#[derive(Debug)]
pub struct Faults {
    queue: Mutex<VecDeque<Fault>>,
    fail_rate: f64,
    latency: Option<RangeInclusive<Duration>>,
    rng: Mutex<StdRng>,
    rate_limit: Option<u32>,
    /// A fixed one-second window: simple and enough to make a client see
    /// 429 + `Retry-After` under load. Real (not virtual) time, because it
    /// limits real throughput.
    window: Mutex<Window>,
}

impl Faults {
    /// Fault sources from the start-time options.
    pub fn new(
        fail_rate: f64,
        seed: Option<u64>,
        latency: Option<RangeInclusive<Duration>>,
        rate_limit: Option<u32>,
    ) -> Self {
        Self {
            queue: Mutex::default(),
            fail_rate,
            latency,
            rng: Mutex::new(seed.map_or_else(StdRng::from_os_rng, StdRng::seed_from_u64)),
            rate_limit,
            window: Mutex::new(Window {
                started: Instant::now(),
                count: 0,
            }),
        }
    }

    /// Queues faults; each next `/api/` request takes one.
    pub fn inject(&self, faults: impl IntoIterator<Item = Fault>) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(faults);
    }

    /// Forgets queued faults.
    pub fn clear(&self) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Counts a request against the rate limit; `Err(retry_after_seconds)`
    /// when over it.
    pub fn admit(&self) -> Result<(), u64> {
        let Some(limit) = self.rate_limit else {
            return Ok(());
        };
        let mut w = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if now.duration_since(w.started) >= Duration::from_secs(1) {
            w.started = now;
            w.count = 0;
        }
        if w.count >= limit {
            return Err(1);
        }
        w.count += 1;
        Ok(())
    }

    /// The plan for one request: header faults, then one queued fault, then
    /// the random fault and latency.
    pub fn plan(&self, header: Vec<Fault>) -> Plan {
        let mut plan = Plan::default();
        for f in header {
            plan.add(f);
        }
        if let Some(f) = self
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
        {
            plan.add(f);
        }
        let mut rng = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
        if self.fail_rate > 0.0 && rng.random_bool(self.fail_rate) {
            plan.add(match rng.random_range(0..4u8) {
                0 => Fault::InternalError,
                1 => Fault::CommitThenError,
                2 => Fault::Reset,
                _ => Fault::CommitThenReset,
            });
        }
        if let Some(range) = &self.latency {
            let d = if range.start() == range.end() {
                *range.start()
            } else {
                rng.random_range(range.clone())
            };
            if !d.is_zero() {
                plan.delay = plan.delay.saturating_add(d);
            }
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_parses_tokens() {
        assert_eq!(
            parse_header(b"commit-then-error, delay=50").expect("valid"),
            vec![
                Fault::CommitThenError,
                Fault::Delay(Duration::from_millis(50))
            ]
        );
        assert!(parse_header(b"explode").is_err());
        assert!(parse_header(b"delay=99999999").is_err());
    }

    #[test]
    fn seeded_fail_rate_repeats() {
        let a = Faults::new(0.5, Some(7), None, None);
        let b = Faults::new(0.5, Some(7), None, None);
        let pa: Vec<_> = (0..50).map(|_| a.plan(Vec::new()).action).collect();
        let pb: Vec<_> = (0..50).map(|_| b.plan(Vec::new()).action).collect();
        assert_eq!(pa, pb);
        assert!(pa.iter().any(Option::is_some) && pa.iter().any(Option::is_none));
    }
}
