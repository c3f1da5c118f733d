//! A connection's requests under way ([`Busy`]), and the header read
//! timeout watched by ticks ([`HeadWatch`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How many requests of a connection are under way (from the service's
/// call, the head read whole, until the response's body is dropped), and
/// how many have ended: one atomic word, the count under way in its low
/// half and the ended in its high half, so a request's end is one atomic
/// step.
#[derive(Clone, Default)]
pub(super) struct Busy(Arc<AtomicU64>);

/// One request ended, none under way any more: added at a request's end.
const ENDED_ONE: u64 = (1 << 32) - 1;

impl Busy {
    pub(super) fn start(&self) -> Started {
        self.0.fetch_add(1, Ordering::SeqCst);
        Started(self.clone())
    }

    /// The word: compare two to see whether requests ended in between.
    fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    pub(super) fn idle(&self) -> bool {
        under_way(self.now()) == 0
    }
}

fn under_way(word: u64) -> u64 {
    word & 0xFFFF_FFFF
}

/// One request under way, until dropped.
pub(super) struct Started(Busy);

impl Drop for Started {
    fn drop(&mut self) {
        (self.0).0.fetch_add(ENDED_ONE, Ordering::SeqCst);
    }
}

/// The header read timeout, watched by ticks: a connection is ready for a
/// head from its start and from each request's end; one that has had no
/// request under way for more than `WATCH_TICKS` ticks of
/// `timeout / WATCH_TICKS` (the tick that sees a request ended the first
/// of them) has not sent a whole head within `timeout` of its start or
/// its last request's end (and is closed within an eighth more). A request under way is the body's
/// timeouts' business, never this one's.
pub(super) struct HeadWatch {
    pub(super) tick: Duration,
    last: u64,
    quiet: u32,
}

/// Ticks per header read timeout: the watch closes a connection between
/// the timeout and an eighth more.
const WATCH_TICKS: u32 = 8;

impl HeadWatch {
    pub(super) fn new(timeout: Duration, busy: &Busy) -> Self {
        Self {
            tick: (timeout / WATCH_TICKS).max(Duration::from_millis(1)),
            last: busy.now(),
            quiet: 0,
        }
    }

    /// One tick: whether the connection has waited too long for a head.
    ///
    /// The tick that sees a request ended (and none under way) counts as
    /// the first quiet one: the end came within the tick before it, so
    /// eight more quiet ticks close the connection after the timeout from
    /// that end and within an eighth more, as from the connection's start.
    pub(super) fn expired(&mut self, busy: &Busy) -> bool {
        let now = busy.now();
        if under_way(now) != 0 {
            self.quiet = 0;
        } else if now == self.last {
            self.quiet += 1;
        } else {
            self.quiet = 1;
        }
        self.last = now;
        self.quiet > WATCH_TICKS
    }
}

/// A response's body, holding its request [`Started`] until it is dropped.
pub(super) struct Tracked {
    body: axum::body::Body,
    _started: Started,
}

impl Tracked {
    pub(super) fn new(body: axum::body::Body, started: Started) -> Self {
        Self {
            body,
            _started: started,
        }
    }
}

impl hyper::body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    #[inline]
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks_to_expire(watch: &mut HeadWatch, busy: &Busy) -> u32 {
        (1..=100).find(|_| watch.expired(busy)).unwrap_or(0)
    }

    /// Idle from its start: closed on the ninth tick of an eighth of the
    /// timeout, so after the timeout and before an eighth more.
    #[test]
    fn an_idle_connection_expires_after_the_timeout_and_not_before() {
        let busy = Busy::default();
        let mut watch = HeadWatch::new(Duration::from_secs(8), &busy);
        assert_eq!(watch.tick, Duration::from_secs(1));
        assert_eq!(ticks_to_expire(&mut watch, &busy), WATCH_TICKS + 1);
    }

    #[test]
    fn a_request_under_way_never_expires_and_its_end_starts_the_count_again() {
        let busy = Busy::default();
        let mut watch = HeadWatch::new(Duration::from_secs(8), &busy);
        for _ in 0..5 {
            assert!(!watch.expired(&busy));
        }
        let started = busy.start();
        for _ in 0..100 {
            assert!(!watch.expired(&busy), "a request under way");
        }
        assert!(!busy.idle());
        drop(started);
        assert!(busy.idle());
        // The tick that sees the end is the first quiet one.
        assert!(!watch.expired(&busy));
        assert_eq!(ticks_to_expire(&mut watch, &busy), WATCH_TICKS);
    }

    /// A request that ends anywhere between two ticks (the timeout's time
    /// starts when its answer is written): the connection is closed after
    /// the timeout from that end and at most an eighth later, never the
    /// quarter later it was when the tick that saw the end counted for
    /// nothing.
    #[test]
    fn a_keep_alive_connection_idle_after_an_answer_closes_within_an_eighth_more() {
        let timeout = Duration::from_secs(8);
        let busy = Busy::default();
        let mut watch = HeadWatch::new(timeout, &busy);
        let tick = watch.tick;
        let started = busy.start();
        for _ in 0..3 {
            assert!(!watch.expired(&busy));
        }
        // The last tick with the request under way is at 3 ticks; the end
        // comes after it (just after, or just before the next tick).
        let last_busy_tick = tick * 3;
        drop(started);
        let more = ticks_to_expire(&mut watch, &busy);
        let closed_at = last_busy_tick + tick * more;
        for ended_at in [
            last_busy_tick + Duration::from_nanos(1),
            last_busy_tick + tick - Duration::from_nanos(1),
        ] {
            let idle = closed_at - ended_at;
            assert!(
                idle > timeout,
                "closed {idle:?} after the end, before {timeout:?}"
            );
            assert!(
                idle <= timeout + timeout / 8,
                "closed {idle:?} after the end, more than an eighth past {timeout:?}"
            );
        }
    }

    /// A request that starts and ends between two ticks (a keep-alive
    /// client's next request) is progress: the word differs.
    #[test]
    fn a_request_between_two_ticks_is_progress() {
        let busy = Busy::default();
        let mut watch = HeadWatch::new(Duration::from_millis(80), &busy);
        for _ in 0..WATCH_TICKS {
            assert!(!watch.expired(&busy));
        }
        drop(busy.start());
        assert!(!watch.expired(&busy), "a request ended since the last tick");
        assert_eq!(ticks_to_expire(&mut watch, &busy), WATCH_TICKS);
    }

    #[test]
    fn a_tiny_timeout_ticks_every_millisecond() {
        let busy = Busy::default();
        let watch = HeadWatch::new(Duration::from_micros(10), &busy);
        assert_eq!(watch.tick, Duration::from_millis(1));
    }
}
