//! Serving the mock: its service on the shared connection loop
//! (`payments_serve::server`), without a router around it.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::http::app::MockService;
use crate::state::AppState;

/// The name of the mock's spans' tool (`service.name`, CONTRACT section
/// 21); the replica is `service.instance.id`.
#[cfg(feature = "otlp")]
pub(crate) const SERVICE_NAME: &str = "payments-mock-server";

/// Where a mock's server spans go (feature `otlp`): none without
/// `--otlp-endpoint`, and then no span layer is installed at all.
#[cfg(feature = "otlp")]
pub(crate) type Spans = Option<payments_serve::otlp::SpanExport>;
/// Without the feature `otlp` a mock exports no span.
#[cfg(not(feature = "otlp"))]
pub(crate) type Spans = NoSpans;

/// What a mock without the feature `otlp` exports: nothing.
#[cfg(not(feature = "otlp"))]
#[derive(Debug, Clone, Default)]
pub(crate) struct NoSpans;

/// The span export of the replica `state` serves, to `endpoint` when one
/// is given. Its spans show a request's path without the credentials the
/// request carries (its key, a key in its query), the configured API
/// keys or the admin keys (`payments_serve::otlp::RequestSecrets`).
#[cfg(feature = "otlp")]
pub(crate) fn export_spans(
    endpoint: Option<&payments_serve::otlp::OtlpEndpoint>,
    state: &AppState,
) -> Result<Spans, crate::Error> {
    endpoint
        .map(|endpoint| {
            let keys = state.auth.keys().iter().map(|key| key.key.as_str());
            payments_serve::otlp::SpanExport::start(endpoint, SERVICE_NAME, &state.replica).map(
                |export| {
                    export.with_paths(
                        payments_serve::otlp::RequestSecrets::new(keys)
                            .with_admin_keys(state.admin.keys()),
                    )
                },
            )
        })
        .transpose()
        .map_err(crate::Error::from)
}

/// Sends the spans still batched, within `payments_serve::otlp::FLUSH_TIMEOUT`.
#[cfg(feature = "otlp")]
pub(crate) async fn flush(spans: &Spans) {
    if let Some(export) = spans {
        export.shutdown().await;
    }
}

/// Serves the mock for `state` as `payments_serve::server::run_with`
/// serves the router of `app.rs`, but
/// without the router `app` puts around the service (it has no route of
/// its own), and without inserting the connection's `ConnectionAbort`
/// into each request: what [`crate::Service`] and [`crate::MockServer`] run. `ready` runs
/// once the routes and the OpenAPI document are built, before the first
/// connection is taken (the binary prints its banner there).
pub async fn serve_app(
    listener: TcpListener,
    state: AppState,
    header_read_timeout: Duration,
    ready: impl FnOnce(),
    shutdown: impl Future<Output = ()>,
) {
    serve_spanned(
        listener,
        state,
        header_read_timeout,
        Spans::default(),
        ready,
        shutdown,
    )
    .await;
}

/// [`serve_app`], each request in a server span when `spans` exports
/// them (the span layer wraps each connection's service then, and only
/// then).
pub(crate) async fn serve_spanned(
    listener: TcpListener,
    state: AppState,
    header_read_timeout: Duration,
    spans: Spans,
    ready: impl FnOnce(),
    shutdown: impl Future<Output = ()>,
) {
    let service = MockService::new(state.clone());
    ready();
    let shutdown = closing(&state, shutdown);
    #[cfg(feature = "otlp")]
    if let Some(export) = spans {
        let per_connection = move |abort| export.spans(service.on_connection(abort), false);
        payments_serve::server::serve(
            listener,
            per_connection,
            watching(header_read_timeout),
            shutdown,
        )
        .await;
        return;
    }
    #[cfg(not(feature = "otlp"))]
    let NoSpans = spans;
    let per_connection = move |abort| service.on_connection(abort);
    payments_serve::server::serve(
        listener,
        per_connection,
        watching(header_read_timeout),
        shutdown,
    )
    .await;
}

/// [`serve_app`] over TLS (HTTPS only, feature `tls`): the handshake is
/// bounded by `header_read_timeout` as well; a connection that fails it
/// (an untrusted certificate, a missing client certificate under mutual
/// TLS) is closed without an answer.
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub async fn serve_app_tls(
    listener: TcpListener,
    state: AppState,
    tls: payments_serve::tls::ServerTls,
    header_read_timeout: Duration,
    ready: impl FnOnce(),
    shutdown: impl Future<Output = ()>,
) {
    serve_spanned_tls(
        listener,
        state,
        tls,
        header_read_timeout,
        Spans::default(),
        ready,
        shutdown,
    )
    .await;
}

/// [`serve_app_tls`] with the spans of [`serve_spanned`].
#[cfg(feature = "tls")]
pub(crate) async fn serve_spanned_tls(
    listener: TcpListener,
    state: AppState,
    tls: payments_serve::tls::ServerTls,
    header_read_timeout: Duration,
    spans: Spans,
    ready: impl FnOnce(),
    shutdown: impl Future<Output = ()>,
) {
    let service = MockService::new(state.clone());
    ready();
    let shutdown = closing(&state, shutdown);
    #[cfg(feature = "otlp")]
    if let Some(export) = spans {
        let per_connection = move |abort| export.spans(service.on_connection(abort), true);
        payments_serve::server::serve_tls(
            listener,
            tls,
            per_connection,
            watching(header_read_timeout),
            shutdown,
        )
        .await;
        return;
    }
    #[cfg(not(feature = "otlp"))]
    let NoSpans = spans;
    let per_connection = move |abort| service.on_connection(abort);
    payments_serve::server::serve_tls(
        listener,
        tls,
        per_connection,
        watching(header_read_timeout),
        shutdown,
    )
    .await;
}

/// The serving options of the mock: `header_read_timeout`, and leaving
/// clients watched, so that a `hang` ends once its client has left (one
/// duplicate descriptor per open connection).
fn watching(header_read_timeout: Duration) -> payments_serve::server::Options {
    payments_serve::server::Options::from(header_read_timeout).watch_leaving_clients(true)
}

/// `shutdown`, and then the end of every hanging fault (`hang`,
/// `commit-then-hang`, a trickled body): the graceful shutdown that
/// follows waits for the requests in flight, and a hang must never hold it.
async fn closing(state: &AppState, shutdown: impl Future<Output = ()>) {
    shutdown.await;
    state.faults.close();
}
