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
use crate::domain::journal::{CAPACITY, JournalEntry};
use crate::domain::payer::{PayerError, PayerOutcome, play_payer};
use crate::domain::port::{PageQuery, PaymentPageKey, Store as _, StoreError};
use crate::domain::transaction::{PayerAction, Status};
use crate::error::Error;
use crate::fault_rules::{FaultRule, RuleError, RuleView};
use crate::faults::Fault;
use crate::state::AppState;
use crate::store::{Durability, StoreSpec};

#[cfg(feature = "tls")]
mod tls;

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
    state: AppState,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
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

    /// Moves the virtual clock forward (as `POST /_mock/clock/advance`),
    /// for every replica of the store.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone): the HTTP control
    /// answers 503 instead.
    pub async fn advance_clock(&self, by: Duration) {
        expect_store(self.state.store.advance_clock(by).await);
    }

    /// Virtual now.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn now(&self) -> DateTime<Utc> {
        expect_store(self.state.store.now().await)
    }

    /// Every transaction, oldest first, as the API would show it now.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn transactions(&self) -> Vec<StoredTransaction> {
        let now = self.now().await;
        let page = self
            .state
            .store
            .page(
                &PageQuery::oldest_first(None, usize::MAX),
                |_| true,
                |r| {
                    self.state.coverage.observe(r, now);
                    let view = r.view(now);
                    let confirmation = r.confirmation.as_deref();
                    StoredTransaction {
                        transaction_id: r.id.to_string(),
                        merchant_id: r.fields.merchant_id,
                        reference_no: r.fields.reference_no.to_string(),
                        product_code: r.fields.product_code.to_string(),
                        amount_minor: r.fields.amount_minor,
                        currency_code: r.fields.currency_code.to_string(),
                        status: view.status.as_str().to_owned(),
                        created_at: r.created_at,
                        last_modified_at: view.last_modified_at,
                        confirmed_at: confirmation.map(|c| c.confirmed_at),
                        provider_reference: confirmation.and_then(|c| c.provider_reference.clone()),
                        error_message: (view.status == Status::Failed)
                            .then(|| view.message.map(str::to_owned))
                            .flatten(),
                        payment_url: r.payment_page().map(|page| {
                            crate::domain::redirect::payment_url(
                                &self.state.public_url,
                                &page.token,
                            )
                        }),
                    }
                },
            )
            .await;
        expect_store(page)
            .map(|page| page.items)
            .unwrap_or_default()
    }

    /// Plays the payer of a confirmed redirect-based transaction (CONTRACT
    /// section 13) without a browser: what the payment page's **Pay**,
    /// **Decline** or **Cancel** button does, at the virtual clock's now.
    /// Same as `POST /_mock/transactions/{id}/payer`.
    ///
    /// # Errors
    ///
    /// [`PayerError::NotFound`] for an unknown id;
    /// [`PayerError::NotWaiting`] when the transaction has no payment page
    /// (not a redirect product, not confirmed) or the payer has already
    /// decided or the window has passed.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_mock_server::{MockServer, PayerAction};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = MockServer::start().await;
    /// let api = |path: &str| format!("{}/api/payments/{path}", server.base_url());
    /// let http = reqwest::Client::new();
    /// let initiated: serde_json::Value = http.post(api("initiate"))
    ///     .json(&serde_json::json!({
    ///         "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
    ///         "referenceNo": "ORDER-17", "amount": 4990, "productCode": "ONLINEBANKING",
    ///         "storeId": "S1", "returnUrl": "https://shop.example/back",
    ///     }))
    ///     .send().await?.json().await?;
    /// let id = initiated["data"]["transactionId"].as_str().unwrap_or_default().to_owned();
    /// http.post(api("confirm"))
    ///     .json(&serde_json::json!({ "transactionId": id, "referenceNo": "ORDER-17" }))
    ///     .send().await?;
    /// assert!(server.payment_url(&id).await.is_some());
    ///
    /// let paid = server.payer(&id, PayerAction::Pay).await?;
    /// assert_eq!(paid.status, "SUCCESSFUL");
    /// assert!(paid.redirect_to.starts_with("https://shop.example/back?transactionId="));
    /// // Decided once: the page's buttons do nothing more.
    /// assert!(server.payer(&id, PayerAction::Cancel).await.is_err());
    /// # server.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub async fn payer(
        &self,
        transaction_id: &str,
        action: PayerAction,
    ) -> Result<PayerOutcome, PayerError> {
        let played = expect_store(play_payer(&self.state.store, transaction_id, action).await);
        if let Ok((outcome, _)) = &played {
            self.state
                .coverage
                .transition(Some(Status::Confirmed), outcome.record.recorded_status());
        }
        played.map(|(outcome, _)| outcome)
    }

    /// The payment page address of a confirmed redirect-based transaction
    /// (as in its confirm's `extraProperties`), under the public URL.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn payment_url(&self, transaction_id: &str) -> Option<String> {
        let public_url = &self.state.public_url;
        expect_store(
            self.state
                .store
                .with_payment_page(PaymentPageKey::Transaction(transaction_id), |_, page| {
                    crate::domain::redirect::payment_url(public_url, &page.token)
                })
                .await,
        )
    }

    /// The seed of the fail-rate and latency draws: the one given to
    /// [`MockServerBuilder::fault_seed`], or the random one picked at start.
    /// Giving it to another server repeats this one's faults for the same
    /// requests, in any order.
    pub fn fault_seed(&self) -> u64 {
        self.state.faults.seed()
    }

    /// Queues faults: each next `/api/` request takes one, in order.
    pub fn inject_faults(&self, faults: impl IntoIterator<Item = Fault>) {
        self.state.faults.inject(faults);
    }

    /// Adds a scripted fault rule (CONTRACT section 19), as
    /// `POST /_mock/faults` does: requests it matches meet its fault
    /// instead of an answer, after its `after` and up to its `times`.
    ///
    /// ```
    /// # async fn demo(server: &payments_mock_server::MockServer) {
    /// use payments_mock_server::{Endpoint, Fault, FaultRule};
    /// // The first confirm commits and never answers: the client times out.
    /// let rule = server
    ///     .add_fault_rule(FaultRule::new(Fault::CommitThenHang).on(Endpoint::Confirm))
    ///     .expect("a valid rule");
    /// assert_eq!(rule.fired, 0);
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`RuleError`] naming the field, for a probability outside 0..1, a
    /// reference over 64 characters, a `slow-body` of 0, a gateway status
    /// other than 502, 503 or 504, or more than 1,000 rules.
    pub fn add_fault_rule(&self, rule: FaultRule) -> Result<RuleView, RuleError> {
        self.state.fault_rules.add(rule)
    }

    /// The fault rules, in the order requests meet them, with how often
    /// each met a request and fired.
    pub fn fault_rules(&self) -> Vec<RuleView> {
        self.state.fault_rules.list()
    }

    /// Removes every fault rule; how many there were.
    pub fn clear_fault_rules(&self) -> usize {
        self.state.fault_rules.clear()
    }

    /// The request journal, oldest first (at most the last 1,000; of
    /// every replica of the store).
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn requests(&self) -> Vec<JournalEntry> {
        expect_store(self.state.store.requests_since(0, CAPACITY).await)
    }

    /// What the application under test met of this server since it
    /// started or was last reset: the interface's answers and
    /// transitions, the faults per endpoint, and whether it came back
    /// after each fault that committed (as `GET /_mock/coverage`). See
    /// [`CoverageReport::assert_covered`](crate::CoverageReport::assert_covered).
    pub async fn coverage(&self) -> crate::CoverageReport {
        self.state.coverage()
    }

    /// How many `/api/` requests this server has answered since it
    /// started: every one its journal records, faults included (the
    /// journal itself keeps the last 1,000, and [`MockServer::reset`]
    /// empties it; this count goes on).
    pub fn answered(&self) -> u64 {
        self.state.answered()
    }

    /// Waits until [`MockServer::answered`] reaches `count`: for a test
    /// that acts once another task or process has made its requests,
    /// without polling the journal.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use payments_mock_server::MockServer;
    ///
    /// let server = MockServer::start().await;
    /// let before = server.answered();
    /// let url = format!("{}/api/payments/reference/INV-1/status", server.base_url());
    /// let request = tokio::spawn(async move { reqwest::get(url).await.map(|r| r.status()) });
    /// server.answered_reach(before + 1).await;
    /// assert_eq!(request.await.unwrap().unwrap(), 404);
    /// # }
    /// ```
    pub async fn answered_reach(&self, count: u64) {
        self.state.answered_reach(count).await;
    }

    /// Forgets transactions, journal, queued faults and the coverage; real
    /// time again (for every replica of the store; the coverage is this
    /// process's).
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn reset(&self) {
        expect_store(self.state.reset().await);
    }

    /// The shared state (store, clock, catalogue…), for this workspace's
    /// white-box tests (feature `test-support`).
    #[cfg(feature = "test-support")]
    #[doc(hidden)]
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Stops accepting, lets in-flight requests finish, and returns.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// A store's answer in the embedded server's test helpers, which panic on
/// a store failure (the HTTP controls answer 503 instead).
fn expect_store<T>(result: Result<T, StoreError>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("payments-mock-server: {e}"),
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
        let state = AppState::open(config).await?;
        if random_seed {
            let seed = state.faults.seed();
            tracing::info!(
                fault_seed = seed,
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
                tokio::spawn(crate::http::server::serve_app_tls(
                    listener,
                    state.clone(),
                    server_tls,
                    header_read_timeout,
                    || {},
                    stopped,
                )),
                started,
            ),
            None => (
                tokio::spawn(crate::http::server::serve_app(
                    listener,
                    state.clone(),
                    header_read_timeout,
                    || {},
                    stopped,
                )),
                tls::Started::default(),
            ),
        };
        #[cfg(not(feature = "tls"))]
        let task = tokio::spawn(crate::http::server::serve_app(
            listener,
            state.clone(),
            header_read_timeout,
            || {},
            stopped,
        ));
        Ok(MockServer {
            addr,
            https,
            #[cfg(feature = "tls")]
            tls,
            state,
            stop: Some(stop),
            task: Some(task),
        })
    }
}
