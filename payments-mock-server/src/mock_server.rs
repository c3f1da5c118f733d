//! The embeddable server: [`MockServer`] and its builder.

use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::config::{AdminKey, ApiKey, Config};
use crate::domain::catalog::Catalog;
use crate::error::Error;
use crate::state::AppState;
use crate::store::{Durability, StoreSpec};

mod controls;
mod sandbox;
#[cfg(feature = "tls")]
mod tls;

pub use controls::Controls;
pub use sandbox::{Sandbox, SandboxError};

/// A stored transaction as the API would show it now.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredTransaction {
    /// The `transactionId`.
    pub transaction_id: String,
    /// Owner.
    pub merchant_id: Uuid,
    /// Merchant reference.
    pub reference_no: String,
    /// Product.
    pub product_code: String,
    /// Amount in minor units.
    pub amount_minor: u64,
    /// ISO 4217 code.
    pub currency_code: String,
    /// State as a status read would show it now (virtual clock).
    pub status: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Latest state change.
    pub last_modified_at: Option<DateTime<Utc>>,
    /// When the confirm was processed.
    pub confirmed_at: Option<DateTime<Utc>>,
    /// Provider id, after a successful confirm.
    pub provider_reference: Option<String>,
    /// Why it is `FAILED` (a decline, a wrong code, the payer's decline or
    /// cancel, or the payer window passing), as a status read shows it.
    pub error_message: Option<String>,
    /// The payment page of a confirmed redirect-based transaction.
    pub payment_url: Option<String>,
}

/// A running mock server on a loopback port.
///
/// Dropping it stops the server (in-flight requests finish in the
/// background); [`MockServer::shutdown`] waits for them.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    /// Whether it speaks HTTPS (feature `tls`).
    https: bool,
    #[cfg(feature = "tls")]
    tls: tls::Started,
    controls: Controls,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    /// The server spans' export ([`MockServerBuilder::otlp_endpoint`]),
    /// flushed by [`MockServer::shutdown`].
    #[cfg(feature = "otlp")]
    spans: crate::http::server::Spans,
}

impl MockServer {
    /// Starts a server on `127.0.0.1:0` with the default configuration.
    ///
    /// Call it inside a Tokio runtime (e.g. `#[tokio::test]`); the server
    /// runs as a task of that runtime.
    ///
    /// # Panics
    ///
    /// Only if a loopback port cannot be bound.
    pub async fn start() -> Self {
        match Self::builder().start().await {
            Ok(server) => server,
            Err(e) => panic!("payments-mock-server could not start on loopback: {e}"),
        }
    }

    /// A builder for every option of the binary.
    pub fn builder() -> MockServerBuilder {
        MockServerBuilder::default()
    }

    /// `http://127.0.0.1:PORT` (or `https://` with TLS), no trailing
    /// slash.
    pub fn base_url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The seed of the fail-rate and latency draws: the one given to
    /// [`MockServerBuilder::fault_seed`], or the random one picked at start.
    /// Giving it to another server repeats this one's faults for the same
    /// requests, in any order.
    pub fn fault_seed(&self) -> u64 {
        self.controls.state.faults.seed()
    }

    /// Stops accepting, lets in-flight requests finish, and returns;
    /// exporting spans, the last batch is sent first (within 5 s).
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        #[cfg(feature = "otlp")]
        crate::http::server::flush(&self.spans).await;
    }
}

impl std::ops::Deref for MockServer {
    type Target = Controls;

    /// The test controls of the root (the default sandbox): clock, journal,
    /// transactions, faults, coverage, reset.
    fn deref(&self) -> &Controls {
        &self.controls
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Options of a [`MockServer`]; each method mirrors a flag of the binary.
#[derive(Debug, Default)]
#[must_use = "a builder does nothing until `start` is called"]
pub struct MockServerBuilder {
    config: Config,
    listener: Option<std::net::TcpListener>,
    #[cfg(feature = "tls")]
    tls: tls::TlsChoice,
}

impl MockServerBuilder {
    /// Expiry of unconfirmed transactions (`--expiry`, default 15 minutes).
    pub fn expiry(mut self, expiry: Duration) -> Self {
        self.config.expiry = expiry;
        self.config.given.expiry = true;
        self
    }

    /// Adds an API key, optionally bound to a merchant (`--api-key`). The
    /// same key twice makes [`MockServerBuilder::start`] fail.
    pub fn api_key(mut self, key: impl Into<String>, merchant: Option<Uuid>) -> Self {
        self.config.api_keys.push(ApiKey::new(key, merchant));
        self
    }

    /// Adds an admin key (`--admin-key`, CONTRACT section 18): the console,
    /// `/metrics` and every `/_mock/` route except `/_mock/health` then
    /// need it (an API key bound to a merchant reads that merchant's part;
    /// `/_mock/health` tells a caller without a key only `{"status":"ok"}`). The
    /// same key twice, or a key also given to [`MockServerBuilder::api_key`],
    /// makes [`MockServerBuilder::start`] fail.
    pub fn admin_key(mut self, key: impl Into<String>) -> Self {
        self.config.admin_keys.push(AdminKey::new(key));
        self
    }

    /// How long a console sign-in lasts (default 12 hours).
    pub fn session_lifetime(mut self, lifetime: Duration) -> Self {
        self.config.session_lifetime = lifetime;
        self
    }

    /// The product catalogue (`--catalog`).
    pub fn catalog(mut self, catalog: Catalog) -> Self {
        self.config.catalog = catalog;
        self.config.given.catalog = true;
        self
    }

    /// Probability 0..=1 of a random fault per `/api/` request (`--fail-rate`).
    pub fn fail_rate(mut self, rate: f64) -> Self {
        self.config.fail_rate = rate;
        self
    }

    /// Seed of the fail-rate and latency draws (`--fault-seed`): the same
    /// requests then get the same faults, whatever order they arrive in.
    pub fn fault_seed(mut self, seed: u64) -> Self {
        self.config.fault_seed = Some(seed);
        self
    }

    /// Added delay per `/api/` request (`--latency`).
    pub fn latency(mut self, range: RangeInclusive<Duration>) -> Self {
        self.config.latency = Some(range);
        self
    }

    /// `/api/` requests per second before 429 (`--rate-limit`).
    pub fn rate_limit(mut self, per_second: u32) -> Self {
        self.config.rate_limit = Some(per_second);
        self
    }

    /// How long a connection may take to send a request's headers before it
    /// is closed (default 30 seconds); tests of slow clients set it short.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.config.header_read_timeout = timeout;
        self
    }

    /// The base URL payment pages are announced under (`--public-url`),
    /// when the server is reached through another address than it listens
    /// on (a proxy, a container); by default the listening address.
    pub fn public_url(mut self, url: crate::PublicUrl) -> Self {
        self.config.public_url = Some(url);
        self
    }

    /// Where state is kept (`--store`): [`StoreSpec::Memory`] (the
    /// default), a SQLite file or a PostgreSQL URL, so a test can start a
    /// mock on a database. Parse one from text with `"sqlite:mock.db".parse()`.
    pub fn store(mut self, store: StoreSpec) -> Self {
        self.config.store = store;
        self
    }

    /// What a SQLite store's commits survive (`--durability`).
    pub fn durability(mut self, durability: Durability) -> Self {
        self.config.durability = durability;
        self
    }

    /// Empty the store before serving (`--fresh`).
    pub fn fresh(mut self, fresh: bool) -> Self {
        self.config.fresh = fresh;
        self
    }

    /// Export a server span per request to this OTLP/HTTP receiver
    /// (`--otlp-endpoint`, feature `otlp`, CONTRACT section 21), batched;
    /// [`MockServer::shutdown`] sends the last batch.
    #[cfg(feature = "otlp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
    pub fn otlp_endpoint(mut self, endpoint: payments_serve::otlp::OtlpEndpoint) -> Self {
        self.config.otlp_endpoint = Some(endpoint);
        self
    }

    /// This server's name in the journal (`--replica-name`); by default
    /// `HOST:PORT` as it listens.
    pub fn replica_name(mut self, name: impl Into<String>) -> Self {
        self.config.replica_name = Some(name.into());
        self
    }

    /// Serve on this listener instead of binding `127.0.0.1:0`.
    pub fn listener(mut self, listener: std::net::TcpListener) -> Self {
        self.listener = Some(listener);
        self
    }

    /// The whole configuration at once.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Binds (unless given a listener) and starts serving in the background.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an option out of range, [`Error::Bind`] when
    /// the listener cannot be bound or used; for a store, the errors of
    /// [`Service::open`](crate::Service::open).
    pub async fn start(self) -> Result<MockServer, Error> {
        self.config.validate()?;
        let std_listener = match self.listener {
            Some(l) => l,
            None => std::net::TcpListener::bind("127.0.0.1:0").map_err(|source| Error::Bind {
                addr: "127.0.0.1:0".to_owned(),
                source,
            })?,
        };
        let bind_error = |source| Error::Bind {
            addr: "the given listener".to_owned(),
            source,
        };
        std_listener.set_nonblocking(true).map_err(bind_error)?;
        let addr = std_listener.local_addr().map_err(bind_error)?;
        let listener = tokio::net::TcpListener::from_std(std_listener).map_err(bind_error)?;
        let header_read_timeout = self.config.header_read_timeout;
        let random_seed = self.config.fault_seed.is_none()
            && (self.config.fail_rate > 0.0 || self.config.latency.is_some());
        let mut config = self.config;
        #[cfg(feature = "tls")]
        let tls = self.tls.build()?;
        #[cfg(feature = "tls")]
        let https = self.tls.is_on();
        #[cfg(not(feature = "tls"))]
        let https = false;
        config.secure_cookies |= https;
        if let Some(warning) = crate::config::open_admin_warning(addr, &config) {
            tracing::warn!(listening = %addr, "{warning}");
        }
        config
            .public_url
            .get_or_insert_with(|| crate::config::listening_url_with(addr, https));
        config.replica_name.get_or_insert_with(|| addr.to_string());
        #[cfg(feature = "otlp")]
        let endpoint = config.otlp_endpoint.clone();
        let state = AppState::open(config).await?;
        #[cfg(feature = "otlp")]
        let spans = crate::http::server::export_spans(endpoint.as_ref(), &state)?;
        #[cfg(not(feature = "otlp"))]
        let spans = crate::http::server::NoSpans;
        if random_seed {
            let seed = state.faults.seed();
            tracing::info!(
                // A string: an f64 reader would round it (above 2^53).
                fault_seed = %seed,
                "fault seed {seed} (random; call fault_seed({seed}) to repeat this run's faults)"
            );
        }
        let scheme = if https { "https" } else { "http" };
        tracing::debug!("web console at {scheme}://{addr}/_mock/ui/");
        let (stop, stopped) = oneshot::channel::<()>();
        let stopped = async move {
            let _ = stopped.await;
        };
        #[cfg(feature = "tls")]
        let (task, tls) = match tls {
            Some((server_tls, started)) => (
                tokio::spawn(crate::http::server::serve_spanned_tls(
                    listener,
                    state.clone(),
                    server_tls,
                    header_read_timeout,
                    spans.clone(),
                    || {},
                    stopped,
                )),
                started,
            ),
            None => (
                tokio::spawn(crate::http::server::serve_spanned(
                    listener,
                    state.clone(),
                    header_read_timeout,
                    spans.clone(),
                    || {},
                    stopped,
                )),
                tls::Started::default(),
            ),
        };
        #[cfg(not(feature = "tls"))]
        let task = tokio::spawn(crate::http::server::serve_spanned(
            listener,
            state.clone(),
            header_read_timeout,
            spans.clone(),
            || {},
            stopped,
        ));
        Ok(MockServer {
            addr,
            https,
            #[cfg(feature = "tls")]
            tls,
            controls: Controls::new(state, format!("{scheme}://{addr}")),
            stop: Some(stop),
            task: Some(task),
            #[cfg(feature = "otlp")]
            spans,
        })
    }
}
