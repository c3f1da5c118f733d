//! Whether a request's body was read to its end by the time it is
//! answered, for the routes outside the `/api/` guard (which tells it
//! itself: `early`). An answer made with the body unread says
//! `Connection: close` ([`super::closing`]): the HTTP library then closes
//! the connection, and without a word a client that sent the body after a
//! pause, or reused the connection for its next request, met it closed
//! (a removed sandbox's 404, an unknown path's, a 405, a 401 or 403 on the
//! admin side, a 415, a 413).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::HttpBody;
use axum::http::Request;
use axum::response::Response;
use hyper::body::{Frame, SizeHint};

/// A request body that notes when it is read to its end.
pub(crate) struct Watched<B> {
    inner: B,
    /// Set once the body has ended; `None`: not watched (it had ended
    /// already, or the guard answers the request).
    ended: Option<Arc<AtomicBool>>,
}

/// What [`watch`] hands back to settle the answer with.
pub(crate) struct Unread(Option<Arc<AtomicBool>>);

/// `req` with its body watched, unless it has none left to read or the
/// `/api/` guard answers it (its path, after a sandbox's prefix, is
/// `/api/…`): the guard reads its bodies itself, and its hot path takes
/// no allocation for this.
pub(crate) fn watch<B: HttpBody>(req: Request<B>) -> (Request<Watched<B>>, Unread) {
    let watched = !req.uri().path().starts_with("/api/") && !req.body().is_end_stream();
    let ended = watched.then(|| Arc::new(AtomicBool::new(false)));
    let unread = Unread(ended.clone());
    (req.map(|inner| Watched { inner, ended }), unread)
}

impl Unread {
    /// `response`, saying `Connection: close` when the body it answers was
    /// left unread (RFC 9110, section 10.1.1).
    pub(crate) fn settle(self, response: Response) -> Response {
        match self.0 {
            Some(ended) if !ended.load(Ordering::Acquire) => super::closing(response),
            _ => response,
        }
    }
}

impl<B> Watched<B> {
    fn note_end(&self) {
        if let Some(ended) = &self.ended {
            ended.store(true, Ordering::Release);
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
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(None) => self.note_end(),
            Poll::Ready(Some(Ok(_))) if self.inner.is_end_stream() => self.note_end(),
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let ended = self.inner.is_end_stream();
        if ended {
            self.note_end();
        }
        ended
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use axum::body::{Body, Bytes};
    use axum::response::IntoResponse as _;
    use http_body_util::BodyExt as _;

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
        assert!(req.body().ended.is_none() && unread.0.is_none());
    }
}
