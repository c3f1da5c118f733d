//! The contract proxy: it stands between an application and the
//! provider's real service (`payments-mock-server proxy --upstream URL`, or
//! [`Proxy::start`] in a test), passes every `/api/` exchange through
//! untouched, and checks each against the interface document, including
//! the rules that span requests. A report, a recording with secrets
//! replaced, a summary and exit code, a web console at `/_proxy/ui/`, and
//! [`check_recording`] for the same checks offline.
//!
//! It reads the interface's vocabulary (`payments-interface`) and serves
//! with the shell the mock uses (`payments-serve`); it knows nothing of the
//! mock's rules or stores.
//!
//! # Example
//!
//! A proxy in front of the embedded mock (a verified fake: no violation):
//!
//! ```
//! use payments_contract_proxy::{Proxy, ProxyConfig};
//! use payments_mock_server::MockServer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mock = MockServer::start().await;
//! let proxy = Proxy::start(ProxyConfig::new(mock.base_url().parse()?)).await?;
//! let reply = reqwest::get(format!("{}/api/payments/nope/status", proxy.base_url())).await?;
//! assert_eq!(reply.status(), 404);
//! assert_eq!(reply.headers()["x-contract-verdict"], "pass");
//! let summary = proxy.shutdown().await;
//! assert_eq!(summary.exit_code(false), 0);
//! # Ok(()) }
//! ```

// Layout, for contributors:
// - `forward.rs` — the pass-through: headers, bodies of any size,
//   timeouts, `--enforce`.
// - `exchange.rs` — an exchange and its endpoint, parsed once;
//   `json.rs` — a body read as borrowed JSON.
// - `rules/` — the rule registry: id → level, text, function.
// - `memory.rs` — what passed through, bounded, for the rules that span
//   requests.
// - `report.rs` — report lines, the summary, the exit code.
// - `redact/` — secrets replaced before anything is recorded, reported
//   or shown; `record.rs` — reading recordings back.
// - `check.rs` — the same checks offline, on a recording.
// - `console.rs` — the exchanges in a browser, live; `access.rs` — the
//   admin key in front of it, `/_proxy/report` and `/metrics`.
// - `config.rs` — what shapes a proxy (`ProxyConfig`) and its checks.
// - `error.rs` — what keeps a proxy from starting.

mod access;
mod check;
/// The command line of the `payments-contract-proxy` binary (feature
/// `cli`).
#[cfg(feature = "cli")]
pub mod cli;
mod config;
mod console;
mod error;
mod exchange;
mod forward;
mod json;
mod memory;
mod metrics;
mod record;
mod redact;
mod report;
pub mod rules;
mod upstream_tls;

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::routing::{any, get};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use check::{CheckOutcome, check_recording};
pub use config::{DEFAULT_UPSTREAM_TIMEOUT, ProxyConfig};
pub use exchange::{Endpoint, Exchange, Message};
pub use forward::{JUDGE_LIMIT, VERDICT_HEADER, end_to_end};
pub use memory::CAPACITY as MEMORY_CAPACITY;
pub use record::{BadLine, each as read_recording};
pub use redact::{REDACTED, Redactor};

pub use error::Error;
pub use payments_serve::admin::AdminKey;
pub use report::{ReportLine, Summary};
pub use rules::{Finding, Level, Verdict};

use exchange::Parsed;
use memory::Memory;
use payments_serve::ApiError;
use upstream_tls::{Upstream, upstream_client};

/// Exchanges the console keeps to show.
const CONSOLE_KEEPS: usize = 500;
/// The most of each body the console keeps (so 500 exchanges stay small
/// whatever their bodies).
const CONSOLE_BODY: usize = 64 * 1024;

/// One judged exchange, as the console shows it (secrets replaced).
#[derive(Debug, Clone)]
pub(crate) struct Judged {
    /// The console's own count (exchanges are judged in the order they
    /// end, not the order of their `seq`): what the live feed pages by.
    pub row: u64,
    pub exchange: Exchange,
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
}

/// What the judging of exchanges shares, one at a time.
#[derive(Debug)]
pub(crate) struct Judge {
    memory: Memory,
    summary: Summary,
    report: Option<BufWriter<File>>,
    record: Option<BufWriter<File>>,
    recent: VecDeque<Judged>,
    /// The `row` of the last exchange the console kept.
    rows: u64,
}

/// The proxy's state: cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct ProxyState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    config: ProxyConfig,
    /// `scheme://host:port/prefix` of `--upstream`, without its user and
    /// password: what a request target is appended to.
    upstream: String,
    /// `Authorization: Basic …` from the user and password of `--upstream`,
    /// sent when a request has none of its own.
    basic_auth: Option<axum::http::HeaderValue>,
    client: Upstream,
    seq: AtomicU64,
    redactor: Redactor,
    judge: Mutex<Judge>,
    /// What `GET /metrics` reports.
    metrics: metrics::Metrics,
    /// The console's sign-in sessions (with `--admin-key`).
    sessions: payments_serve::admin::Sessions<()>,
}

impl std::ops::Deref for ProxyState {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.inner
    }
}

fn open_append(path: &PathBuf, what: &str) -> Result<BufWriter<File>, Error> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(BufWriter::new)
        .map_err(|e| {
            Error::Config(format!(
                "cannot open the {what} file {}: {e}",
                path.display()
            ))
        })
}

impl ProxyState {
    fn new(config: ProxyConfig) -> Result<Self, Error> {
        config.validate()?;
        let client = upstream_client(&config)?;
        let url = &config.upstream;
        let basic_auth = (!url.username().is_empty() || url.password().is_some()).then(|| {
            use base64::Engine as _;
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            let pair = format!(
                "{}:{}",
                decode(url.username()),
                url.password().map(decode).unwrap_or_default()
            );
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            let mut value = axum::http::HeaderValue::from_str(&format!("Basic {encoded}"))
                .unwrap_or_else(|_| axum::http::HeaderValue::from_static(""));
            value.set_sensitive(true);
            value
        });
        let mut redactor = Redactor::new();
        if let Some(basic) = basic_auth.as_ref().and_then(|v| v.to_str().ok()) {
            redactor = redactor
                .also(basic)
                .also(basic.trim_start_matches("Basic "));
        }
        for credential in [url.username(), url.password().unwrap_or_default()] {
            redactor = redactor
                .also(credential)
                .also(&percent_encoding::percent_decode_str(credential).decode_utf8_lossy());
        }
        let upstream = format!(
            "{}://{}{}",
            url.scheme(),
            url.host_str()
                .map_or_else(String::new, |h| match url.port() {
                    Some(port) => format!("{h}:{port}"),
                    None => h.to_owned(),
                }),
            url.path().trim_end_matches('/')
        );
        let report = config
            .report
            .as_ref()
            .map(|p| open_append(p, "report"))
            .transpose()?;
        let record = config
            .record
            .as_ref()
            .map(|p| open_append(p, "record"))
            .transpose()?;
        let session_lifetime = config.session_lifetime;
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                upstream,
                basic_auth,
                client,
                seq: AtomicU64::new(0),
                redactor,
                metrics: metrics::Metrics::new(),
                sessions: payments_serve::admin::Sessions::new(session_lifetime),
                judge: Mutex::new(Judge {
                    memory: Memory::default(),
                    summary: Summary::default(),
                    report,
                    record,
                    recent: VecDeque::with_capacity(CONSOLE_KEEPS),
                    rows: 0,
                }),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Judge> {
        self.judge.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The upstream URI of a request target: the upstream's own path
    /// prefix, then the path and query exactly as the application sent them.
    fn upstream_uri(&self, path: &str, query: Option<&str>) -> Option<axum::http::Uri> {
        let target = match query {
            Some(q) => format!("{}{path}?{q}", self.upstream),
            None => format!("{}{path}", self.upstream),
        };
        target.parse().ok()
    }

    /// Judges an exchange (`judged`: its bodies were read whole), counts
    /// it, and writes the report and the recording.
    fn judge(&self, mut exchange: Exchange, judged: bool) -> (Verdict, Vec<Finding>) {
        exchange.judged = judged && !exchange.proxy_answer;
        // Outside the lock: the bodies read, and what redaction replaces
        // (the exchange itself is never copied: the plan is applied to it
        // once the rules have read it).
        let parsed = Parsed::of(&exchange);
        let redaction = self.redactor.plan(&exchange, parsed.request.as_ref());
        let mut judge = self.lock();
        let (verdict, mut findings) = if exchange.judged {
            let findings = rules::judge(&parsed, &judge.memory);
            rules::remember(&parsed, &mut judge.memory);
            (Verdict::of(&findings), findings)
        } else {
            (Verdict::Unchecked, Vec::new())
        };
        let exchange::Parsed { endpoint, .. } = parsed;
        self.metrics.exchange(&endpoint, verdict, &findings);
        // A message quotes values of the exchange: never a secret one.
        if !redaction.secrets.is_empty() {
            for finding in &mut findings {
                finding.message = self.redactor.scrub(&finding.message, &redaction.secrets);
            }
        }
        let redacted = redaction.apply(exchange);
        judge.summary.add(&redacted, &endpoint, verdict, &findings);
        if let Some(report) = judge.report.as_mut() {
            let line = ReportLine::of(&redacted, verdict, &findings);
            write_line(report, &line, "report");
        }
        if let Some(record) = judge.record.as_mut() {
            write_line(record, &redacted, "recording");
        }
        tracing::info!(
            target: "payments_contract_proxy::exchange",
            seq = redacted.seq,
            method = %redacted.request.method,
            path = %redacted.request.path,
            status = redacted.response.status,
            verdict = verdict.as_str(),
            findings = findings.len(),
            "{} {} → {} {}",
            redacted.request.method,
            redacted.request.path,
            redacted.response.status,
            verdict.as_str()
        );
        if judge.recent.len() == CONSOLE_KEEPS {
            judge.recent.pop_front();
        }
        judge.rows += 1;
        let row = judge.rows;
        let mut kept = redacted;
        for message in [&mut kept.request, &mut kept.response] {
            if let Some(body) = message.body.as_mut()
                && body.len() > CONSOLE_BODY
            {
                let mut end = CONSOLE_BODY;
                while !body.is_char_boundary(end) {
                    end -= 1;
                }
                body.truncate(end);
                body.push_str("… (the console keeps the first 64 KiB)");
            }
        }
        judge.recent.push_back(Judged {
            row,
            exchange: kept,
            verdict,
            findings: findings.clone(),
        });
        (verdict, findings)
    }

    /// The running summary.
    fn summary(&self) -> Summary {
        self.lock().summary.clone()
    }

    /// Flushes the report and the recording.
    fn flush(&self) {
        let mut judge = self.lock();
        if let Some(w) = judge.report.as_mut() {
            let _ = w.flush();
        }
        if let Some(w) = judge.record.as_mut() {
            let _ = w.flush();
        }
    }
}

fn write_line(writer: &mut BufWriter<File>, value: &impl serde::Serialize, what: &str) {
    let written = serde_json::to_writer(&mut *writer, value)
        .map_err(std::io::Error::other)
        .and_then(|()| writer.write_all(b"\n"))
        .and_then(|()| writer.flush());
    if let Err(e) = written {
        tracing::warn!(error = %e, "the {what} could not be written");
    }
}

/// Where the proxy's web console is served (the binary logs its address
/// at start, as the mock does its own).
pub const CONSOLE_PATH: &str = "/_proxy/ui/";

/// `GET /_proxy/report`: the running summary as an envelope.
async fn report(
    axum::extract::State(proxy): axum::extract::State<ProxyState>,
) -> axum::response::Response {
    payments_serve::success(proxy.summary(), None)
}

/// `GET /metrics`: the proxy's counts in the Prometheus text format, or
/// OpenMetrics text when `Accept` asks for it (CONTRACT section 18).
async fn metrics(
    axum::extract::State(proxy): axum::extract::State<ProxyState>,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let accept = headers
        .get(axum::http::header::ACCEPT)
        .map(|v| v.as_bytes());
    let (body, content_type) = proxy.metrics.render(accept);
    ([(axum::http::header::CONTENT_TYPE, content_type)], body).into_response()
}

/// The proxy's routes: `/api/` forwarded; `/_proxy/report`, the console
/// under `/_proxy/ui/` (with its sign-in), `/metrics` and nothing else its
/// own, behind [`access::admit`] (the `/api/` routes pass it untouched:
/// only requests [`dispatch`] does not forward come through the router).
fn router(state: ProxyState) -> Router {
    Router::new()
        .route("/api/{*rest}", any(forward::forward))
        .route("/api", any(forward::forward))
        .route("/api/", any(forward::forward))
        .route("/_proxy/report", get(report))
        .route("/metrics", get(metrics))
        .merge(console::routes())
        .route("/_proxy/ui/sign-in", get(access::page).post(access::submit))
        .route("/_proxy/ui/sign-out", axum::routing::post(access::sign_out))
        .fallback(|| async { ApiError::not_found() })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            access::admit,
        ))
        .with_state(state)
}

/// Whether a path is forwarded (the router's `/api`, `/api/` and
/// `/api/{*rest}`).
fn is_forwarded(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// One request on a connection: under `/api/` straight to
/// [`forward::forward`], the hot path, without the router's matching and
/// the extensions it fills (about 5k instructions of a proxied exchange);
/// everything else through [`router`], whose `/api` routes name the same
/// handler.
async fn dispatch(
    state: ProxyState,
    router: Router,
    request: axum::extract::Request<hyper::body::Incoming>,
) -> Result<axum::response::Response, std::convert::Infallible> {
    let request = request.map(axum::body::Body::new);
    if is_forwarded(request.uri().path()) {
        Ok(forward::forward(axum::extract::State(state), request).await)
    } else {
        tower::ServiceExt::oneshot(router, request).await
    }
}

/// A running proxy on a loopback port (or a listener given to it).
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    state: ProxyState,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Starts a proxy on `127.0.0.1:0`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a bad upstream or a report or recording file
    /// that cannot be opened; [`Error::Bind`] when no port can be bound.
    pub async fn start(config: ProxyConfig) -> Result<Self, Error> {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").map_err(|source| Error::Bind {
                addr: "127.0.0.1:0".to_owned(),
                source,
            })?;
        Self::start_on(listener, config).await
    }

    /// Starts a proxy on `listener`.
    ///
    /// # Errors
    ///
    /// As [`Proxy::start`].
    pub async fn start_on(
        listener: std::net::TcpListener,
        config: ProxyConfig,
    ) -> Result<Self, Error> {
        let state = ProxyState::new(config)?;
        let bind = |source| Error::Bind {
            addr: "the given listener".to_owned(),
            source,
        };
        listener.set_nonblocking(true).map_err(bind)?;
        let addr = listener.local_addr().map_err(bind)?;
        let listener = tokio::net::TcpListener::from_std(listener).map_err(bind)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let per_connection = {
            let (state, router) = (state.clone(), router(state.clone()));
            move |_: payments_serve::ConnectionAbort| {
                let (state, router) = (state.clone(), router.clone());
                hyper::service::service_fn(move |request| {
                    dispatch(state.clone(), router.clone(), request)
                })
            }
        };
        let stopped = async move {
            let _ = stopped.await;
        };
        let task = match state.config.tls.clone() {
            Some(tls) => tokio::spawn(payments_serve::server::serve_tls(
                listener,
                tls,
                per_connection,
                payments_serve::DEFAULT_HEADER_READ_TIMEOUT,
                stopped,
            )),
            None => tokio::spawn(payments_serve::server::serve(
                listener,
                per_connection,
                payments_serve::DEFAULT_HEADER_READ_TIMEOUT,
                stopped,
            )),
        };
        tracing::info!(upstream = %state.config.shown_upstream(), "contract proxy in front of {}", state.config.shown_upstream());
        Ok(Self {
            addr,
            state,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT` (`https://` with TLS).
    pub fn base_url(&self) -> String {
        let scheme = if self.state.config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The running summary.
    pub fn summary(&self) -> Summary {
        self.state.summary()
    }

    /// Moves the console sessions' clock forward: a test's way to see a
    /// session expire without waiting.
    #[cfg(feature = "test-support")]
    #[doc(hidden)]
    pub fn pass_session_time(&self, by: Duration) {
        self.state.sessions.pass_time(by);
    }

    /// The exchanges the console shows now, oldest first (secrets
    /// replaced): at most the last 500.
    pub fn exchanges(&self) -> Vec<(Exchange, Verdict, Vec<Finding>)> {
        self.state
            .lock()
            .recent
            .iter()
            .map(|j| (j.exchange.clone(), j.verdict, j.findings.clone()))
            .collect()
    }

    /// Stops accepting, lets exchanges in flight finish, flushes the report
    /// and the recording, and returns the summary.
    ///
    /// Bounded: exchanges still open after the upstream timeout (plus a
    /// second) are cut off, so a stalled upstream or a client that never
    /// reads cannot keep the proxy from exiting. What was judged until then
    /// is in the summary, the report and the recording.
    pub async fn shutdown(mut self) -> Summary {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take() {
            let grace = self.state.config.upstream_timeout + Duration::from_secs(1);
            if tokio::time::timeout(grace, &mut task).await.is_err() {
                tracing::warn!(
                    "exchanges still open {} after the stop: cut off",
                    humantime::format_duration(grace)
                );
                task.abort();
                let _ = task.await;
            }
        }
        self.state.flush();
        self.state.summary()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.state.flush();
    }
}

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
