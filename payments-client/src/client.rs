//! [`Client`], its builder, and the calls built on the four endpoints.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{self, Stream, StreamExt};
use uuid::Uuid;

use crate::calls::confirm::ConfirmRequest;
use crate::calls::initiate::InitiateRequest;
use crate::calls::status::Lookup;
use crate::error::Error;
use crate::model::envelope::Reply;
use crate::model::transaction::{Confirmation, Initiated, PaymentStatus};
use crate::reconcile;
use crate::transport::{Transport, finish, redact_url};
use tracing::Instrument as _;

mod builder;
mod proxy;
#[cfg(any(feature = "rustls", feature = "native-tls"))]
mod tls;

pub use builder::ClientBuilder;
pub use proxy::{EnvironmentProxy, environment_proxy, skips_environment_proxy};

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

/// The least pause between polls: a zero one would poll without pause.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(10);

impl WaitOptions {
    /// How long to wait in total.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }

    /// The first pause between polls (at least 10 ms); it doubles after
    /// each poll.
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
        ClientBuilder::new(base_url.into())
    }

    /// The base URL as the client uses it: parsed and normalized (scheme
    /// and host in lower case, a default port left out, `.` and `..`
    /// segments resolved, percent-encoding as the URL standard writes it),
    /// without a trailing slash; not necessarily the text given to
    /// [`Client::builder`].
    ///
    /// It keeps any `user:pass@` userinfo; do not print it. `Debug`, error
    /// messages and logs of this crate show it with the userinfo replaced
    /// by `***`.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// let client = Client::builder("HTTP://LocalHost:80/Pay/../v1/").build()?;
    /// assert_eq!(client.base_url(), "http://localhost/v1");
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// Creates a payment transaction.
    ///
    /// Retried per the policy; a retry answered `DUPLICATE_REFERENCE_NO` is
    /// reconciled by reading the reference back: the transaction found is
    /// the result (marked [`Reply::is_reconciled`]) when its amount and
    /// product are the request's.
    ///
    /// A status read carries no currency, so that amount is compared in
    /// the request's currency and cannot tell currencies apart: a
    /// transaction under the same reference in another currency with the
    /// same digits (MYR 1000.00 for a JPY 1000 request, USD 10.00 for MYR
    /// 10.00) is taken as the result and stamped with the request's
    /// currency. Only an amount no value of the request's currency can be
    /// (`1000.50` for a JPY request) fails, with [`Error::Reconciliation`].
    /// A referenceNo must name one order, and never be reused for another.
    ///
    /// The answer must echo the request's `referenceNo`, `amount`,
    /// `productCode` and currency and carry a `transactionId`; one that
    /// does not is settled by reading the sent reference back, and is a
    /// success (marked [`Reply::is_reconciled`]) only if that transaction
    /// is this request's; an answer in another currency never is (a status
    /// read shows none to settle it with).
    ///
    /// # Cancellation
    ///
    /// Dropping this future before it completes (your own
    /// `tokio::time::timeout` around it, a `select!`) leaves the call's
    /// outcome unknown: the service may have created the transaction. A
    /// new call with the same reference may then fail on its first attempt
    /// with `DUPLICATE_REFERENCE_NO`, whose [`Error::outcome`] is
    /// `NotCarriedOut` (true of the new call only) and which
    /// [`Error::is_repeat`] names: read the reference back
    /// ([`status_by_reference`](Self::status_by_reference)) before acting,
    /// and never pay the order again under a new reference. Bound the call
    /// with the client's [`timeout`](ClientBuilder::timeout) and
    /// [`deadline`](ClientBuilder::deadline) rather than by dropping it.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::Reconciliation`] when a retry found the
    /// reference holding a different transaction; [`Error::AnswerMismatch`]
    /// when the answer was about another request and the read-back did not
    /// show this one; an error that [`is_repeat`](Error::is_repeat) when the
    /// reference already holds a transaction this call did not create.
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
        let span = self.inner.call_span(&call, &ctx);
        span.record("payments.reference_no", req.reference_no());
        let result = async {
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
        .instrument(span.clone())
        .await;
        if let Ok(reply) = &result {
            span.record(
                "payments.transaction_id",
                reply.data().transaction_id.as_ref() as &str,
            );
        }
        finish(&self.inner, "initiate", &span, &result);
        result
    }

    /// Confirms a transaction.
    ///
    /// A retry answered `TRANSACTION_ALREADY_CONFIRMED` is reconciled by
    /// reading the status.
    ///
    /// # Cancellation
    ///
    /// Dropping this future before it completes leaves the call's outcome
    /// unknown: the service may have confirmed (and the payer paid). A new
    /// confirm may then fail on its first attempt with
    /// `TRANSACTION_ALREADY_CONFIRMED`, `NotCarriedOut` of the new call
    /// and [`Error::is_repeat`]: read the status
    /// ([`status`](Self::status)) for the payment's outcome before acting.
    /// Prefer the client's [`timeout`](ClientBuilder::timeout) and
    /// [`deadline`](ClientBuilder::deadline) to dropping the call.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::AnswerMismatch`] when the answer is for
    /// another transaction or reference, or its amount is not the one this
    /// client initiated the transaction with; an error that
    /// [`is_repeat`](Error::is_repeat) when the transaction was already
    /// confirmed by another call.
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
        let span = self.inner.call_span(&call, &ctx);
        span.record("payments.reference_no", req.reference_no());
        span.record(
            "payments.transaction_id",
            req.transaction_id().as_ref() as &str,
        );
        let result = async {
            let reply = match self.inner.execute::<Confirmation>(&call, &ctx).await {
                Ok(reply) => reply,
                Err(failed) => reconcile::confirm(&self.inner, &ctx, &req, failed).await?,
            };
            if let Some(guard) = &self.inner.guard {
                guard.confirm(&req, &reply).map_err(Error::AnswerMismatch)?;
            }
            Ok(reply)
        }
        .instrument(span.clone())
        .await;
        finish(&self.inner, "confirm", &span, &result);
        result
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
        self.inner
            .read_status(Lookup::Id(transaction_id.as_ref()), &ctx)
            .await
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
        self.inner.read_status(lookup, &ctx).await
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
        let deadline = crate::transport::later(started, options.timeout);
        // Never a busy loop: a zero first pause is the least one.
        let mut interval = options.poll_interval.max(MIN_POLL_INTERVAL);
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
                .min(options.max_poll_interval.max(options.poll_interval))
                .max(MIN_POLL_INTERVAL);
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
        self.inner
            .read_status(Lookup::Id(transaction_id), &ctx)
            .await
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
