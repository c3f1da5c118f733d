//! [`Client`], its builder, and the calls built on the four endpoints.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{self, Stream, StreamExt};
use reqwest::header::HeaderValue;
use secrecy::SecretString;
use uuid::Uuid;

use crate::calls::confirm::ConfirmRequest;
use crate::calls::initiate::InitiateRequest;
use crate::calls::status::Lookup;
use crate::error::Error;
use crate::guard::{self, AnswerGuard, DEFAULT_ANSWER_MEMORY};
use crate::model::envelope::Reply;
use crate::model::transaction::{Confirmation, Initiated, PaymentStatus};
use crate::reconcile;
use crate::retry::RetryPolicy;
use crate::secret::Credential;
use crate::transport::{Transport, redact_url};

#[cfg(any(feature = "rustls", feature = "native-tls"))]
mod tls;

/// The default `User-Agent`.
pub const DEFAULT_USER_AGENT: &str = concat!("payments-client/", env!("CARGO_PKG_VERSION"));

/// A client of the payment-transaction service.
///
/// Cheap to clone (one `Arc`), `Send + Sync`, and every clone shares one
/// connection pool. Each call gets one `X-Request-Id`, sent on every attempt
/// and carried by its [`Reply`] or [`Error`].
///
/// # Examples
///
/// ```no_run
/// use payments_client::{Client, InitiateRequest, MinorAmount, Uuid};
/// # async fn run() -> Result<(), payments_client::Error> {
/// let client = Client::builder("http://127.0.0.1:8080").api_key("sk_test").build()?;
/// let merchant = Uuid::parse_str("4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61").expect("literal uuid");
/// let req = InitiateRequest::builder(merchant, "INV-1", MinorAmount::new(1050)?, "TOPUP", "STORE-1")
///     .payer_id("60123456789")
///     .build()?;
/// let reply = client.initiate(req).await?;
/// println!("{} is {}", reply.data().transaction_id, reply.data().status);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Transport>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &redact_url(&self.inner.base))
            .field("credential", &self.inner.credential)
            .field("timeout", &self.inner.timeout)
            .field("deadline", &self.inner.deadline)
            .field("retry", &self.inner.retry)
            .field("check_answers", &self.inner.guard.is_some())
            .finish_non_exhaustive()
    }
}

/// Builder of a [`Client`]; see [`Client::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until build() is called"]
pub struct ClientBuilder {
    base_url: String,
    api_key: Option<SecretString>,
    auth_header: Option<String>,
    connect_timeout: Option<Duration>,
    timeout: Option<Duration>,
    deadline: Option<Duration>,
    retry: RetryPolicy,
    user_agent: String,
    http_client: Option<reqwest::Client>,
    check_answers: bool,
    answer_memory: usize,
    #[cfg(any(feature = "rustls", feature = "native-tls"))]
    tls: tls::TlsOptions,
}

impl ClientBuilder {
    /// The API key, sent as `Authorization: Bearer KEY` (or in the header
    /// set with [`auth_header`](Self::auth_header)). Kept in a
    /// [`SecretString`]; never logged or shown by `Debug`.
    pub fn api_key(mut self, key: impl Into<SecretString>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sends the key as the raw value of this header instead of
    /// `Authorization: Bearer`.
    pub fn auth_header(mut self, name: impl Into<String>) -> Self {
        self.auth_header = Some(name.into());
        self
    }

    /// Time allowed to open a connection (default 10 s). Ignored with
    /// [`http_client`](Self::http_client): configure that client instead.
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = Some(d);
        self
    }

    /// Time allowed for each attempt, from sending to the last body byte
    /// (default 30 s).
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }

    /// No per-attempt time limit (the [`deadline`](Self::deadline), if set,
    /// still applies).
    pub fn no_timeout(mut self) -> Self {
        self.timeout = None;
        self
    }

    /// Total time for one logical call, retries and backoff included (none
    /// by default). No retry is started that would end after it.
    pub fn deadline(mut self, d: Duration) -> Self {
        self.deadline = Some(d);
        self
    }

    /// When and how to retry. Default: [`RetryPolicy::default`].
    // CONTRACT section 12.
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The `User-Agent` header (default `payments-client/VERSION`).
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }

    /// Uses the caller's own `reqwest::Client` (its pool, TLS and proxy
    /// settings); [`build`](Self::build) then refuses
    /// `add_root_certificate_pem` and `identity_pem`.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// Whether every answer is checked against its request (default
    /// `true`).
    ///
    /// With the check on, an answer about something else than what was
    /// asked (another reference, amount, product, currency or transaction,
    /// a confirm whose amount is not the one initiated, one transactionId
    /// answered for two references) is [`Error::AnswerMismatch`] instead
    /// of a success.
    ///
    /// Turn it off only for a service known to rewrite its echoes (a
    /// gateway that upper-cases references, say), and then check the
    /// answers yourself: **without the check, an answer for another
    /// merchant's or another order's transaction is handed to you as a
    /// success**, and confirming, shipping or booking against it moves
    /// money for the wrong order.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// let trusting = Client::builder("http://127.0.0.1:8080").check_answers(false).build()?;
    /// assert!(format!("{trusting:?}").contains("check_answers: false"));
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn check_answers(mut self, on: bool) -> Self {
        self.check_answers = on;
        self
    }

    /// How many transactions the answer check remembers (default
    /// 10,000, a couple of megabytes when full): for each, the reference
    /// (and merchant) it was answered for and, for those this client
    /// initiated, the amount. A transactionId answered for another
    /// reference, or a confirm amount that is not the initiated one, is
    /// only noticed while the transaction is remembered; the least
    /// recently seen leaves first. 0 keeps the per-call checks and
    /// remembers nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// // A batch job that initiates and confirms a million payments.
    /// let client = Client::builder("http://127.0.0.1:8080")
    ///     .answer_memory(1_000_000)
    ///     .build()?;
    /// # drop(client);
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn answer_memory(mut self, transactions: usize) -> Self {
        self.answer_memory = transactions;
        self
    }

    /// Builds the client.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a base URL that is not an absolute `http(s)`
    /// URL without query or fragment, an invalid key, header name or user
    /// agent, or when the HTTP client cannot be created.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::{Client, RetryPolicy};
    /// use std::time::Duration;
    /// let client = Client::builder("https://payments.example/prefix/")
    ///     .api_key("sk_live_secret")
    ///     .timeout(Duration::from_secs(5))
    ///     .deadline(Duration::from_secs(20))
    ///     .retry_policy(RetryPolicy::default().max_retries(3))
    ///     .build()?;
    /// assert!(!format!("{client:?}").contains("sk_live_secret"));
    /// assert!(Client::builder("not a url").build().is_err());
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn build(self) -> Result<Client, Error> {
        // Messages show the URL without `user:pass@`.
        let shown = redact_url(&self.base_url);
        let parsed = url::Url::parse(self.base_url.trim())
            .map_err(|e| Error::config(format!("invalid base URL {shown:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() {
            return Err(Error::config(format!(
                "base URL {shown:?} must be an absolute http or https URL"
            )));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(Error::config(format!(
                "base URL {shown:?} must not have a query or fragment"
            )));
        }
        let base = parsed.as_str().trim_end_matches('/').to_owned();
        let base_path = parsed.path().trim_end_matches('/').to_owned();
        let credential = self
            .api_key
            .as_ref()
            .map(|k| Credential::new(k, self.auth_header.as_deref()))
            .transpose()?;
        let user_agent = HeaderValue::from_str(&self.user_agent)
            .map_err(|_| Error::config(format!("invalid user agent {:?}", self.user_agent)))?;
        #[cfg(any(feature = "rustls", feature = "native-tls"))]
        if self.http_client.is_some() && !self.tls.is_empty() {
            return Err(Error::config(
                "add_root_certificate_pem and identity_pem configure the client's own HTTP client; with http_client, configure that one",
            ));
        }
        let http = match self.http_client {
            Some(c) => c,
            // Redirects are not followed: a redirected POST would turn into a
            // GET, and the service never redirects.
            None => {
                let builder = reqwest::Client::builder()
                    .connect_timeout(self.connect_timeout.unwrap_or(Duration::from_secs(10)))
                    .redirect(reqwest::redirect::Policy::none());
                #[cfg(any(feature = "rustls", feature = "native-tls"))]
                let builder = self.tls.apply(builder)?;
                builder.build().map_err(|e| {
                    Error::config(format!(
                        "cannot create the HTTP client: {}",
                        crate::error::chain(&e)
                    ))
                })?
            }
        };
        // `user:pass@` in the base URL becomes `Authorization: Basic`, as
        // reqwest does for a URL it is given; done once here, with reqwest's
        // own code, so each call starts from a URL without it.
        let probe = http.get(parsed).build().map_err(|e| {
            Error::config(format!("invalid base URL {shown:?}: {}", e.without_url()))
        })?;
        let basic_auth = probe.headers().get(reqwest::header::AUTHORIZATION).cloned();
        let base_url = probe.url().clone();
        Ok(Client {
            inner: Arc::new(Transport {
                http,
                base,
                base_url,
                base_path,
                basic_auth,
                credential,
                user_agent,
                timeout: self.timeout,
                deadline: self.deadline,
                retry: self.retry,
                guard: self
                    .check_answers
                    .then(|| AnswerGuard::new(self.answer_memory)),
            }),
        })
    }
}

/// How [`Client::wait_for_final`] polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    timeout: Duration,
    poll_interval: Duration,
    max_poll_interval: Duration,
}

impl Default for WaitOptions {
    /// Up to 60 s, polling after 1 s, doubling to at most 10 s.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            poll_interval: Duration::from_secs(1),
            max_poll_interval: Duration::from_secs(10),
        }
    }
}

impl WaitOptions {
    /// How long to wait in total.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }

    /// The first pause between polls; it doubles after each poll.
    pub fn poll_interval(mut self, d: Duration) -> Self {
        self.poll_interval = d;
        self
    }

    /// The longest pause between polls.
    pub fn max_poll_interval(mut self, d: Duration) -> Self {
        self.max_poll_interval = d;
        self
    }
}

impl Client {
    /// Starts configuring a client for `base_url` (with or without a
    /// trailing slash or a path prefix).
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// let client = Client::builder("http://127.0.0.1:8080/").build()?;
    /// assert_eq!(client.base_url(), "http://127.0.0.1:8080");
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn builder(base_url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base_url: base_url.into(),
            api_key: None,
            auth_header: None,
            connect_timeout: None,
            timeout: Some(Duration::from_secs(30)),
            deadline: None,
            retry: RetryPolicy::default(),
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            http_client: None,
            check_answers: true,
            answer_memory: DEFAULT_ANSWER_MEMORY,
            #[cfg(any(feature = "rustls", feature = "native-tls"))]
            tls: tls::TlsOptions::default(),
        }
    }

    /// The base URL, without a trailing slash.
    ///
    /// Returned exactly as configured, including any `user:pass@`
    /// userinfo; do not print it. `Debug`, error messages and logs of this
    /// crate show it with the userinfo replaced by `***`.
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// Creates a payment transaction.
    ///
    /// Retried per the policy; a retry answered `DUPLICATE_REFERENCE_NO` is
    /// reconciled by reading the reference back.
    ///
    /// The answer must echo the request's `referenceNo`, `amount`,
    /// `productCode` and currency and carry a `transactionId`; one that
    /// does not is settled by reading the sent reference back, and is a
    /// success (marked [`Reply::is_reconciled`]) only if that transaction
    /// is this request's.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::Reconciliation`] when a retry found the
    /// reference holding a different transaction; [`Error::AnswerMismatch`]
    /// when the answer was about another request and the read-back did not
    /// show this one.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::{Client, InitiateRequest, MinorAmount, Currency};
    /// # async fn run(client: Client, merchant: payments_client::Uuid) -> Result<(), payments_client::Error> {
    /// let req = InitiateRequest::builder(merchant, "INV-7", MinorAmount::new(15000)?, "BILLPAY", "S1")
    ///     .currency(Currency::MYR)
    ///     .payer_id("ACC-1")
    ///     .build()?;
    /// let reply = client.initiate(req).await?;
    /// assert!(reply.attempts() >= 1);
    /// # Ok(()) }
    /// ```
    pub async fn initiate(&self, req: InitiateRequest) -> Result<Reply<Initiated>, Error> {
        let ctx = self.inner.context();
        let call = req.call()?;
        let reply = match self.inner.execute::<Initiated>(&call, &ctx).await {
            Ok(reply) => reply,
            Err(failed) => reconcile::initiate(&self.inner, &ctx, &req, failed).await?,
        };
        let Some(guard) = &self.inner.guard else {
            return Ok(reply);
        };
        match guard.initiate(&req, &reply) {
            Ok(()) => Ok(reply),
            // A reconciled reply is already a read-back: nothing to settle.
            Err(mismatch) if reply.is_reconciled() => Err(Error::AnswerMismatch(mismatch)),
            Err(mismatch) => {
                reconcile::settle_initiate(&self.inner, &ctx, &req, mismatch, reply.attempts())
                    .await
            }
        }
    }

    /// Confirms a transaction.
    ///
    /// A retry answered `TRANSACTION_ALREADY_CONFIRMED` is reconciled by
    /// reading the status.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::AnswerMismatch`] when the answer is for
    /// another transaction or reference, or its amount is not the one this
    /// client initiated the transaction with.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::{Client, ConfirmRequest};
    /// # async fn run(client: Client) -> Result<(), payments_client::Error> {
    /// let req = ConfirmRequest::builder("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", "INV-7")
    ///     .confirmation_code("123456")
    ///     .build()?;
    /// let reply = client.confirm(req).await?;
    /// println!("{} {}", reply.data().status, reply.data().amount);
    /// # Ok(()) }
    /// ```
    pub async fn confirm(&self, req: ConfirmRequest) -> Result<Reply<Confirmation>, Error> {
        let ctx = self.inner.context();
        let call = req.call()?;
        let reply = match self.inner.execute::<Confirmation>(&call, &ctx).await {
            Ok(reply) => reply,
            Err(failed) => reconcile::confirm(&self.inner, &ctx, &req, failed).await?,
        };
        if let Some(guard) = &self.inner.guard {
            guard.confirm(&req, &reply).map_err(Error::AnswerMismatch)?;
        }
        Ok(reply)
    }

    /// Reads a transaction by id.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; `TRANSACTION_NOT_FOUND` (404) for an unknown id;
    /// [`Error::AnswerMismatch`] when the answer is about another
    /// transaction.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::Client;
    /// # async fn run(client: Client) -> Result<(), payments_client::Error> {
    /// let reply = client.status("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01").await?;
    /// if reply.data().status.is_final() { println!("done"); }
    /// # Ok(()) }
    /// ```
    pub async fn status(
        &self,
        transaction_id: impl AsRef<str>,
    ) -> Result<Reply<PaymentStatus>, Error> {
        let ctx = self.inner.context();
        guard::read_status(&self.inner, Lookup::Id(transaction_id.as_ref()), &ctx).await
    }

    /// Reads a transaction by the merchant's reference, optionally scoped to
    /// a merchant (sent as the `merchantId` query parameter).
    ///
    /// # Errors
    ///
    /// Any [`Error`]; `AMBIGUOUS_REFERENCE_NO` when several merchants use
    /// the reference and no merchant was given; [`Error::AnswerMismatch`]
    /// when the answer is about another reference.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::Client;
    /// # async fn run(client: Client, merchant: payments_client::Uuid) -> Result<(), payments_client::Error> {
    /// let reply = client.status_by_reference("INV/2026/0001", Some(merchant)).await?;
    /// println!("{}", reply.data().transaction_id);
    /// # Ok(()) }
    /// ```
    pub async fn status_by_reference(
        &self,
        reference_no: impl AsRef<str>,
        merchant_id: Option<Uuid>,
    ) -> Result<Reply<PaymentStatus>, Error> {
        let lookup = Lookup::Reference {
            reference_no: reference_no.as_ref(),
            merchant_id,
        };
        let ctx = self.inner.context();
        guard::read_status(&self.inner, lookup, &ctx).await
    }

    /// Polls the status until it is final (`SUCCESSFUL`, `FAILED`,
    /// `EXPIRED`) or the wait times out. The pause between polls doubles
    /// from the poll interval up to the maximum.
    ///
    /// A poll that fails with a retryable error (after the client's own
    /// retries) does not end the wait; any other error does.
    ///
    /// # Errors
    ///
    /// [`Error::WaitTimeout`] with the last status read, or the first
    /// non-retryable error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::{Client, WaitOptions};
    /// # use std::time::Duration;
    /// # async fn run(client: Client) -> Result<(), payments_client::Error> {
    /// let opts = WaitOptions::default().timeout(Duration::from_secs(30)).poll_interval(Duration::from_millis(500));
    /// let reply = client.wait_for_final("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", opts).await?;
    /// assert!(reply.data().status.is_final());
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_final(
        &self,
        transaction_id: impl AsRef<str>,
        options: WaitOptions,
    ) -> Result<Reply<PaymentStatus>, Error> {
        let id = transaction_id.as_ref();
        let started = tokio::time::Instant::now();
        let deadline = started + options.timeout;
        let mut interval = options.poll_interval;
        let mut last = None;
        loop {
            // Each poll (its retries and backoff included) ends by the wait's
            // deadline, so the wait keeps to its timeout.
            let poll = tokio::time::timeout_at(deadline, self.status_until(id, deadline)).await;
            match poll {
                Ok(Ok(reply)) if reply.data().status.is_final() => return Ok(reply),
                Ok(Ok(reply)) => last = Some(Box::new(reply)),
                Ok(Err(e)) if e.is_retryable() => {
                    tracing::debug!(error = %e, "poll failed; waiting on")
                }
                Ok(Err(e)) => return Err(e),
                Err(_elapsed) => {}
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(Error::WaitTimeout {
                    waited: now - started,
                    last,
                });
            }
            tokio::time::sleep(interval.min(deadline - now)).await;
            interval = interval
                .saturating_mul(2)
                .min(options.max_poll_interval.max(options.poll_interval));
        }
    }

    /// [`status`](Self::status) with its deadline cut to `until`.
    async fn status_until(
        &self,
        transaction_id: &str,
        until: tokio::time::Instant,
    ) -> Result<Reply<PaymentStatus>, Error> {
        let mut ctx = self.inner.context();
        ctx.deadline = Some(ctx.deadline.map_or(until, |d| d.min(until)));
        guard::read_status(&self.inner, Lookup::Id(transaction_id), &ctx).await
    }

    /// Reads many transactions at once, at most `concurrency` in flight,
    /// and returns the results in input order. One failure does not stop
    /// the others.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::Client;
    /// # async fn run(client: Client) {
    /// let ids = ["id-1", "id-2", "id-3"];
    /// for (id, result) in ids.iter().zip(client.status_many(ids, 4).await) {
    ///     match result {
    ///         Ok(reply) => println!("{id}: {}", reply.data().status),
    ///         Err(e) => println!("{id}: {e}"),
    ///     }
    /// }
    /// # }
    /// ```
    pub async fn status_many<I, S>(
        &self,
        ids: I,
        concurrency: usize,
    ) -> Vec<Result<Reply<PaymentStatus>, Error>>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let ids: Vec<String> = ids.into_iter().map(|s| s.as_ref().to_owned()).collect();
        stream::iter(ids)
            .map(|id| async move { self.status(&id).await })
            .buffered(concurrency.max(1))
            .collect()
            .await
    }

    /// Like [`status_many`](Self::status_many), but yields `(index, result)`
    /// as each read completes, for progress displays. The stream owns a
    /// clone of the client.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::Client;
    /// use futures::StreamExt;
    /// # async fn run(client: Client) {
    /// let mut results = client.status_stream(vec!["id-1".to_owned(), "id-2".to_owned()], 8);
    /// while let Some((index, result)) = results.next().await {
    ///     println!("#{index}: {}", result.is_ok());
    /// }
    /// # }
    /// ```
    pub fn status_stream<I, S>(
        &self,
        ids: I,
        concurrency: usize,
    ) -> impl Stream<Item = (usize, Result<Reply<PaymentStatus>, Error>)> + Send + 'static
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let ids: Vec<String> = ids.into_iter().map(|s| s.as_ref().to_owned()).collect();
        let client = self.clone();
        stream::iter(ids.into_iter().enumerate())
            .map(move |(i, id)| {
                let client = client.clone();
                async move { (i, client.status(&id).await) }
            })
            .buffer_unordered(concurrency.max(1))
    }
}
