//! Bodies on the way through: read whole up to [`JUDGE_LIMIT`] or
//! streamed past it, each part within the upstream timeout, and the
//! request body's progress towards the upstream (which the timeout for
//! its answer counts from).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;
use hyper::body::{Body as _, Frame};

use super::JUDGE_LIMIT;

/// A body read up to [`JUDGE_LIMIT`]: whole, or its start and the rest
/// still to come.
pub(super) enum Read<S> {
    Whole(Bytes),
    Streaming { head: Bytes, rest: S },
}

/// Reads `stream` until it ends or passes the limit.
pub(super) async fn read_up_to<S, E>(mut stream: S) -> Result<Read<S>, E>
where
    S: futures::Stream<Item = Result<Bytes, E>> + Unpin,
{
    // The usual body is one chunk: kept as it came (`first`), copied into
    // `joined` only when a second one follows.
    let mut first = Bytes::new();
    let mut joined = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if first.is_empty() && joined.is_empty() {
            first = chunk;
        } else {
            if joined.is_empty() {
                joined.extend_from_slice(&std::mem::take(&mut first));
            }
            joined.extend_from_slice(&chunk);
        }
        if first.len() + joined.len() > JUDGE_LIMIT {
            let head = one(first, joined);
            return Ok(Read::Streaming { head, rest: stream });
        }
    }
    Ok(Read::Whole(one(first, joined)))
}

/// What [`read_up_to`] read: the one chunk, or the chunks joined (only
/// one of the two is ever non-empty).
fn one(first: Bytes, joined: BytesMut) -> Bytes {
    if joined.is_empty() {
        first
    } else {
        joined.freeze()
    }
}

/// A body that paused longer than the upstream timeout.
#[derive(Debug)]
pub(super) struct Paused(std::time::Duration);

impl std::fmt::Display for Paused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no data for {}", humantime::format_duration(self.0))
    }
}

impl std::error::Error for Paused {}

/// When the request body last moved towards the upstream (or when it was
/// handed over): the upstream timeout for its answer counts from there, so
/// a large body that keeps going out is never cut off, and an upstream
/// that stops reading it is. And whether the HTTP client took the body to
/// its end: until it did, the upstream cannot have had the whole request.
#[derive(Debug)]
pub(super) struct Progress {
    last: std::sync::Mutex<Instant>,
    whole: AtomicBool,
}

impl Progress {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            last: std::sync::Mutex::new(Instant::now()),
            whole: AtomicBool::new(false),
        })
    }

    fn touch(&self) {
        *self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
    }

    fn took_the_end(&self) {
        self.whole.store(true, Ordering::Release);
    }

    /// Whether the HTTP client took the request body to its end (a body
    /// without data: from the start). Until it did, some of the request
    /// never left the proxy, so an upstream that failed then cannot have
    /// carried it out; after, it may have (taken is not yet received).
    pub(super) fn took_whole(&self) -> bool {
        self.whole.load(Ordering::Acquire)
    }

    /// Completes once `timeout` passed without the body moving.
    pub(super) async fn overdue(&self, timeout: std::time::Duration) {
        loop {
            let last = *self
                .last
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // A deadline past the clock's range never comes.
            let Some(deadline) = last.checked_add(timeout) else {
                return std::future::pending().await;
            };
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline.into()).await;
        }
    }
}

/// The most of the request body the HTTP client is handed at once. A body
/// read whole is one frame: handed over at once, the client would hold all
/// of it before a byte went out, and [`Progress::took_whole`] would say
/// nothing of how much the upstream took. In slices the client holds at
/// most its write buffer (about 400 KiB) ahead of the socket.
const SLICE: usize = 64 * 1024;

/// The request body as it goes to the upstream, each frame noted in
/// [`Progress`] and handed on in slices of at most [`SLICE`] bytes; its
/// size (and so the request's framing) unchanged.
pub(super) struct Tracked {
    inner: Body,
    progress: Arc<Progress>,
    /// What is left of a frame larger than a slice (not copied).
    rest: Bytes,
    /// The bytes the request's `Content-Length` declares, when it does,
    /// less those handed on: at 0 the client has the whole body, though a
    /// streamed body has not said it ended (the client, which writes the
    /// declared length, then stops asking for more).
    left: Option<u64>,
}

impl Tracked {
    /// `declared`: the request's `Content-Length`, when it has one.
    pub(super) fn new(inner: Body, progress: Arc<Progress>, declared: Option<u64>) -> Self {
        if inner.is_end_stream() || declared == Some(0) {
            progress.took_the_end();
        }
        Self {
            inner,
            progress,
            rest: Bytes::new(),
            left: declared,
        }
    }

    /// The next slice of `rest`, noted as the end when it is.
    fn slice(&mut self) -> Bytes {
        let slice = if self.rest.len() > SLICE {
            self.rest.split_to(SLICE)
        } else {
            std::mem::take(&mut self.rest)
        };
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(slice.len() as u64);
        }
        if self.rest.is_empty() && (self.inner.is_end_stream() || self.left == Some(0)) {
            self.progress.took_the_end();
        }
        slice
    }
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        use std::task::Poll;
        let this = &mut *self;
        if !this.rest.is_empty() {
            this.progress.touch();
            return Poll::Ready(Some(Ok(Frame::data(this.slice()))));
        }
        let polled = std::pin::Pin::new(&mut this.inner).poll_frame(cx);
        if polled.is_ready() {
            this.progress.touch();
        }
        match polled {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => {
                    this.rest = data;
                    Poll::Ready(Some(Ok(Frame::data(this.slice()))))
                }
                Err(other) => Poll::Ready(Some(Ok(other))),
            },
            Poll::Ready(None) => {
                this.progress.took_the_end();
                Poll::Ready(None)
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = hyper::body::SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(rest));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(rest));
        }
        hint
    }
}

/// `stream`, each chunk of which must come within `idle`: a peer that
/// stops sending mid-body ends the body with an error instead of holding
/// the exchange open for ever. The whole body has no deadline (a large
/// one may take long); only silence does.
pub(super) fn idle_bounded<S, E>(
    stream: S,
    idle: std::time::Duration,
) -> impl futures::Stream<Item = Result<Bytes, axum::BoxError>> + Send + 'static
where
    S: futures::Stream<Item = Result<Bytes, E>> + Unpin + Send + 'static,
    E: Into<axum::BoxError>,
{
    futures::stream::unfold(Some(stream), move |state| async move {
        let mut stream = state?;
        match tokio::time::timeout(idle, stream.next()).await {
            Ok(Some(Ok(chunk))) => Some((Ok(chunk), Some(stream))),
            Ok(Some(Err(e))) => Some((Err(e.into()), None)),
            Ok(None) => None,
            Err(_) => Some((Err(axum::BoxError::from(Paused(idle))), None)),
        }
    })
}
