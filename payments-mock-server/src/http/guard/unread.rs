//! Whether a request's body was read to its end by the time it is
//! answered, for the routes outside the `/api/` guard (which tells it
//! itself: `early`). An answer made with the body unread says
//! `Connection: close` ([`super::closing`]): the HTTP library then closes
//! the connection, and without a word a client that sent the body after a
//! pause, or reused the connection for its next request, met it closed
//! (a removed sandbox's 404, an unknown path's, a 405, a 401 or 403 on the
//! admin side, a 415, a 413).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::HttpBody;
use axum::http::Request;
use axum::response::Response;
use futures_util::FutureExt as _;
use http_body_util::BodyExt as _;
use hyper::body::{Frame, SizeHint};

/// What a watched body leaves behind for [`Unread::settle`].
struct Watch<B> {
    /// Set once the body has ended.
    ended: AtomicBool,
    /// The body, left here unended when the handler dropped it.
    left: Mutex<Option<B>>,
}

/// A request body that notes when it is read to its end, and leaves
/// itself, unended, to [`Unread::settle`] when dropped.
pub(crate) struct Watched<B> {
    /// `None` once dropped into the watch.
    inner: Option<B>,
    /// `None`: not watched (it had ended already, or the guard answers
    /// the request).
    watch: Option<Arc<Watch<B>>>,
}

/// What [`watch`] hands back to settle the answer with.
pub(crate) struct Unread<B>(Option<Arc<Watch<B>>>);

/// `req` with its body watched, unless it has none left to read or the
/// `/api/` guard answers it (its path, after a sandbox's prefix, is
/// `/api/…`): the guard reads its bodies itself, and its hot path takes
/// no allocation for this.
pub(crate) fn watch<B: HttpBody>(req: Request<B>) -> (Request<Watched<B>>, Unread<B>) {
    let watched = !req.uri().path().starts_with("/api/") && !req.body().is_end_stream();
    let watch = watched.then(|| {
        Arc::new(Watch {
            ended: AtomicBool::new(false),
            left: Mutex::new(None),
        })
    });
    let unread = Unread(watch.clone());
    (
        req.map(|inner| Watched {
            inner: Some(inner),
            watch,
        }),
        unread,
    )
}

impl<B: HttpBody + Unpin> Unread<B> {
    /// `response`, saying `Connection: close` when the body it answers was
    /// left unread (RFC 9110, section 10.1.1). A body the handler did not
    /// read to its end is polled once, without waiting: one already at its
    /// end (an empty chunked body, whose last chunk came with the head)
    /// keeps the connection.
    pub(crate) fn settle(self, response: Response) -> Response {
        match self.0 {
            Some(watch) if !watch.ended.load(Ordering::Acquire) && !at_end(&watch) => {
                super::closing(response)
            }
            _ => response,
        }
    }
}

/// Whether the body the handler left is at its end now, with nothing
/// more in it: polled once, never waited for. A body still held elsewhere
/// is not.
fn at_end<B: HttpBody + Unpin>(watch: &Watch<B>) -> bool {
    let left = watch.left.lock().ok().and_then(|mut left| left.take());
    let Some(mut body) = left else {
        return false;
    };
    if body.is_end_stream() {
        return true;
    }
    // A frame of data is a body the handler did not read: it closes.
    matches!(body.frame().now_or_never(), Some(None))
}

impl<B> Watched<B> {
    fn note_end(&self) {
        if let Some(watch) = &self.watch {
            watch.ended.store(true, Ordering::Release);
        }
    }
}

impl<B> Drop for Watched<B> {
    fn drop(&mut self) {
        if let Some(watch) = &self.watch
            && !watch.ended.load(Ordering::Acquire)
            && let Ok(mut left) = watch.left.lock()
        {
            *left = self.inner.take();
        }
    }
}

impl<B: HttpBody + Unpin> HttpBody for Watched<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(&mut *inner).poll_frame(cx);
        let ended = match &polled {
            Poll::Ready(None) => true,
            Poll::Ready(Some(Ok(_))) => inner.is_end_stream(),
            _ => false,
        };
        if ended {
            self.note_end();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let ended = self.inner.as_ref().is_none_or(HttpBody::is_end_stream);
        if ended {
            self.note_end();
        }
        ended
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint)
    }
}

#[cfg(test)]
mod tests {
    use axum::body::{Body, Bytes};
    use axum::response::IntoResponse as _;
    use futures_util::StreamExt as _;

    use super::*;

    fn answer() -> Response {
        "ok".into_response()
    }

    fn closes(response: &Response) -> bool {
        response
            .headers()
            .get(axum::http::header::CONNECTION)
            .is_some_and(|v| v == "close")
    }

    fn post(path: &str, body: &'static str) -> Request<Body> {
        Request::post(path)
            .body(Body::from(Bytes::from_static(body.as_bytes())))
            .expect("a request")
    }

    #[tokio::test]
    async fn an_answer_with_the_body_unread_says_it_closes() {
        let (req, unread) = watch(post("/nope", "{}"));
        drop(req);
        assert!(closes(&unread.settle(answer())));
    }

    #[tokio::test]
    async fn an_answer_with_the_body_read_keeps_the_connection() {
        let (req, unread) = watch(post("/_mock/clock/advance", "{\"seconds\":1}"));
        let read = req.into_body().collect().await.expect("read").to_bytes();
        assert_eq!(read, "{\"seconds\":1}");
        assert!(!closes(&unread.settle(answer())));
    }

    #[tokio::test]
    async fn no_body_and_the_guards_requests_are_not_watched() {
        let (req, unread) = watch(post("/nope", ""));
        drop(req);
        assert!(!closes(&unread.settle(answer())), "nothing to read");
        let (req, unread) = watch(post("/api/payments/initiate", "{}"));
        assert!(req.body().watch.is_none() && unread.0.is_none());
    }

    /// A stream of `chunks` (never at its end until read: as a chunked
    /// body), then held open when `open`.
    fn streamed(chunks: &'static [&'static str], open: bool) -> Request<Body> {
        let sent = futures_util::stream::iter(
            chunks
                .iter()
                .map(|c| Ok::<_, std::io::Error>(Bytes::from_static(c.as_bytes()))),
        );
        let body = if open {
            Body::from_stream(sent.chain(futures_util::stream::pending()))
        } else {
            Body::from_stream(sent)
        };
        Request::post("/_mock/reset").body(body).expect("a request")
    }

    /// Issue: an empty chunked body (its last chunk already come) sent to
    /// a handler that takes no body cost the connection: unread, as far as
    /// `is_end_stream` said. At its end when polled once: kept.
    #[tokio::test]
    async fn a_body_left_at_its_end_keeps_the_connection() {
        for chunks in [&[][..], &["{}"][..]] {
            let (req, unread) = watch(streamed(chunks, false));
            assert!(req.body().watch.is_some(), "watched: not known to end");
            drop(req);
            if chunks.is_empty() {
                assert!(!closes(&unread.settle(answer())), "an empty body");
            } else {
                // Data the handler did not read: it closes.
                assert!(closes(&unread.settle(answer())), "{chunks:?}");
            }
        }
    }

    #[tokio::test]
    async fn a_body_left_still_coming_or_still_held_says_it_closes() {
        let (req, unread) = watch(streamed(&[], true));
        drop(req);
        assert!(closes(&unread.settle(answer())), "still coming");
        // Held past the answer: not polled from under its holder.
        let (req, unread) = watch(streamed(&[], false));
        assert!(closes(&unread.settle(answer())), "still held");
        drop(req);
    }
}
