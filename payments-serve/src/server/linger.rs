//! A lingering close ([`Lingering`]), as nginx's `lingering_close`: a
//! connection the server closes (after an answer that says `Connection:
//! close`) has its sending side shut down first, then what the client
//! still sends is read and dropped, for at most [`LINGER_TIME`] and
//! [`LINGER_BYTES`], until the client closes its side. A socket closed
//! with unread data is reset, and a client still sending a request body
//! (a large one answered early, `413`, its rest never read) met the reset
//! under its write and could lose the answer waiting for it: the contract
//! proxy's HTTP client failed the write before reading the `413`, and
//! said the service closed the connection without answering. Lingering,
//! the client takes its answer and sees the end of the connection.
//!
//! The server's stop ends the lingering: a connection closed after its
//! answer once the stop has begun, or lingering when it begins, closes at
//! once (the stop never waits the [`LINGER_TIME`] out).

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;

/// How long, at most, what a client still sends is read and dropped after
/// the server shut its side of the connection down.
pub(super) const LINGER_TIME: Duration = Duration::from_secs(2);

/// How much, at most, is read and dropped then.
pub(super) const LINGER_BYTES: usize = 64 * 1024 * 1024;

/// What is read at once while lingering.
const LINGER_READ: usize = 16 * 1024;

/// A connection's byte stream that lingers at its close: its
/// `poll_shutdown` shuts the sending side down, then reads and drops what
/// comes until the client's end of input, an error, [`LINGER_TIME`] or
/// [`LINGER_BYTES`], or the server's stop, whichever is first. Hyper
/// shuts a connection down only when it closes it in order (after an
/// answer); one dropped without (an aborted request, the stop) closes at
/// once, as before.
pub(super) struct Lingering<S> {
    inner: S,
    /// Becomes true at the server's stop.
    stopping: watch::Receiver<bool>,
    /// Set once the sending side is shut down.
    linger: Option<Linger>,
}

struct Linger {
    until: Pin<Box<tokio::time::Sleep>>,
    /// Ready once the server's stop has begun.
    stop: Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    /// Bytes still to drop; 0 once done.
    left: usize,
}

impl<S> Lingering<S> {
    /// `inner`, lingering at its close until `stopping` says the server
    /// stops.
    pub(super) fn new(inner: S, stopping: watch::Receiver<bool>) -> Self {
        Self {
            inner,
            stopping,
            linger: None,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Lingering<S> {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Lingering<S> {
    #[inline]
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    #[inline]
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let linger = match &mut this.linger {
            Some(linger) => linger,
            None => {
                ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
                let mut stopping = this.stopping.clone();
                this.linger.insert(Linger {
                    until: Box::pin(tokio::time::sleep(LINGER_TIME)),
                    // Made only for a connection that lingers (one closed
                    // after an answer): what serving pays is unchanged.
                    stop: Box::pin(async move {
                        // A server gone (the sender dropped) stops too.
                        let _ = stopping.wait_for(|stop| *stop).await;
                    }),
                    left: LINGER_BYTES,
                })
            }
        };
        let mut buf = [0u8; LINGER_READ];
        while linger.left > 0 {
            if linger.until.as_mut().poll(cx).is_ready() || linger.stop.as_mut().poll(cx).is_ready()
            {
                break;
            }
            let most = linger.left.min(LINGER_READ);
            let mut read = ReadBuf::new(&mut buf[..most]);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                // The client's end of input, or its reset: done.
                Poll::Ready(Ok(())) if read.filled().is_empty() => break,
                Poll::Ready(Err(_)) => break,
                Poll::Ready(Ok(())) => linger.left -= read.filled().len(),
            }
        }
        linger.left = 0;
        Poll::Ready(Ok(()))
    }
}
