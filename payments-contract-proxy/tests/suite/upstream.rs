//! A deliberately deviant upstream: a small axum app on a loopback port
//! whose every answer the test scripts (status, headers, raw body bytes, a
//! delay, a body that stalls or breaks off, or a connection dropped
//! without a byte of answer), and which keeps what it received so a test
//! can check what the proxy forwarded. `rig.rs` puts a proxy in front of
//! it.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::serve::{IncomingStream, Listener};
use axum::{Extension, Router};
use bytes::Bytes;
use futures::StreamExt as _;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::rig::{failure, ok};

/// How the scripted answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The whole body, then done.
    Whole,
    /// The head and the body's first bytes, then nothing more, ever.
    Stall,
    /// The head and the body's first bytes, then the connection breaks.
    BreakOff,
    /// No answer at all: the connection is closed before a byte is written.
    Drop,
}

/// One scripted answer of the upstream.
#[derive(Debug, Clone)]
pub struct Canned {
    status: StatusCode,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
    delay: Option<Duration>,
    /// Answers only once this is notified (the request is recorded first).
    held: Option<Arc<tokio::sync::Notify>>,
    ending: Ending,
}

impl Canned {
    /// `status` with these raw body bytes and no header of its own (not
    /// even `Content-Type`).
    pub fn raw(status: u16, body: impl Into<Bytes>) -> Self {
        Self {
            status: StatusCode::from_u16(status).expect("a valid HTTP status in the script"),
            headers: Vec::new(),
            body: body.into(),
            delay: None,
            held: None,
            ending: Ending::Whole,
        }
    }

    /// `status` with `body` as JSON (`Content-Type: application/json`).
    pub fn json(status: u16, body: &Value) -> Self {
        Self::raw(status, body.to_string()).header("content-type", "application/json")
    }

    /// 200 with the success envelope around `data`.
    pub fn ok(data: Value) -> Self {
        Self::json(200, &ok(data))
    }

    /// A failure envelope with `code` at `status`.
    pub fn failure(status: u16, code: &str) -> Self {
        Self::json(status, &failure(code))
    }

    /// Closes the connection without answering (after reading the whole
    /// request): not one byte of a response is written.
    pub fn drop_connection() -> Self {
        Self {
            ending: Ending::Drop,
            ..Self::raw(200, Bytes::new())
        }
    }

    /// Adds a header (appended: call twice for a repeated header).
    pub fn header(self, name: &str, value: &str) -> Self {
        self.header_bytes(name, value.as_bytes())
    }

    /// Adds a header whose value is raw bytes (obs-text and all).
    pub fn header_bytes(mut self, name: &str, value: &[u8]) -> Self {
        self.headers.push((
            HeaderName::from_bytes(name.as_bytes()).expect("a valid header name in the script"),
            HeaderValue::from_bytes(value).expect("a valid header value in the script"),
        ));
        self
    }

    /// Waits this long before answering (the request is recorded first).
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Waits for `release` to be notified before answering (the request
    /// is recorded first): a test decides when, on no clock at all.
    pub fn held_until(mut self, release: Arc<tokio::sync::Notify>) -> Self {
        self.held = Some(release);
        self
    }

    /// Sends the head and the body bytes, then never ends the body.
    pub fn then_stall(mut self) -> Self {
        self.ending = Ending::Stall;
        self
    }

    /// Sends the head and the body bytes, then breaks the connection
    /// mid-body.
    pub fn then_break_off(mut self) -> Self {
        self.ending = Ending::BreakOff;
        self
    }

    /// The answer's status.
    pub fn status(&self) -> u16 {
        self.status.as_u16()
    }

    /// The answer's body bytes.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The answer's headers, in the order scripted.
    pub fn headers(&self) -> &[(HeaderName, HeaderValue)] {
        &self.headers
    }
}

/// A request as the upstream received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// Method.
    pub method: Method,
    /// Path, raw (as on the request line).
    pub path: String,
    /// Query, raw.
    pub query: Option<String>,
    /// Headers, every value (repeated ones in order).
    pub headers: HeaderMap,
    /// Body bytes, whole.
    pub body: Bytes,
}

impl Received {
    /// Every value of header `name`, as bytes, in order.
    pub fn values(&self, name: &str) -> Vec<Vec<u8>> {
        self.headers
            .get_all(name)
            .iter()
            .map(|v| v.as_bytes().to_vec())
            .collect()
    }
}

/// The script: answers still to give, in order, and what was received.
#[derive(Debug)]
struct Script {
    answers: VecDeque<Canned>,
    received: Vec<Received>,
    /// How many were received, for a test that waits for the next.
    arrived: tokio::sync::watch::Sender<usize>,
}

impl Default for Script {
    fn default() -> Self {
        Self {
            answers: VecDeque::new(),
            received: Vec::new(),
            arrived: tokio::sync::watch::Sender::new(0),
        }
    }
}

type Shared = Arc<Mutex<Script>>;

fn lock(script: &Shared) -> std::sync::MutexGuard<'_, Script> {
    script.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a request the test did not script is answered: loud in any
/// assertion on status or body.
const UNSCRIPTED: &str = "the deviant upstream has no scripted answer left";

/// The flag that makes one connection fail its next write (so hyper closes
/// it without a byte of answer).
#[derive(Debug, Clone, Default)]
struct Cut(Arc<AtomicBool>);

/// A TCP stream whose writes fail once its connection was cut.
#[derive(Debug)]
struct CuttableStream {
    stream: TcpStream,
    cut: Cut,
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl CuttableStream {
    fn is_cut(&self) -> bool {
        self.cut.0.load(Ordering::SeqCst)
    }
}

fn cut_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the script dropped this connection",
    )
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A loopback listener whose connections can be cut.
#[derive(Debug)]
struct CuttableListener(TcpListener);

impl Listener for CuttableListener {
    type Io = CuttableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    let io = CuttableStream {
                        stream,
                        cut: Cut::default(),
                    };
                    return (io, addr);
                }
                // Out of descriptors or the like: transient, keep accepting.
                Err(_) => tokio::task::yield_now().await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// Answers every request (any method, any path) with the next scripted
/// answer, after recording it.
async fn answer(
    State(script): State<Shared>,
    Extension(cut): Extension<Cut>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let canned = {
        let mut script = lock(&script);
        script.received.push(Received {
            method: parts.method.clone(),
            path: parts.uri.path().to_owned(),
            query: parts.uri.query().map(str::to_owned),
            headers: parts.headers.clone(),
            body,
        });
        let arrived = script.received.len();
        script.arrived.send_replace(arrived);
        script.answers.pop_front()
    };
    let Some(canned) = canned else {
        return (StatusCode::INTERNAL_SERVER_ERROR, UNSCRIPTED).into_response();
    };
    if let Some(release) = &canned.held {
        release.notified().await;
    }
    // Only on tokio's paused clock (a virtual wait), as the tests use it.
    if let Some(delay) = canned.delay {
        tokio::time::sleep(delay).await;
    }
    let body = match canned.ending {
        Ending::Whole => Body::from(canned.body),
        Ending::Drop => {
            cut.0.store(true, Ordering::SeqCst);
            return StatusCode::OK.into_response();
        }
        Ending::Stall => {
            let first = futures::stream::once(async move { Ok::<_, io::Error>(canned.body) });
            Body::from_stream(first.chain(futures::stream::pending()))
        }
        Ending::BreakOff => {
            let first = futures::stream::once(async move { Ok::<_, io::Error>(canned.body) });
            let broken = futures::stream::once(async {
                Err::<Bytes, _>(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the script broke off this answer",
                ))
            });
            Body::from_stream(first.chain(broken))
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() = canned.status;
    for (name, value) in canned.headers {
        response.headers_mut().append(name, value);
    }
    response
}

/// The deviant upstream, on `127.0.0.1:0`.
#[derive(Debug)]
pub struct Upstream {
    addr: SocketAddr,
    script: Shared,
    task: JoinHandle<()>,
}

impl Upstream {
    /// Starts an upstream with nothing scripted.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port for the upstream");
        let addr = listener.local_addr().expect("the upstream's address");
        let script = Shared::default();
        let router = Router::new().fallback(answer).with_state(script.clone());
        let make = tower::service_fn(move |incoming: IncomingStream<'_, CuttableListener>| {
            let router = router.clone().layer(Extension(incoming.io().cut.clone()));
            async move { Ok::<_, Infallible>(router) }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(CuttableListener(listener), make).await;
        });
        Self { addr, script, task }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `127.0.0.1:PORT`: what `Host` must name.
    pub fn authority(&self) -> String {
        self.addr.to_string()
    }

    /// Queues the next answer.
    pub fn push(&self, canned: Canned) {
        lock(&self.script).answers.push_back(canned);
    }

    /// Everything received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.script).received.clone()
    }

    /// The only request received so far.
    pub fn only_request(&self) -> Received {
        let received = self.received();
        assert_eq!(
            received.len(),
            1,
            "the upstream must have received exactly one request: {:?}",
            received
                .iter()
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<_>>()
        );
        received
            .into_iter()
            .next()
            .expect("exactly one, just checked")
    }

    /// How many requests were received.
    pub fn count(&self) -> usize {
        lock(&self.script).received.len()
    }

    /// Waits until `n` requests were received (however slow their
    /// answers are scripted to be).
    pub async fn until_received(&self, n: usize) {
        let mut arrived = lock(&self.script).arrived.subscribe();
        arrived
            .wait_for(|count| *count >= n)
            .await
            .expect("the script outlives this upstream's handle");
    }

    /// How many scripted answers are still unused.
    pub fn unused(&self) -> usize {
        lock(&self.script).answers.len()
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}
