//! A typed async client for a merchant's payments: create a payment,
//! confirm it, read its status. Money is exact, retries never pay twice,
//! and every answer is checked against the question it answers.
//!
//! # Paying, step by step
//!
//! 1. Build one [`Client`] with [`Client::builder`] and share it: it is
//!    cheap to clone and every clone uses one connection pool.
//! 2. [`Client::initiate`] an [`InitiateRequest`]: your merchant id, your
//!    own reference for the order, the amount in minor units (1050 is
//!    10.50 MYR), the product and the store. The answer carries the
//!    service's `transaction_id`.
//! 3. [`Client::confirm`] a [`ConfirmRequest`] with that id and your
//!    reference (and the payer's OTP, for products that need one).
//! 4. Read the outcome whenever you need it: [`Client::status`] by id,
//!    [`Client::status_by_reference`] by your reference, or
//!    [`Client::wait_for_final`] until it is `SUCCESSFUL`, `FAILED` or
//!    `EXPIRED`.
//!
//! ```no_run
//! use payments_client::{money, Client, ConfirmRequest, Currency, Error, InitiateRequest, Uuid};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let client = Client::builder("https://payments.example.com")
//!         .api_key("sk_live_...")
//!         .build()?;
//!
//!     let merchant = Uuid::parse_str("4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61")?;
//!     let amount = money::to_minor("10.50".parse()?, Currency::MYR)?; // 1050 sen
//!     let request = InitiateRequest::builder(merchant, "ORDER-1001", amount, "TOPUP", "STORE-1")
//!         .payer_id("60123456789")
//!         .extra_property("campaign", "SPRING-SALE")
//!         .build()?; // checked here: every problem reported at once
//!
//!     let initiated = client.initiate(request).await?;
//!     let tx = initiated.data();
//!     println!("created {} ({})", tx.transaction_id, tx.status);
//!
//!     let confirm = ConfirmRequest::builder(&tx.transaction_id, tx.reference_no.clone()).build()?;
//!     match client.confirm(confirm).await {
//!         Ok(confirmed) => println!("{} {}", confirmed.data().status, confirmed.data().amount),
//!         // Whether the service may have done it anyway: look before trying again.
//!         Err(e) if e.outcome() == payments_client::Outcome::Unknown => {
//!             let now = client.status_by_reference("ORDER-1001", Some(merchant)).await?;
//!             println!("after {e}: the payment is {}", now.data().status);
//!         }
//!         // Refused as a repeat: an earlier call (one you gave up on, say)
//!         // confirmed it. What does the service hold?
//!         Err(e) if e.is_repeat() => {
//!             let now = client.status(&tx.transaction_id).await?;
//!             println!("already confirmed: the payment is {}", now.data().status);
//!         }
//!         Err(Error::Api(api)) => println!("refused: {} {}", api.code, api.message),
//!         Err(e) => return Err(e.into()),
//!     }
//!     Ok(())
//! }
//! ```
//!
//! The client needs only Tokio's timers; an application also needs a
//! runtime and `#[tokio::main]`. The crate is not on crates.io yet, so it
//! comes from the repository (or a path to a checkout):
//!
//! ```toml
//! [dependencies]
//! payments-client = { git = "https://example.invalid/payments-toolkit" }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! Requests are checked before anything is sent, for what the interface
//! document states (required fields, amount, ISO codes) and what the client
//! needs (a reference it can put in a URL); lengths, product codes and
//! other limits are the service's to decide. Money never passes through a
//! float:
//!
//! ```
//! use payments_client::{money, Currency, InitiateRequest, MinorAmount, Uuid};
//!
//! let merchant = Uuid::parse_str("4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61")?;
//! let amount = money::to_minor("150.00".parse()?, Currency::MYR)?;
//! assert_eq!(amount, MinorAmount::new(15000)?);
//! assert_eq!(money::to_major(amount, Currency::JPY)?.to_string(), "15000");
//!
//! let req = InitiateRequest::builder(merchant, "INV/2026/0001", amount, "TOPUP", "STORE-1")
//!     .payer_id("60123456789")
//!     .build()?;
//! assert_eq!(req.effective_currency(), Currency::MYR);
//!
//! let bad = InitiateRequest::builder(merchant, "", amount, "Topup", "").build().unwrap_err();
//! assert_eq!(
//!     bad.to_string(),
//!     "invalid request: referenceNo must not be empty; storeId must not be empty"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What you get back
//!
//! Every success is a [`Reply`]: the typed [`data`](Reply::data) ([`Initiated`],
//! [`Confirmation`], [`PaymentStatus`]), the [`request_id`](Reply::request_id)
//! sent as `X-Request-Id` (quote it to the provider), the number of
//! [`attempts`](Reply::attempts) and the [`raw_envelope`](Reply::raw_envelope)
//! exactly as received. Statuses and error codes the service adds later are
//! kept in `Other`, never an error.
//!
//! Every failure is one [`Error`]: match on its class, and ask
//! [`Error::outcome`] whether the service may have carried the call out
//! ([`Outcome::Unknown`]: look the payment up before trying again) or
//! certainly did not ([`Outcome::NotCarriedOut`]). The outcome is of that
//! call alone: a call whose future you dropped (your own
//! `tokio::time::timeout`) has an unknown one, and a later call of the same
//! payment refused as a repeat ([`Error::is_repeat`]:
//! `DUPLICATE_REFERENCE_NO`, `TRANSACTION_ALREADY_CONFIRMED`) means it was
//! carried out: read it back before acting. Prefer the client's own
//! [`timeout`](ClientBuilder::timeout) and
//! [`deadline`](ClientBuilder::deadline) to dropping a call.
//!
//! # Retries never pay twice
//!
//! Connection failures, timeouts, 429, 500, 502, 503 and 504 are retried
//! (twice by default, exponential backoff with full jitter, `Retry-After`
//! honoured up to a cap; see [`RetryPolicy`]). Retrying initiate and
//! confirm is safe: when a retry is rejected as a repeat, the client reads
//! the transaction back and returns it, marked [`Reply::is_reconciled`], or
//! fails with [`Error::Reconciliation`] if it is not yours. A success
//! answer that cannot be read is read back the same way. A status read
//! carries no currency, so a read-back is compared in your request's:
//! a referenceNo must name one order and never be reused for another
//! (see [`Client::initiate`]).
//!
//! # Every answer is checked
//!
//! An answer about something else than what was asked (another reference,
//! amount, product or currency for an initiate; another transaction or
//! reference for a confirm or a status read; a confirm amount that is not
//! the one you initiated; one transaction id answered for two references)
//! is [`Error::AnswerMismatch`], never a success, so you never confirm or
//! ship against another order's transaction. Spellings the service may
//! choose (`150.0` for `150.00`, timestamps with offsets, `currencyCode`
//! left out meaning MYR) pass. An initiate whose answer disagrees is first
//! settled by reading your reference back. [`ClientBuilder::check_answers`]
//! turns the check off, with the risk it names.
//!
//! What to do with one: the outcome is unknown (the service did something,
//! but not provably what you asked), so do not ship, book or confirm
//! again on it. Look the payment up by your own reference and act on what
//! the service holds:
//!
//! ```no_run
//! use payments_client::{Client, ConfirmRequest, Error, TransactionId, Uuid};
//!
//! # async fn run(client: Client, merchant: Uuid, id: TransactionId) -> Result<(), Error> {
//! let confirm = ConfirmRequest::builder(id, "ORDER-1001").build()?;
//! match client.confirm(confirm).await {
//!     Ok(confirmed) => println!("ORDER-1001 is {}", confirmed.data().status),
//!     Err(Error::AnswerMismatch(mismatch)) => {
//!         // Each field that disagrees, with what was sent and what came back;
//!         // quote the request id to the provider.
//!         eprintln!("{mismatch} (request id {})", mismatch.request_id);
//!         // Unknown outcome: ask about your reference before acting.
//!         let now = client.status_by_reference("ORDER-1001", Some(merchant)).await?;
//!         println!("ORDER-1001 is {} ({})", now.data().status, now.data().transaction_id);
//!     }
//!     Err(e) => return Err(e),
//! }
//! # Ok(()) }
//! ```
//!
//! # Many look-ups, and waiting
//!
//! [`Client::status_many`] and [`Client::status_stream`] read many
//! transactions concurrently; [`Client::wait_for_final`] polls with
//! backoff until a final state.
//!
//! # Redirect-based payments
//!
//! Some products (online banking, 3-D Secure) are paid on a page the
//! service hands over: the confirm answers `CONFIRMED` with
//! [`Confirmation::payment_url`], the payer decides there, and their
//! browser comes back to the `returnUrl` given at initiate with
//! `transactionId`, `referenceNo` and `status` appended. Read that address
//! with [`ReturnAddress`] and check it with [`Client::verify_return`]: the
//! answer is the service's status, because anyone can forge the address.
//!
//! # Private CAs and client certificates
//!
//! A sandbox or staging service with its own CA, or one that demands a
//! client certificate (mutual TLS), needs
//! [`ClientBuilder::add_root_certificate_pem`] and
//! [`ClientBuilder::identity_pem`] (both PEM). A refused handshake is
//! [`Error::Transport`] with [`error::TransportKind::Tls`], whose message ends
//! with the reason (rustls's `invalid peer certificate: UnknownIssuer`,
//! `received fatal alert: CertificateRequired`; OpenSSL's own error with
//! `native-tls` on Linux); it was not carried out and is not retried.
//! Only the refusals [`error::TransportKind::Tls`] lists are; a TLS failure
//! after the handshake (a record that does not decrypt, another alert in
//! the middle of an answer) is a [`error::TransportKind::Connection`]
//! failure, whose outcome is [`Outcome::Unknown`], as for any connection
//! broken while the answer was coming.
//!
//! ```no_run
//! use payments_client::Client;
//! # #[cfg(not(any(feature = "rustls", feature = "native-tls")))]
//! # fn main() {} // the methods need a TLS feature (on by default)
//! # #[cfg(any(feature = "rustls", feature = "native-tls"))]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut identity = std::fs::read("client.pem")?;
//! identity.extend(std::fs::read("client-key.pem")?);
//! let client = Client::builder("https://sandbox.internal.example:8443")
//!     .add_root_certificate_pem(std::fs::read("ca.pem")?) // e.g. a mock's --tls-self-signed DIR/ca.pem
//!     .identity_pem(identity)
//!     .build()?;
//! # drop(client); Ok(()) }
//! ```
//!
//! # Features
//!
//! - `rustls` (default): TLS with rustls and the webpki roots.
//! - `native-tls`: the platform's TLS instead (with
//!   `default-features = false`).
//! - `http2`: HTTP/2 where the server offers it.
//! - `opentelemetry`: every attempt sends the W3C `traceparent` (and
//!   `tracestate`) of its span through the global propagator, and the
//!   client's metrics go to the global meter provider. Works with
//!   `opentelemetry` 0.31 and `tracing-opentelemetry` 0.32 (and
//!   `opentelemetry_sdk` 0.31) in the application; with other versions no
//!   trace context is sent and no metric is seen, without any error.
//!
//! The public API names reqwest 0.12's types
//! ([`ClientBuilder::http_client`] takes a `reqwest::Client`,
//! [`Error::Transport`]'s `source` is a `reqwest::Error`): an application
//! that uses them needs reqwest 0.12, and a move of this crate to another
//! reqwest major version is a breaking release.
//!
//! # Layout
//!
//! At the crate root is what an application calls: [`Client`],
//! [`ClientBuilder`], [`WaitOptions`]; the requests ([`InitiateRequest`],
//! [`ConfirmRequest`]); the answers ([`Reply`], [`Initiated`],
//! [`Confirmation`], [`PaymentStatus`], [`TransactionId`],
//! [`TransactionStatus`], [`ErrorCode`]); the failures ([`Error`],
//! [`ApiError`], [`Outcome`]); money ([`Currency`], [`MinorAmount`],
//! [`Decimal`]); [`RetryPolicy`]; redirects ([`ReturnAddress`],
//! [`VerifiedReturn`]); and [`Uuid`]. Everything else has a module:
//!
//! - [`model`]: the service's data, typed: every request and its builder,
//!   every answer, id, status and code.
//! - [`money`]: exact amounts: minor and major units, the currency's
//!   exponent, parsing; [`MoneyError`](money::MoneyError).
//! - [`error`]: every failure and what it carries: [`Error`]'s classes,
//!   [`TransportKind`](error::TransportKind),
//!   [`ValidationErrors`](error::ValidationErrors),
//!   [`AnswerMismatch`](error::AnswerMismatch) and its parts.
//! - [`retry`]: when a call is tried again: [`RetryPolicy`] and the pure
//!   decision it makes.
//! - [`wire`]: the wire level (path encoding, envelope decoding, header
//!   names), for tools that speak to the service without a [`Client`].
#![cfg_attr(docsrs, feature(doc_cfg))]

// For contributors (not rendered): where things live, and the contract
// sections (CONTRACT.md; docs/contract.md for users) each file implements.
// From the bottom up (scripts/layers.py holds the same order, and fails
// on an import that points up or any two files importing each other):
//
// - model/: the service's data, typed. money_error.rs (MoneyError), ids,
//   statuses and error codes (sections 6, 8), currency.rs (section 1),
//   wire.rs (the tolerant decoders of section 11), payloads
//   (transaction.rs) and Reply (envelope.rs); model/mod.rs is the public
//   `model` module, which also names the requests of calls/.
// - money.rs: MinorAmount, to_minor, to_major (section 1).
// - error/: Error, its classes and Outcome; error/mismatch.rs: what
//   Error::AnswerMismatch carries (it may hold an Error: one module).
// - secret.rs: the API key and its header; never shown or logged.
// - retry.rs: RetryPolicy and its pure decide (section 12).
// - calls/: one file per endpoint: request types, local validation
//   (section 1), path and body (Call); status.rs's Lookup is what a status
//   read asked.
// - decode.rs: one response into a Reply or an Error (section 11).
// - guard.rs (+ guard/memory.rs): the answer guard (section 17) and its
//   bounded memory.
// - transport.rs: the one send path: URL, headers, auth, request id,
//   timeouts, retries (section 12), decoding, tracing; read_status is
//   every status read, checked.
// - reconcile.rs: repeat rejections of retries turned back into the
//   original outcome (section 12), and settle_initiate for an initiate
//   whose answer disagreed (section 17).
// - client.rs: Client, WaitOptions; the public calls and the helpers built
//   on them (wait_for_final, status_many, status_stream).
//   client/builder.rs: ClientBuilder and its checks; client/tls.rs: its
//   extra roots and identity.
// - redirect.rs: redirect-based payments: ReturnAddress, verify_return,
//   payment_url (section 13).
// - wire.rs: the public wire-level items, re-exported for tools.

mod calls;
mod client;
mod decode;
pub mod error;
mod guard;
pub mod model;
pub mod money;
#[cfg(feature = "opentelemetry")]
mod otel;
mod reconcile;
mod redirect;
pub mod retry;
mod secret;
mod transport;
pub mod wire;

pub use client::{
    Client, ClientBuilder, EnvironmentProxy, WaitOptions, environment_proxy,
    skips_environment_proxy,
};
pub use error::{ApiError, Error, Outcome};
pub use model::{
    ConfirmRequest, Confirmation, Currency, ErrorCode, InitiateRequest, Initiated, MinorAmount,
    PaymentStatus, Reconciled, Reply, TransactionId, TransactionStatus,
};
pub use redirect::{ReturnAddress, VerifiedReturn};
pub use retry::RetryPolicy;
pub use transport::redact_url;

/// Re-exported so callers can name amounts without adding the crate.
pub use rust_decimal::Decimal;
/// Re-exported for merchant ids.
pub use uuid::Uuid;

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
