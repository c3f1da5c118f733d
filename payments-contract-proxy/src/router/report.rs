//! `GET /_proxy/report`: the running summary, or the exchanges as JUnit
//! or SARIF streamed as they are written.
//!
//! A long run's JUnit or SARIF is hundreds of megabytes (200,000 findings
//! of up to 2 KiB each); it is never built whole. The exchanges to write
//! are fixed at the request (the trail only grows: those judged later are
//! not in it). The writer runs on a blocking thread, reading the trail a
//! chunk at a time, the judge held only while a chunk is copied, never
//! while the client reads, and hands what it wrote to the response body
//! 64 KiB at a time through a channel of a few chunks: a slow client slows
//! the writer, never the judging of exchanges, and the proxy holds a few
//! hundred kilobytes for the request whatever the document's size. The
//! document is the same, byte for byte, as `--junit` and `--sarif` write
//! at the stop.
//!
//! The writer's thread is one of the runtime's blocking pool: a client
//! that stops reading (the connection kept open) would hold it for good.
//! A piece the client does not take within [`STALL`] ends the writer
//! (the client sees the body broken off, as for any other write error),
//! and at most [`AT_ONCE`] writers run at once: another request is
//! answered 503 with `Retry-After`.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::IntoResponse as _;
use bytes::Bytes;
use payments_serve::ApiError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use crate::state::ProxyState;
use crate::trail::{CaseView, Cases};

/// The bytes of each piece of the body sent.
const PIECE: usize = 64 * 1024;
/// The pieces written ahead of the client.
const AHEAD: usize = 4;
/// About the bytes of exchanges copied out of the trail at once.
const COPIED: usize = 64 * 1024;
/// How long a piece may wait for the client to take it before the writer
/// stops (the client sees the body broken off).
pub(crate) const STALL: Duration = Duration::from_secs(30);
/// The JUnit or SARIF reports written at once; another request is
/// answered 503.
pub(crate) const AT_ONCE: usize = 4;
/// The `Retry-After` of that 503, in seconds.
const RETRY_AFTER: &str = "5";

/// The report streams a proxy runs: at most so many at once, each writer
/// stopped when its client stalls for so long ([`AT_ONCE`], [`STALL`]).
#[derive(Debug, Clone)]
pub(crate) struct Streams {
    permits: Arc<Semaphore>,
    stall: Duration,
}

impl Streams {
    /// At most `at_once` writers, each stopped after `stall` without
    /// progress.
    pub(crate) fn new(at_once: usize, stall: Duration) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(at_once)),
            stall,
        }
    }
}

impl Default for Streams {
    fn default() -> Self {
        Self::new(AT_ONCE, STALL)
    }
}

/// 503 with `Retry-After`: as many reports as the proxy writes at once
/// are being written.
fn busy() -> axum::response::Response {
    let mut response = ApiError::new(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        payments_serve::ErrorCode::RateLimited,
        format!(
            "{AT_ONCE} reports are being streamed already, the most at once; retry after the time in Retry-After"
        ),
    )
    .into_response();
    response.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static(RETRY_AFTER),
    );
    response
}

/// `GET /_proxy/report`: the running summary as an envelope; with
/// `?format=junit` the exchanges as JUnit XML, `?format=sarif` the findings
/// as SARIF 2.1.0 (what `--junit` and `--sarif` write at the stop).
pub(super) async fn report(
    axum::extract::State(proxy): axum::extract::State<ProxyState>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
    axum::Extension(streams): axum::Extension<Streams>,
) -> axum::response::Response {
    let format = query.as_deref().and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "format")
            .map(|(_, v)| v.into_owned())
    });
    let (content_type, format) = match format.as_deref() {
        None | Some("json") => return payments_serve::success(proxy.summary(), None),
        Some("junit") => ("application/xml; charset=utf-8", Format::Junit),
        Some("sarif") => ("application/sarif+json", Format::Sarif),
        Some(_) => {
            return ApiError::validation("format must be json, junit or sarif").into_response();
        }
    };
    let Ok(permit) = Arc::clone(&streams.permits).try_acquire_owned() else {
        return busy();
    };
    let pieces = (PIECE, COPIED, streams.stall);
    let body = Body::from_stream(streamed(proxy, format, pieces, Some(permit)));
    ([(axum::http::header::CONTENT_TYPE, content_type)], body).into_response()
}

/// The documents the report streams.
#[derive(Debug, Clone, Copy)]
enum Format {
    Junit,
    Sarif,
}

/// The exchanges judged so far (their number fixed at the start), read
/// from the shared trail a chunk at a time: the judge is held while a
/// chunk of about `copied` bytes is copied out, and let go before the
/// chunk is written.
struct Shared {
    proxy: ProxyState,
    len: usize,
    copied: usize,
}

impl Cases for Shared {
    fn each<E>(
        &self,
        keep: impl Fn(&CaseView<'_>) -> bool,
        mut each: impl FnMut(&CaseView<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut at = 0;
        while at < self.len {
            // The guard is a temporary: dropped at the end of the line.
            let (chunk, next) = self
                .proxy
                .lock()
                .trail
                .copy_from(at, self.len, self.copied, &keep);
            at = next;
            chunk.cases().try_for_each(|case| each(&case))?;
        }
        Ok(())
    }
}

/// What the writer writes, in pieces of `piece` bytes sent over a channel
/// (blocking the writer's thread while the channel is full, at most
/// `stall` for each piece).
struct Pieces {
    buffer: Vec<u8>,
    piece: usize,
    stall: Duration,
    sender: mpsc::Sender<io::Result<Bytes>>,
}

/// Why a piece was not sent.
enum Unsent {
    /// The client went away.
    Closed,
    /// The client took nothing for the whole wait.
    Stalled,
}

/// Sends `item` on this (blocking) thread, waiting at most `stall` for
/// room: the thread parked, woken by the receiver taking a piece. No
/// runtime timer: it works as the runtime shuts down too.
fn send_within<T>(sender: &mpsc::Sender<T>, item: T, stall: Duration) -> Result<(), Unsent> {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let start = Instant::now();
    let mut reserve = std::pin::pin!(sender.reserve());
    loop {
        match reserve.as_mut().poll(&mut context) {
            Poll::Ready(Ok(permit)) => {
                permit.send(item);
                return Ok(());
            }
            Poll::Ready(Err(_)) => return Err(Unsent::Closed),
            Poll::Pending => {
                let waited = start.elapsed();
                if waited >= stall {
                    return Err(Unsent::Stalled);
                }
                std::thread::park_timeout(stall - waited);
            }
        }
    }
}

impl Pieces {
    fn send(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.buffer, Vec::with_capacity(self.piece));
        send_within(&self.sender, Ok(Bytes::from(piece)), self.stall).map_err(|unsent| match unsent
        {
            Unsent::Closed => io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"),
            Unsent::Stalled => io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client took no piece of the report for {}",
                    humantime::format_duration(self.stall)
                ),
            ),
        })
    }
}

impl Write for Pieces {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if !self.buffer.is_empty() && self.buffer.len() + bytes.len() > self.piece {
            self.send()?;
        }
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= self.piece {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

/// The document, written on a blocking thread from the exchanges judged
/// so far, as a stream of pieces of about `piece` bytes (`pieces`: the
/// bytes of a piece, of a chunk copied out of the trail, and the longest
/// wait for the client to take a piece). A writer's error ends the stream
/// with it (the client sees the body broken off, never a short document
/// as if whole); a client that goes away, or takes no piece for the
/// wait, stops the writer. `permit` is held until the writer ends.
fn streamed(
    proxy: ProxyState,
    format: Format,
    (piece, copied, stall): (usize, usize, Duration),
    permit: Option<OwnedSemaphorePermit>,
) -> impl futures::Stream<Item = io::Result<Bytes>> + Send + 'static {
    let (sender, receiver) = mpsc::channel(AHEAD);
    let len = proxy.lock().trail.len();
    let strict = proxy.config.strict;
    let cases = Shared { proxy, len, copied };
    // Set when the whole document went into the channel: a stream that
    // ends without it was broken off.
    let whole = Arc::new(AtomicBool::new(false));
    let finished = Arc::clone(&whole);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let mut out = Pieces {
            buffer: Vec::with_capacity(piece),
            piece,
            stall,
            sender,
        };
        let written = match format {
            Format::Junit => crate::junit::write_junit(&cases, &mut out, strict),
            Format::Sarif => crate::sarif::write_sarif(&cases, &mut out, None),
        }
        .and_then(|()| out.flush());
        match written {
            Ok(()) => finished.store(true, Ordering::Release),
            Err(e) => {
                match e.kind() {
                    // Nobody to tell when the client went away.
                    io::ErrorKind::BrokenPipe => {}
                    io::ErrorKind::TimedOut => {
                        tracing::warn!(error = %e, "the report was broken off");
                    }
                    _ => tracing::error!(error = %e, "the report could not be written"),
                }
                // Never waited on: with no room (a stalled client) the
                // stream's end says it was broken off.
                let _ = out.sender.try_send(Err(e));
            }
        }
    });
    futures::stream::unfold(Some(receiver), move |receiver| {
        let whole = Arc::clone(&whole);
        async move {
            let mut receiver = receiver?;
            match receiver.recv().await {
                Some(Ok(piece)) => Some((Ok(piece), Some(receiver))),
                Some(Err(e)) => Some((Err(e), None)),
                None if whole.load(Ordering::Acquire) => None,
                None => Some((Err(io::Error::other("the report's writer stopped")), None)),
            }
        }
    })
}

#[cfg(test)]
mod tests;
