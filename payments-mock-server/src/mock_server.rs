//! The embeddable server: [`MockServer`] and its builder.

use std::net::SocketAddr;

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use uuid::Uuid;

mod builder;
mod controls;
mod listening;
mod real_time;
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
/// Dropping it stops the server: on Linux its port refuses new
/// connections from the moment the drop returns (a client then fails to
/// connect: nothing was sent), connections waiting in the listener's
/// backlog are reset, and requests already being answered finish in the
/// background. (Elsewhere the port stops once the server's task next
/// runs; a listener given to [`MockServerBuilder::listener`] is left
/// listening, see there.) A request that comes after the drop on a
/// connection already open (a pooled client's kept-alive one) is not
/// answered: its connection is closed without a byte, nothing stored
/// (on every platform). [`MockServer::shutdown`]
/// waits for the requests in flight, also answers those whose whole
/// request was waiting in the backlog, and returns once every connection
/// is closed: after it nothing more is answered.
///
/// The server is a task of the Tokio runtime it was started on, and ends
/// with it: one started inside a `#[tokio::test]` is gone when that test
/// returns. A server shared by several tests needs a runtime of its own
/// (docs/mock-server.md, "Sharing one server across tests"); one whose
/// runtime has ended panics on [`MockServer::base_url`] and
/// [`MockServer::sandbox`] rather than hand out an address that refuses
/// every connection.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    /// Whether it speaks HTTPS (feature `tls`).
    https: bool,
    #[cfg(feature = "tls")]
    tls: tls::Started,
    controls: Controls,
    /// A duplicate of the listening socket, shut down by the drop (none
    /// for a listener the caller supplied).
    listening: listening::Listening,
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
    ///
    /// # Panics
    ///
    /// When the server no longer serves: the Tokio runtime it was started
    /// on has ended (see [`MockServer`]). [`MockServer::addr`] does not
    /// check.
    pub fn base_url(&self) -> String {
        self.assert_serving("base_url");
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The bound address (also once the server no longer serves).
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

    /// Stops accepting, lets in-flight requests finish, closes every
    /// connection (a pooled client's idle kept-alive one too: its next
    /// request is not answered), and returns; exporting spans, the last
    /// batch is sent first (within 5 s).
    pub async fn shutdown(mut self) {
        // Not shut down: the requests waiting in the backlog are answered
        // (the serving task's listener keeps the socket until then).
        self.listening.release();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        #[cfg(feature = "otlp")]
        crate::http::server::flush(&self.spans).await;
    }

    /// Whether the serving task still runs (not when the runtime it was
    /// started on has ended, taking it along).
    fn serving(&self) -> bool {
        self.task.as_ref().is_some_and(|task| !task.is_finished())
    }

    /// Panics, saying why, when the server no longer serves.
    pub(crate) fn assert_serving(&self, called: &str) {
        assert!(
            self.serving(),
            "payments-mock-server: MockServer::{called}() on a server that is no longer serving: \
             the Tokio runtime it was started on has ended (a #[tokio::test] ends its runtime \
             when it returns), and the server with it. A server shared by several tests needs \
             a runtime of its own: start it on a dedicated thread with its own multi-thread \
             runtime, kept in a OnceLock (docs/mock-server.md, \"Sharing one server across \
             tests\"; examples/testing_with_the_mock)"
        );
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
        // Before the stop: the serving task may not run again before the
        // test's next connect, which its listener would accept.
        self.listening.shut();
        // And a request on a connection already open is no longer
        // answered (`http/app.rs`): the server is down from here on.
        self.controls
            .state
            .dropped
            .store(true, std::sync::atomic::Ordering::Release);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// One setter's change to the configuration, made at the start on top of
/// what [`MockServerBuilder::config`] gave.
type Setting = Box<dyn FnOnce(&mut crate::config::Config) + Send + Sync>;

/// Options of a [`MockServer`]; each method mirrors a flag of the binary
/// (see each method's flag; `--host`/`--port` are
/// [`MockServerBuilder::listener`], `--log-format` the test's own
/// `tracing` subscriber, `--seed-from FILE` [`MockServerBuilder::seed`]
/// with what was read from the recording).
///
/// [`MockServerBuilder::config`] gives the whole configuration at once;
/// every other setter applies on top of it, whichever comes first:
/// `builder().api_key("k", None).config(config)` keeps the key.
#[derive(Default)]
#[must_use = "a builder does nothing until `start` is called"]
pub struct MockServerBuilder {
    /// What [`MockServerBuilder::config`] gave; the defaults without it.
    config: crate::config::Config,
    /// Every other setter's change, in order.
    settings: Vec<Setting>,
    listener: Option<std::net::TcpListener>,
    sightings: Vec<crate::seed::Sighting>,
    #[cfg(feature = "tls")]
    tls: tls::TlsChoice,
}

impl std::fmt::Debug for MockServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = f.debug_struct("MockServerBuilder");
        shown
            .field("config", &self.config)
            .field("settings_on_top", &self.settings.len())
            .field("listener", &self.listener)
            .field("sightings", &self.sightings.len());
        #[cfg(feature = "tls")]
        shown.field("tls", &self.tls);
        shown.finish()
    }
}
