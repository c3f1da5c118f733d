//! Serving the mock: its service on the shared connection loop
//! (`payments_serve::server`), without a router around it.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::http::app::MockService;
use crate::state::AppState;

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
    let service = MockService::new(state.clone());
    ready();
    let per_connection = move |abort| service.on_connection(abort);
    payments_serve::server::serve(
        listener,
        per_connection,
        header_read_timeout,
        closing(&state, shutdown),
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
    let service = MockService::new(state.clone());
    ready();
    let per_connection = move |abort| service.on_connection(abort);
    payments_serve::server::serve_tls(
        listener,
        tls,
        per_connection,
        header_read_timeout,
        closing(&state, shutdown),
    )
    .await;
}

/// `shutdown`, and then the end of every hanging fault (`hang`,
/// `commit-then-hang`, a trickled body): the graceful shutdown that
/// follows waits for the requests in flight, and a hang must never hold it.
async fn closing(state: &AppState, shutdown: impl Future<Output = ()>) {
    shutdown.await;
    state.faults.close();
}
