//! Bodies on the way through: read whole up to [`JUDGE_LIMIT`] or
//! streamed past it, each part within the upstream timeout, and the
//! request body's progress towards the upstream (which the timeout for
//! its answer counts from).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;

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
/// that stops reading it is.
#[derive(Debug)]
pub(super) struct Progress(std::sync::Mutex<Instant>);

impl Progress {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self(std::sync::Mutex::new(Instant::now())))
    }

    fn touch(&self) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
    }

    /// Completes once `timeout` passed without the body moving.
    pub(super) async fn overdue(&self, timeout: std::time::Duration) {
        loop {
            let last = *self
                .0
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

/// The request body as it goes to the upstream, each frame noted in
/// [`Progress`]; its size (and so the request's framing) unchanged.
pub(super) struct Tracked {
    pub(super) inner: Body,
    pub(super) progress: Arc<Progress>,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let polled = std::pin::Pin::new(&mut this.inner).poll_frame(cx);
        if polled.is_ready() {
            this.progress.touch();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
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
