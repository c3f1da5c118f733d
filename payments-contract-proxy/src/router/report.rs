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

use std::io::{self, Write};

use axum::body::Body;
use axum::response::IntoResponse as _;
use bytes::Bytes;
use payments_serve::ApiError;
use tokio::sync::mpsc;

use crate::state::ProxyState;
use crate::trail::{CaseView, Cases};

/// The bytes of each piece of the body sent.
const PIECE: usize = 64 * 1024;
/// The pieces written ahead of the client.
const AHEAD: usize = 4;
/// About the bytes of exchanges copied out of the trail at once.
const COPIED: usize = 64 * 1024;

/// `GET /_proxy/report`: the running summary as an envelope; with
/// `?format=junit` the exchanges as JUnit XML, `?format=sarif` the findings
/// as SARIF 2.1.0 (what `--junit` and `--sarif` write at the stop).
pub(super) async fn report(
    axum::extract::State(proxy): axum::extract::State<ProxyState>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
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
    let body = Body::from_stream(streamed(proxy, format, PIECE, COPIED));
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
/// (blocking the writer's thread while the channel is full).
struct Pieces {
    buffer: Vec<u8>,
    piece: usize,
    sender: mpsc::Sender<io::Result<Bytes>>,
}

impl Pieces {
    fn send(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.buffer, Vec::with_capacity(self.piece));
        self.sender
            .blocking_send(Ok(Bytes::from(piece)))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
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
/// so far, as a stream of pieces of about `piece` bytes. A writer's error
/// ends the stream with it (the client sees the body broken off, never a
/// short document as if whole); a client that goes away stops the writer.
fn streamed(
    proxy: ProxyState,
    format: Format,
    piece: usize,
    copied: usize,
) -> impl futures::Stream<Item = io::Result<Bytes>> + Send + 'static {
    let (sender, receiver) = mpsc::channel(AHEAD);
    let len = proxy.lock().trail.len();
    let strict = proxy.config.strict;
    let cases = Shared { proxy, len, copied };
    tokio::task::spawn_blocking(move || {
        let mut out = Pieces {
            buffer: Vec::with_capacity(piece),
            piece,
            sender,
        };
        let written = match format {
            Format::Junit => crate::junit::write_junit(&cases, &mut out, strict),
            Format::Sarif => crate::sarif::write_sarif(&cases, &mut out, None),
        }
        .and_then(|()| out.flush());
        if let Err(e) = written {
            if e.kind() != io::ErrorKind::BrokenPipe {
                tracing::error!(error = %e, "the report could not be written");
            }
            // Nobody to tell when the client went away.
            let _ = out.sender.blocking_send(Err(e));
        }
    });
    futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|piece| (piece, receiver))
    })
}

#[cfg(test)]
mod tests;
