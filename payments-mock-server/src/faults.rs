//! Injected faults (CONTRACT section 10): the `X-Mock-Fault` header, faults
//! queued through the library, the start-time fail rate and latency, and the
//! rate limit. This module decides; `guard.rs` applies.
//!
//! # Deterministic draws
//!
//! The fail-rate fault and the latency of an `/api/` request are not taken
//! from a shared random stream (whose order would be the arrival order, so
//! concurrent clients would never repeat a run). Each request's draw is a
//! pure function of:
//!
//! - the fault seed (`--fault-seed`, or a random one picked at start and
//!   logged, see [`Faults::seed`]);
//! - the request's key: a stable hash of what identifies the logical
//!   request independently of timing and of ids the mock made up (built by
//!   `guard.rs` with [`KeyHasher`]);
//! - how many requests with that key were drawn for before (a per-key
//!   counter), so a retry of the same request gets a fresh draw, and the
//!   n-th retry always the same one.
//!
//! The hash is FNV-1a (64 bit) and the generator SplitMix64, both fixed
//! here, so a seed gives the same faults on every platform and with every
//! version of `rand` or of the standard library.

use std::collections::{HashMap, VecDeque};
use std::ops::RangeInclusive;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rand::RngExt as _;

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
    /// The request is carried out, then answered with another
    /// transaction's data, as a misrouting gateway or a stale cache would:
    /// the newest other transaction of the caller's scope that can answer
    /// it (for a confirm, a confirmed one). Without one, the true answer.
    /// Never drawn by `--fail-rate`: a test asks for it.
    AnswerOther,
    /// The request is read and never answered, before any change: the
    /// connection is held for [`HANG_LIMIT`], never past the server's
    /// shutdown, and closed (without an answer) as soon as its client
    /// leaves: it closes the connection or resets it. A client that only
    /// shut its sending side is taken as gone too (the two look alike on
    /// the socket, and neither is owed an answer).
    Hang,
    /// The change is made, then no answer ([`Fault::Hang`] after the
    /// commit point): what a client's timeout meets.
    CommitThenHang,
    /// The change is made; the head promises the whole `Content-Length`,
    /// half the body comes, and the connection closes.
    Truncate,
    /// The right answer, its body trickled at this many bytes a second
    /// (at least 1).
    SlowBody(u32),
    /// A gateway's HTML error page (`text/html`) with this status (502,
    /// 503 or 504), before any change.
    Gateway(u16),
}

/// Longest a hanging request ([`Fault::Hang`], [`Fault::CommitThenHang`])
/// is held open: ten minutes.
pub const HANG_LIMIT: Duration = Duration::from_secs(600);

impl Fault {
    /// Its kind: an index of `metrics::FAULT_KINDS`.
    pub(crate) fn kind(&self) -> usize {
        match self {
            Self::InternalError => 0,
            Self::CommitThenError => 1,
            Self::Reset => 2,
            Self::CommitThenReset => 3,
            Self::Delay(_) => 4,
            Self::RateLimit => 5,
            Self::AnswerOther => 6,
            Self::Hang => 7,
            Self::CommitThenHang => 8,
            Self::Truncate => 9,
            Self::SlowBody(_) => 10,
            Self::Gateway(_) => 11,
        }
    }

    /// Whether the request's change is made before the fault: the
    /// ambiguous failures (`commit-then-error`, `commit-then-reset`,
    /// `answer-other`, `commit-then-hang`, `truncate`) an application must
    /// come back from.
    pub fn commits(&self) -> bool {
        matches!(
            self,
            Self::CommitThenError
                | Self::CommitThenReset
                | Self::AnswerOther
                | Self::CommitThenHang
                | Self::Truncate
        )
    }

    /// The header token, e.g. `commit-then-error` or `delay=50`.
    pub fn token(&self) -> String {
        match self {
            Self::InternalError => "internal-error".to_owned(),
            Self::CommitThenError => "commit-then-error".to_owned(),
            Self::Reset => "reset".to_owned(),
            Self::CommitThenReset => "commit-then-reset".to_owned(),
            Self::Delay(d) => format!("delay={}", d.as_millis()),
            Self::RateLimit => "rate-limit".to_owned(),
            Self::AnswerOther => "answer-other".to_owned(),
            Self::Hang => "hang".to_owned(),
            Self::CommitThenHang => "commit-then-hang".to_owned(),
            Self::Truncate => "truncate".to_owned(),
            Self::SlowBody(rate) => format!("slow-body={rate}"),
            Self::Gateway(status) => format!("gateway={status}"),
        }
    }

    /// Whether `X-Mock-Fault` may ask for this kind (the seven of CONTRACT
    /// section 10); the others are the scripted rules' alone.
    fn is_header_kind(&self) -> bool {
        matches!(
            self,
            Self::InternalError
                | Self::CommitThenError
                | Self::Reset
                | Self::CommitThenReset
                | Self::RateLimit
                | Self::AnswerOther
                | Self::Delay(_)
        )
    }

    /// A fault rule's kind (CONTRACT section 19): the seven tokens of
    /// `X-Mock-Fault`, and `hang`, `commit-then-hang`, `truncate`,
    /// `slow-body=BYTES_PER_SECOND` and `gateway=502|503|504`.
    ///
    /// # Errors
    ///
    /// A sentence saying what the kinds are, when `token` is none of them.
    pub fn from_rule_token(token: &str) -> Result<Self, String> {
        let fault = match token {
            "internal-error" => Self::InternalError,
            "commit-then-error" => Self::CommitThenError,
            "reset" => Self::Reset,
            "commit-then-reset" => Self::CommitThenReset,
            "rate-limit" => Self::RateLimit,
            "answer-other" => Self::AnswerOther,
            "hang" => Self::Hang,
            "commit-then-hang" => Self::CommitThenHang,
            "truncate" => Self::Truncate,
            "gateway=502" => Self::Gateway(502),
            "gateway=503" => Self::Gateway(503),
            "gateway=504" => Self::Gateway(504),
            other => {
                let number = |prefix: &str| {
                    other
                        .strip_prefix(prefix)
                        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                        .filter(|n| !n.starts_with('0'))
                        .and_then(|n| n.parse::<u64>().ok())
                };
                // The limits are `Fault::check`'s, as a rule's and a queued
                // fault's: one place for them.
                let fault = if other == "delay=0" {
                    Some(Self::Delay(Duration::ZERO))
                } else if let Some(ms) = number("delay=") {
                    Some(Self::Delay(Duration::from_millis(ms)))
                } else {
                    number("slow-body=")
                        .and_then(|r| u32::try_from(r).ok())
                        .map(Self::SlowBody)
                };
                if let Some(fault) = fault.filter(|f| f.check().is_ok()) {
                    fault
                } else {
                    return Err(format!(
                        "{:?} is not a fault; expected internal-error, commit-then-error, \
                         reset, commit-then-reset, rate-limit, answer-other, delay=<ms> \
                         (0 to 60000), hang, commit-then-hang, truncate, \
                         slow-body=<bytes per second> (1 to 999999999) or \
                         gateway=502|503|504",
                        other.chars().take(64).collect::<String>()
                    ));
                }
            }
        };
        Ok(fault)
    }
}

impl Fault {
    /// Whether the fault is within the limits that every way of asking for
    /// it applies (`POST /_mock/faults`, [`crate::FaultRule`], `X-Mock-Fault`,
    /// [`crate::Controls::inject_faults`]), so that what a rule lists is what
    /// `POST /_mock/faults` takes back: a delay of whole milliseconds up to
    /// 60000, a `slow-body` of 1 to 999999999 bytes a second, a gateway
    /// status of 502, 503 or 504.
    ///
    /// # Errors
    ///
    /// What is wrong, as a sentence.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        match self {
            Self::Delay(d) if *d > MAX_DELAY => Err("delay is at most 60000 ms"),
            Self::Delay(d) if d.subsec_nanos() % 1_000_000 != 0 => {
                Err("delay is a whole number of milliseconds")
            }
            Self::SlowBody(0) => Err("slow-body needs at least 1 byte a second"),
            Self::SlowBody(rate) if *rate > MAX_SLOW_BODY => {
                Err("slow-body is at most 999999999 bytes a second")
            }
            Self::Gateway(status) if !matches!(status, 502..=504) => {
                Err("gateway is 502, 503 or 504")
            }
            _ => Ok(()),
        }
    }
}

/// Fastest accepted `slow-body=`, in bytes a second.
const MAX_SLOW_BODY: u32 = 999_999_999;

/// Longest accepted `delay=`, and longest delay an `X-Mock-Fault` asks
/// for in all: one minute.
const MAX_DELAY: Duration = Duration::from_millis(crate::domain::rules::MAX_FAULT_DELAY_MS);

/// What to do with one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Total delay before handling.
    pub delay: Duration,
    /// The first non-delay fault, if any.
    pub action: Option<Fault>,
    /// Every fault applied, for the journal.
    pub applied: Vec<Fault>,
    /// Whether `action` was taken from the queue ([`Faults::inject`]): an
    /// `answer-other` that had nothing to change goes back there.
    pub queued: bool,
}

impl Plan {
    pub(crate) fn add(&mut self, fault: Fault) {
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

/// Most keys whose counters are kept. Past it the counters start over (a
/// server that has seen a million distinct requests is not repeating a
/// test run); it bounds the memory a long-lived server spends on them.
const MAX_COUNTED_KEYS: usize = 1 << 20;

/// The signal that ends a server's hanging requests at its shutdown,
/// shared by its sandboxes' [`Faults`].
#[derive(Debug, Clone)]
pub(crate) struct Closing(std::sync::Arc<tokio::sync::watch::Sender<bool>>);

/// Fault sources of one server.
#[derive(Debug)]
pub struct Faults {
    queue: Mutex<VecDeque<Fault>>,
    fail_rate: f64,
    latency: Option<RangeInclusive<Duration>>,
    seed: u64,
    /// Key hash → how many draws that key has had.
    seen: Mutex<HashMap<u64, u32>>,
    rate_limit: Option<u32>,
    /// A fixed one-second window: simple and enough to make a client see
    /// 429 + `Retry-After` under load. Real (not virtual) time, because it
    /// limits real throughput.
    window: Mutex<Window>,
    /// Set when the server shuts down: hanging requests end then. One
    /// for the server: its sandboxes' faults share the root's
    /// ([`Faults::closing_with`]).
    closing: std::sync::Arc<tokio::sync::watch::Sender<bool>>,
    /// Set when the sandbox these faults are of is removed (deleted, or
    /// its time ran out): its hanging requests end then, as at the
    /// shutdown. Never set at the root.
    removed: tokio::sync::watch::Sender<bool>,
}

impl Faults {
    /// Fault sources from the start-time options. Without a seed, a random
    /// one is picked ([`Faults::seed`] tells it, and the binary and
    /// [`crate::MockServerBuilder::start`] log it, so a run can be repeated).
    pub fn new(
        fail_rate: f64,
        seed: Option<u64>,
        latency: Option<RangeInclusive<Duration>>,
        rate_limit: Option<u32>,
    ) -> Self {
        let seed = seed.unwrap_or_else(|| rand::rng().random::<u64>());
        Self {
            queue: Mutex::default(),
            fail_rate,
            latency,
            seed,
            seen: Mutex::default(),
            rate_limit,
            window: Mutex::new(Window {
                started: Instant::now(),
                count: 0,
            }),
            closing: std::sync::Arc::new(tokio::sync::watch::Sender::new(false)),
            removed: tokio::sync::watch::Sender::new(false),
        }
    }

    /// What ends these faults' hanging requests: a sandbox's faults take
    /// the server's ([`Faults::closing_with`]).
    pub(crate) fn closing(&self) -> Closing {
        Closing(std::sync::Arc::clone(&self.closing))
    }

    /// These faults, their hanging requests ended by `closing` (a
    /// sandbox's, by the server's shutdown).
    pub(crate) fn closing_with(mut self, closing: &Closing) -> Self {
        self.closing = std::sync::Arc::clone(&closing.0);
        self
    }

    /// Tells hanging requests that the server is shutting down.
    pub(crate) fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Tells the hanging requests of a sandbox that it was removed.
    pub(crate) fn end_held(&self) {
        self.removed.send_replace(true);
    }

    /// Whether the sandbox these faults are of was removed
    /// ([`Faults::end_held`]).
    pub(crate) fn is_removed(&self) -> bool {
        *self.removed.borrow()
    }

    /// Whether the server is shutting down ([`Faults::close`]), or the
    /// sandbox was removed ([`Faults::end_held`]).
    pub(crate) fn is_closed(&self) -> bool {
        *self.closing.borrow() || *self.removed.borrow()
    }

    /// Waits until the server shuts down ([`Faults::close`]) or the
    /// sandbox is removed ([`Faults::end_held`]), or at most `limit`: how
    /// long a hanging fault holds its request.
    pub(crate) async fn hold(&self, limit: Duration) {
        let mut closing = self.closing.subscribe();
        let mut removed = self.removed.subscribe();
        let _ = tokio::time::timeout(limit, async {
            tokio::select! {
                _ = closing.wait_for(|closed| *closed) => {}
                _ = removed.wait_for(|removed| *removed) => {}
            }
        })
        .await;
    }

    /// Queues faults; each next `/api/` request takes one. Nothing is
    /// queued when one of them is out of its limits ([`Fault::check`]).
    ///
    /// # Errors
    ///
    /// The first fault out of its limits, and what is wrong with it.
    pub(crate) fn inject(
        &self,
        faults: impl IntoIterator<Item = Fault>,
    ) -> Result<(), (Fault, &'static str)> {
        let faults: Vec<Fault> = faults.into_iter().collect();
        if let Some((fault, problem)) = faults
            .iter()
            .find_map(|f| f.check().err().map(|problem| (f.clone(), problem)))
        {
            return Err((fault, problem));
        }
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(faults);
        Ok(())
    }

    /// The seed of the fail-rate and latency draws: the configured one, or
    /// the one picked at start.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Forgets queued faults and how often each request was seen, so the
    /// same requests draw the same faults again.
    pub fn clear(&self) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Whether [`Faults::draw`] can add anything: callers skip building the
    /// request key otherwise.
    pub fn draws(&self) -> bool {
        self.fail_rate > 0.0 || self.latency.is_some()
    }

    /// Counts a request against the rate limit; `Err(retry_after_seconds)`
    /// when over it.
    pub fn admit(&self) -> Result<(), u64> {
        if self.rate_limit.is_none() {
            return Ok(());
        }
        self.admit_at(Instant::now())
    }

    /// [`Faults::admit`] at `now` (tests give it instants of their own, so
    /// the window is seen to lift without waiting a second).
    fn admit_at(&self, now: Instant) -> Result<(), u64> {
        let Some(limit) = self.rate_limit else {
            return Ok(());
        };
        let mut w = self.window.lock().unwrap_or_else(PoisonError::into_inner);
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

    /// The plan for one request from the header faults, then one queued
    /// fault. The random part is added by [`Faults::draw`] once the request
    /// key is known.
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
            plan.queued = plan.action.is_none() && !matches!(f, Fault::Delay(_));
            plan.add(f);
        }
        plan
    }

    /// Puts `fault` back first in the queue: a queued fault that met a
    /// request it could change nothing of (an `answer-other` with no other
    /// transaction to show) waits for the next one.
    pub(crate) fn requeue(&self, fault: Fault) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_front(fault);
    }

    /// Adds the fail-rate fault and the latency for the request whose key
    /// hashes to `key`: a pure function of the seed, the key and how many
    /// draws the key had before (see the module docs).
    pub fn draw(&self, key: u64, plan: &mut Plan) {
        if !self.draws() {
            return;
        }
        let n = {
            let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
            if seen.len() >= MAX_COUNTED_KEYS && !seen.contains_key(&key) {
                seen.clear();
            }
            let count = seen.entry(key).or_insert(0);
            let n = *count;
            *count = count.saturating_add(1);
            n
        };
        let mut rng = SplitMix64(
            KeyHasher::new()
                .part(&self.seed.to_le_bytes())
                .part(&key.to_le_bytes())
                .part(&n.to_le_bytes())
                .finish(),
        );
        // Always draw in the same order (fail, kind, latency), whatever the
        // options, so one option does not shift the others' draws.
        let fails = rng.unit() < self.fail_rate;
        let kind = rng.below(4);
        let latency = rng.next();
        if fails {
            plan.add(match kind {
                0 => Fault::InternalError,
                1 => Fault::CommitThenError,
                2 => Fault::Reset,
                _ => Fault::CommitThenReset,
            });
        }
        if let Some(range) = &self.latency {
            let (lo, hi) = (range.start().as_nanos(), range.end().as_nanos());
            let span = u64::try_from(hi - lo).unwrap_or(u64::MAX);
            let extra = if span == 0 {
                0
            } else {
                SplitMix64(latency).below(span.saturating_add(1))
            };
            let d = range.start().saturating_add(Duration::from_nanos(extra));
            if !d.is_zero() {
                plan.delay = plan.delay.saturating_add(d);
            }
        }
    }
}

mod hash;
mod header;
#[cfg(test)]
mod tests;

use hash::SplitMix64;
pub(crate) use hash::{KeyHasher, unit};
pub use header::parse_header;
