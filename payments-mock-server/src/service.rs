//! [`Service`]: the mock as its binary runs it. Opened on the store its
//! [`Config`] names (the settings checked against what the store holds),
//! optionally seeded with what was seen elsewhere ([`crate::seed`]), then served on a
//! listener until a shutdown future completes. [`crate::MockServer`] does
//! the same for a test, in the background on a free port.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::config::Config;
use crate::error::Error;
use crate::seed::{Seeded, Sighting};
use crate::state::AppState;

/// A mock opened on its store and ready to serve.
///
/// ```no_run
/// use payments_mock_server::{Config, Service};
///
/// # async fn demo() -> Result<(), payments_mock_server::Error> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
/// let addr = listener.local_addr().expect("an address");
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let service = Service::open(Config::default()).await?;
/// println!("state is kept in {}", service.store());
/// service
///     .serve(
///         listener,
///         || println!("listening on http://{addr}"),
///         async { let _ = stopped.await; }, // the binary waits for SIGINT or SIGTERM
///     )
///     .await;
/// # drop(stop);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Service {
    state: AppState,
    header_read_timeout: Duration,
    /// The server spans' export (`--otlp-endpoint`), flushed at the stop.
    spans: crate::http::server::Spans,
}

impl Service {
    /// Opens the store `config.store` names (emptied first with
    /// `config.fresh`) and checks this start's settings against the ones
    /// it holds (CONTRACT section 15). `config` is validated first.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an option out of range; [`Error::StoreOpen`],
    /// [`Error::StoreSchemaNewer`] (exit 1) and [`Error::SettingsDiffer`]
    /// (exit 2): [`Error::exit_code`] says which. With the feature `otlp`
    /// and `config.otlp_endpoint`, `Error::SpanExport` (exit 1) when the
    /// export cannot start.
    pub async fn open(config: Config) -> Result<Self, Error> {
        config.validate()?;
        let header_read_timeout = config.header_read_timeout;
        #[cfg(feature = "otlp")]
        let endpoint = config.otlp_endpoint.clone();
        let state = AppState::open(config).await?;
        #[cfg(feature = "otlp")]
        let spans = crate::http::server::export_spans(endpoint.as_ref(), &state)?;
        #[cfg(not(feature = "otlp"))]
        let spans = crate::http::server::NoSpans;
        Ok(Self {
            state,
            header_read_timeout,
            spans,
        })
    }

    /// Where state is kept, as it may be shown: `memory`, `sqlite:PATH`,
    /// or the PostgreSQL URL with its password as `***`.
    #[must_use]
    pub fn store(&self) -> String {
        self.state.store.shown()
    }

    /// This process's name in the journal (`--replica-name`).
    #[must_use]
    pub fn replica(&self) -> &str {
        &self.state.replica
    }

    /// The seed of the injected faults' draws (`--fault-seed`, or the
    /// random one picked when none was given).
    #[must_use]
    pub fn fault_seed(&self) -> u64 {
        self.state.faults.seed()
    }

    /// Places what was seen of transactions (`--seed-from`), in the order
    /// given, before anything is served; the unconfirmed ones expire after
    /// the store's expiry from now.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when the store fails meanwhile.
    pub async fn seed(
        &self,
        sightings: impl IntoIterator<Item = Sighting>,
    ) -> Result<Seeded, Error> {
        crate::seed::seed(&self.state.store, sightings, self.state.expiry)
            .await
            .map_err(|e| Error::Store {
                store: self.store(),
                reason: e.reason().to_owned(),
            })
    }

    /// Serves on `listener` until `shutdown` completes, then finishes the
    /// requests in flight (and, exporting spans, sends the last batch,
    /// within 5 s). `ready` runs once the routes (and the OpenAPI
    /// document) are built, before the first connection is taken: the
    /// binary prints its banner there.
    pub async fn serve(
        self,
        listener: TcpListener,
        ready: impl FnOnce(),
        shutdown: impl Future<Output = ()>,
    ) {
        #[cfg(feature = "otlp")]
        let spans = self.spans.clone();
        crate::http::server::serve_spanned(
            listener,
            self.state,
            self.header_read_timeout,
            self.spans,
            ready,
            shutdown,
        )
        .await;
        #[cfg(feature = "otlp")]
        crate::http::server::flush(&spans).await;
    }

    /// [`Service::serve`] over TLS (HTTPS only, feature `tls`).
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub async fn serve_tls(
        self,
        listener: TcpListener,
        tls: payments_serve::tls::ServerTls,
        ready: impl FnOnce(),
        shutdown: impl Future<Output = ()>,
    ) {
        #[cfg(feature = "otlp")]
        let spans = self.spans.clone();
        crate::http::server::serve_spanned_tls(
            listener,
            self.state,
            tls,
            self.header_read_timeout,
            self.spans,
            ready,
            shutdown,
        )
        .await;
        #[cfg(feature = "otlp")]
        crate::http::server::flush(&spans).await;
    }
}
