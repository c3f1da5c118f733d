//! A deliberately deviant upstream: a small axum app on a loopback port
//! whose every answer the test scripts (status, headers, raw body bytes, a
//! delay, a body that stalls or breaks off, or a connection dropped
//! without a byte of answer), and which keeps what it received so a test
//! can check what the proxy forwarded. Beside it, a proxy in front of it
//! and a client that neither follows redirects nor decodes bodies.

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
use payments_mock_server::{Proxy, ProxyConfig, VERDICT_HEADER};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A merchant id the document accepts (a UUID).
pub const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

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
#[derive(Debug, Default)]
struct Script {
    answers: VecDeque<Canned>,
    received: Vec<Received>,
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
        script.answers.pop_front()
    };
    let Some(canned) = canned else {
        return (StatusCode::INTERNAL_SERVER_ERROR, UNSCRIPTED).into_response();
    };
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

/// What shapes a proxy in front of the upstream.
#[derive(Debug, Clone)]
pub struct Setup {
    /// A path prefix on the upstream URL (`/stage`), or empty.
    pub prefix: &'static str,
    /// `--enforce`.
    pub enforce: bool,
    /// `--upstream-timeout` (short, so a failing test does not hang).
    pub upstream_timeout: Duration,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            prefix: "",
            enforce: false,
            upstream_timeout: Duration::from_secs(10),
        }
    }
}

/// A proxy in front of `upstream` (a URL, maybe with a path prefix).
pub async fn proxy_in_front_of(upstream: &str, setup: &Setup) -> Proxy {
    let mut config = ProxyConfig::new(upstream.parse().expect("an upstream URL"));
    config.enforce = setup.enforce;
    config.upstream_timeout = setup.upstream_timeout;
    Proxy::start(config).await.expect("the proxy starts")
}

/// A client that neither follows redirects nor decodes compressed bodies.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .no_zstd()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("a reqwest client")
}

/// An answer as the application got it.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Every header.
    pub headers: HeaderMap,
    /// Body bytes, undecoded.
    pub body: Bytes,
}

impl Reply {
    /// Reads a response whole.
    pub async fn of(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.expect("the answer's body");
        Self {
            status,
            headers,
            body,
        }
    }

    /// `X-Contract-Verdict` (asserted to be there once).
    pub fn verdict(&self) -> &str {
        let values: Vec<&HeaderValue> = self.headers.get_all(VERDICT_HEADER).iter().collect();
        assert_eq!(values.len(), 1, "one {VERDICT_HEADER}: {:?}", self.headers);
        values[0].to_str().expect("a text verdict")
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "the body is JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The envelope's `errorCode`.
    pub fn code(&self) -> String {
        self.json()["errorCode"].as_str().unwrap_or("").to_owned()
    }
}

/// An upstream, a proxy in front of it, and a client.
#[derive(Debug)]
pub struct Rig {
    /// The scripted upstream.
    pub upstream: Upstream,
    /// The proxy.
    pub proxy: Proxy,
    /// The application's client.
    pub client: reqwest::Client,
}

impl Rig {
    /// With the defaults: no prefix, not enforcing, a 10 s timeout.
    pub async fn start() -> Self {
        Self::with(Setup::default()).await
    }

    /// With `setup`.
    pub async fn with(setup: Setup) -> Self {
        let upstream = Upstream::start().await;
        let proxy = proxy_in_front_of(&format!("{}{}", upstream.url(), setup.prefix), &setup).await;
        Self {
            upstream,
            proxy,
            client: client(),
        }
    }

    /// The proxy's URL of `path_and_query`.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.proxy.base_url())
    }

    /// Sends `method path` with `body` as JSON (or no body) through the
    /// proxy.
    pub async fn send(&self, method: &Method, path: &str, body: Option<&Value>) -> Reply {
        let mut request = self.client.request(method.clone(), self.url(path));
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        Reply::of(request.send().await.expect("the proxy answers")).await
    }

    /// Scripts `canned`, then sends `method path` with `body` through the
    /// proxy.
    pub async fn exchange(
        &self,
        method: &Method,
        path: &str,
        body: Option<&Value>,
        canned: Canned,
    ) -> Reply {
        self.upstream.push(canned);
        self.send(method, path, body).await
    }
}

/// A success envelope around `data`.
pub fn ok(data: Value) -> Value {
    json!({ "isSuccess": true, "errorCode": null, "message": null, "data": data })
}

/// A failure envelope.
pub fn failure(code: &str) -> Value {
    json!({ "isSuccess": false, "errorCode": code, "message": "refused", "data": null })
}

/// A valid initiate body (MYR left out).
pub fn initiate_body(reference: &str, amount: u64) -> Value {
    json!({
        "merchantId": MERCHANT, "referenceNo": reference, "amount": amount,
        "productCode": "TOPUP", "storeId": "S1",
    })
}

/// The initiate `data` the document shows for it.
pub fn initiate_data(id: &str, reference: &str, amount: u64) -> Value {
    json!({
        "transactionId": id, "referenceNo": reference, "status": "INITIATED",
        "amount": amount, "currencyCode": "MYR", "productCode": "TOPUP",
        "createdAt": "2026-11-22T08:15:30.123Z", "extraProperties": null,
    })
}

/// A status `data` (`amount` as JSON text, e.g. `"10.50"`).
pub fn status_data(id: &str, reference: &str, status: &str, amount: &str) -> Value {
    json!({
        "transactionId": id, "referenceNo": reference, "status": status,
        "amount": serde_json::from_str::<Value>(amount).expect("an amount as JSON text"),
        "productCode": "TOPUP", "createdAt": "2026-11-22T08:15:30.123Z",
        "lastModifiedAt": null, "providerReference": null, "message": null,
        "extraProperties": null,
    })
}

/// A confirm `data`.
pub fn confirm_data(id: &str, reference: &str, status: &str, amount: &str) -> Value {
    json!({
        "transactionId": id, "referenceNo": reference, "status": status,
        "amount": serde_json::from_str::<Value>(amount).expect("an amount as JSON text"),
        "providerReference": "PRV-1", "confirmedAt": "2026-11-22T08:15:31.000Z",
        "errorMessage": null, "extraProperties": null,
    })
}

/// A confirm body.
pub fn confirm_body(id: &str, reference: &str) -> Value {
    json!({ "transactionId": id, "referenceNo": reference })
}
