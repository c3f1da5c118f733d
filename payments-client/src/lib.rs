//! Typed async client for the merchant payment-transaction API.
//!
//! # Layout
//!
//! - `client.rs`: [`Client`], [`ClientBuilder`], [`WaitOptions`]; the public
//!   calls and the helpers built on them (`wait_for_final`, `status_many`).
//! - `transport.rs`: the one send path: URL, headers, auth, request id,
//!   timeouts, retries, envelope decoding, tracing.
//! - `calls/`: one file per endpoint: request types, local validation
//!   (CONTRACT section 1), path and body.
//! - `model/`: wire types: [`money`] and [`Currency`], ids, statuses and
//!   error codes, response payloads, the envelope and [`Reply`].
//! - `error.rs`: [`Error`], its classes and [`Outcome`].
//! - `retry.rs`: [`RetryPolicy`] and its pure [`RetryPolicy::decide`].
//! - `reconcile.rs`: turning repeat rejections of retries back into the
//!   original outcome (CONTRACT section 12).
//! - `redirect.rs`: redirect-based payments: the payment page of a confirm,
//!   [`ReturnAddress`] and [`Client::verify_return`] (CONTRACT section 13).
//! - `secret.rs`: the API key and its header; never shown or logged.
//! - `wire.rs`: the public wire-level items ([`wire`]), for tools.
//!
//! # Example
//!
//! Requests are checked locally before anything is sent, and money is
//! exact:
//!
//! ```
//! use payments_client::{money, Currency, InitiateRequest, MinorAmount};
//!
//! let merchant = uuid::Uuid::parse_str("4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61").expect("literal uuid");
//! let amount = money::to_minor("150.00".parse()?, Currency::MYR)?;
//! assert_eq!(amount, MinorAmount::new(15000)?);
//!
//! let req = InitiateRequest::builder(merchant, "INV/2026/0001", amount, "TOPUP", "STORE-1")
//!     .payer_id("60123456789")
//!     .build()?;
//! assert_eq!(req.effective_currency(), Currency::MYR);
//!
//! // Every broken rule is reported at once.
//! let bad = InitiateRequest::builder(merchant, " ", amount, "top up", "").build().unwrap_err();
//! assert_eq!(
//!     bad.to_string(),
//!     "invalid request: referenceNo must not start or end with whitespace; \
//!      productCode must be 1-32 characters of A-Z, 0-9, _ and -; storeId must not be empty"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Talking to the service:
//!
//! ```no_run
//! use payments_client::{Client, ConfirmRequest, Error, ErrorCode, WaitOptions};
//!
//! # async fn run(req: payments_client::InitiateRequest) -> Result<(), Error> {
//! let client = Client::builder("http://127.0.0.1:8080").api_key("sk_test").build()?;
//! let initiated = client.initiate(req).await?;
//! let tx = initiated.data();
//! let confirm = ConfirmRequest::builder(&tx.transaction_id, tx.reference_no.clone()).build()?;
//! match client.confirm(confirm).await {
//!     Ok(reply) => println!("{} (request {})", reply.data().status, reply.request_id()),
//!     Err(e) if e.error_code() == Some(&ErrorCode::TransactionExpired) => println!("too late"),
//!     Err(e) => return Err(e),
//! }
//! let done = client.wait_for_final(&tx.transaction_id, WaitOptions::default()).await?;
//! println!("final: {}", done.data().status);
//! # Ok(()) }
//! ```
//!
//! # Retries and reconciliation
//!
//! Connection failures, timeouts, 429, 500, 502, 503 and 504 are retried
//! (twice by default, exponential backoff with full jitter, `Retry-After`
//! honoured up to a cap). Retrying initiate and confirm is safe: when a
//! retry is rejected as a repeat, the client reads the transaction back and
//! returns it as the result, marked [`Reply::is_reconciled`], or fails with
//! [`Error::Reconciliation`] if the stored transaction is not the caller's.
//! A 2xx answer to initiate or confirm that cannot be read is read back the
//! same way, because the service carried the call out.
//!
//! [`Error::outcome`] looks at every attempt: when the last attempt alone
//! would say "not carried out" (a 4xx, 429, a refused connection) but an
//! earlier one was ambiguous (a 5xx, a timeout, a dropped connection), the
//! error is [`Error::AfterAmbiguousAttempt`] and the outcome `Unknown`.
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
//! # TLS
//!
//! rustls by default; the `native-tls` feature uses the platform's TLS.

mod calls;
mod client;
mod error;
mod guard;
mod mismatch;
mod model;
mod reconcile;
mod redirect;
mod retry;
mod secret;
mod transport;
pub mod wire;

pub use calls::confirm::{ConfirmRequest, ConfirmRequestBuilder};
pub use calls::initiate::{InitiateRequest, InitiateRequestBuilder};
pub use client::{Client, ClientBuilder, WaitOptions};
pub use error::{ApiError, Error, FieldError, Outcome, TransportKind, ValidationErrors};
pub use mismatch::{AnswerMismatch, Asked, Disagreement, ReadBack};
pub use model::currency::Currency;
pub use model::envelope::Reply;
pub use model::ids::TransactionId;
pub use model::money::{self, MinorAmount};
pub use model::status::{ErrorCode, TransactionStatus};
pub use model::transaction::{Confirmation, Initiated, PaymentStatus};
pub use redirect::{ReturnAddress, VerifiedReturn};
pub use retry::{Decision, Failure, RetryPolicy};

/// Re-exported so callers can name amounts without adding the crate.
pub use rust_decimal::Decimal;
/// Re-exported for merchant ids.
pub use uuid::Uuid;
