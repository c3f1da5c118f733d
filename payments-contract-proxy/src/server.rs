//! [`Proxy`]: a running proxy, started on a loopback port or a given
//! listener, stopped with its summary and interface coverage (and its
//! JUnit and SARIF files written).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::router::{dispatch, router};
use crate::state::ProxyState;
use crate::{Coverage, Error, Exchange, Finding, ProxyConfig, Summary, Verdict};

/// What a stopped proxy saw: its summary and the interface coverage.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Finished {
    /// The summary (its exit code the run's verdict).
    pub summary: Summary,
    /// What the service was seen to do of the interface's answers and
    /// transitions (CONTRACT section 20).
    pub coverage: Coverage,
    /// The JUnit and SARIF files that could not be written (each logged as
    /// an error); the binary then exits 2.
    pub unwritten: Vec<std::path::PathBuf>,
    /// The report and recording files (`--report`, `--record`) that lack
    /// lines, and how many each lacks: each a line that could not be
    /// written (logged as a warning then). The binary then exits 2.
    pub lacking: Vec<(std::path::PathBuf, u64)>,
}

/// A running proxy on a loopback port (or a listener given to it).
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    state: ProxyState,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    /// The server spans' export (`otlp_endpoint`), flushed by
    /// [`Proxy::finish`].
    #[cfg(feature = "otlp")]
    spans: Option<payments_serve::otlp::SpanExport>,
}

/// The name of the proxy's spans' tool (`service.name`, CONTRACT section
/// 21); its listening `HOST:PORT` is `service.instance.id`.
#[cfg(feature = "otlp")]
pub const SERVICE_NAME: &str = "payments-contract-proxy";

/// What the proxy's spans show of a request's path: what its recording
/// would (`redact/span.rs`).
#[cfg(feature = "otlp")]
#[derive(Debug)]
struct SpanPaths(ProxyState);

#[cfg(feature = "otlp")]
impl payments_serve::otlp::ShowPath for SpanPaths {
    fn shown<'a>(
        &self,
        method: &axum::http::Method,
        uri: &'a axum::http::Uri,
        headers: &axum::http::HeaderMap,
    ) -> std::borrow::Cow<'a, str> {
        let state = &self.0;
        match state
            .redactor
            .span_path(method, uri, headers, &state.earlier)
        {
            Some(shown) => std::borrow::Cow::Owned(shown),
            None => std::borrow::Cow::Borrowed(uri.path()),
        }
    }
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
        #[cfg(feature = "otlp")]
        let spans = match &state.config.otlp_endpoint {
            Some(endpoint) => Some(
                payments_serve::otlp::SpanExport::start(endpoint, SERVICE_NAME, &addr.to_string())?
                    .with_paths(SpanPaths(state.clone())),
            ),
            None => None,
        };
        #[cfg(feature = "otlp")]
        let task = match &spans {
            // Each connection's service in the span layer, only then.
            Some(export) => {
                let export = export.clone();
                let https = state.config.tls.is_some();
                let spanned = move |abort| export.spans_with_calls(per_connection(abort), https);
                serve(&state, listener, spanned, stopped)
            }
            None => serve(&state, listener, per_connection, stopped),
        };
        #[cfg(not(feature = "otlp"))]
        let task = serve(&state, listener, per_connection, stopped);
        tracing::info!(upstream = %state.config.shown_upstream(), "contract proxy in front of {}", state.config.shown_upstream());
        Ok(Self {
            addr,
            state,
            stop: Some(stop),
            task: Some(task),
            #[cfg(feature = "otlp")]
            spans,
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

    /// The interface coverage seen so far: the interface's answers and
    /// transitions the service was seen to give (CONTRACT section 20).
    pub fn coverage(&self) -> Coverage {
        self.state.coverage()
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

    /// Stops accepting, lets exchanges in flight finish (each line of the
    /// report and the recording is written as its exchange ends), writes
    /// the JUnit and SARIF files, and returns the summary.
    ///
    /// Bounded: exchanges still open after the upstream timeout (plus a
    /// second) are cut off, so a stalled upstream or a client that never
    /// reads cannot keep the proxy from exiting. One whose answer was not
    /// yet complete is answered by the proxy itself (502
    /// `UPSTREAM_UNAVAILABLE`, `unchecked`) and recorded and counted as
    /// such before the files are written; an answer already judged and
    /// still being sent is broken off.
    pub async fn shutdown(self) -> Summary {
        self.finish().await.summary
    }

    /// [`Proxy::shutdown`], returning the interface coverage beside the
    /// summary. The JUnit and SARIF files (`junit`, `sarif` of
    /// [`ProxyConfig`]) are written then; one that cannot be is logged as
    /// an error and named in [`Finished::unwritten`].
    pub async fn finish(mut self) -> Finished {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take() {
            let grace = self
                .state
                .config
                .upstream_timeout
                .saturating_add(Duration::from_secs(1));
            if tokio::time::timeout(grace, &mut task).await.is_err() {
                self.cut_off(grace, &mut task).await;
            }
        }
        let unwritten = self.state.write_evidence();
        #[cfg(feature = "otlp")]
        if let Some(spans) = &self.spans {
            spans.shutdown().await;
        }
        Finished {
            summary: self.state.summary(),
            coverage: self.state.coverage(),
            unwritten,
            lacking: self.state.lacking(),
        }
    }
}

/// How long the stop waits, after its grace period, for the exchanges it
/// cut off to be answered and recorded.
const CUT_OFF_WAIT: Duration = Duration::from_secs(1);

impl Proxy {
    /// The grace period is over and `task` (the accept loop, which waits
    /// for its connections) has not ended: each exchange still under way is
    /// cut off, answered with the proxy's own 502 and recorded as such;
    /// waited for a while ([`CUT_OFF_WAIT`]), then what is left is
    /// aborted.
    async fn cut_off(&self, grace: Duration, task: &mut JoinHandle<()>) {
        let open = self.state.stop.open();
        let grace = humantime::format_duration(grace);
        if open > 0 {
            tracing::warn!(
                open,
                "{open} exchanges still under way {grace} after the stop: cut off, each answered by the proxy (502 UPSTREAM_UNAVAILABLE) and recorded as such"
            );
        } else {
            tracing::warn!("answers still being sent {grace} after the stop: cut off");
        }
        self.state.stop.cut_off();
        let settled = async {
            self.state.stop.settled().await;
            // Their answers written, their connections closed.
            let _ = (&mut *task).await;
        };
        if tokio::time::timeout(CUT_OFF_WAIT, settled).await.is_err() {
            task.abort();
            let _ = (&mut *task).await;
        }
    }
}

/// The accept loop of `per_connection`'s services on `listener` (HTTPS
/// when the proxy has TLS), as a task, until `stopped`.
fn serve<S>(
    state: &ProxyState,
    listener: tokio::net::TcpListener,
    per_connection: impl Fn(payments_serve::ConnectionAbort) -> S + Send + 'static,
    stopped: impl std::future::Future<Output = ()> + Send + 'static,
) -> JoinHandle<()>
where
    S: hyper::service::Service<
            axum::extract::Request<hyper::body::Incoming>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    match state.config.tls.clone() {
        Some(tls) => tokio::spawn(payments_serve::server::serve_tls(
            listener,
            tls,
            per_connection,
            serving_options(),
            stopped,
        )),
        None => tokio::spawn(payments_serve::server::serve(
            listener,
            per_connection,
            serving_options(),
            stopped,
        )),
    }
}

/// How the proxy serves its connections: the default header read timeout,
/// and leaving clients not watched (it holds no request without an
/// answer, so it takes no duplicate descriptor per connection).
fn serving_options() -> payments_serve::server::Options {
    payments_serve::server::Options::default()
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

#[cfg(test)]
mod cut_off_tests;
