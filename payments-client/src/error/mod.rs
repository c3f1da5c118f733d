//! Every failure: the crate's one error type, its classes, and what each
//! carries ([`ApiError`], [`TransportKind`], [`ValidationErrors`],
//! [`AnswerMismatch`] and its parts). [`Error`], [`ApiError`] and
//! [`Outcome`] are also at the crate root.
//!
//! A caller matches on the class ([`Error::Api`], [`Error::Transport`], ...)
//! and asks [`Error::outcome`] whether the service may have carried the call
//! out; nothing requires parsing strings. No variant ever holds the API key.

use std::fmt;
use std::time::Duration;

use crate::model::envelope::Reply;
use crate::model::money_error::MoneyError;
use crate::model::status::ErrorCode;
use crate::model::transaction::PaymentStatus;

mod api;
mod connect;
mod http;
mod mismatch;
mod outcome;
mod tls;
mod validation;

pub use api::ApiError;
pub use connect::ConnectCause;
use connect::connect_cause_suffix;
pub use mismatch::{AnswerMismatch, Asked, Disagreement, ReadBack};
pub use outcome::Outcome;
use outcome::{earlier_attempt_suffix, outcome_suffix};
pub use validation::{FieldError, ValidationErrors};

pub use http::invalid_http;
use http::invalid_http_suffix;
pub use tls::CertificateProblem;
pub(crate) use tls::tls_reason;
use tls::tls_reason_suffix;

/// What went wrong below HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportKind {
    /// No connection could be made; nothing was sent.
    Connect,
    /// No complete answer in time (per attempt or the call's deadline).
    Timeout,
    /// The connection closed or failed after the request may have been
    /// sent: a reset, an incomplete message, a stale pooled connection,
    /// or an error of the TLS library once the handshake is done (a record
    /// that does not decrypt, an alert such as `bad_record_mac` or
    /// `decode_error` in the middle of an answer): anything but the
    /// refusals of [`Tls`](TransportKind::Tls). The TLS library's reason
    /// is in the error's source chain. The service may have carried the
    /// call out ([`Outcome::Unknown`]).
    Connection,
    /// The TLS handshake was refused (CONTRACT section 18), so the service
    /// never read the request: nothing was carried out
    /// ([`Outcome::NotCarriedOut`]), and retrying cannot help. Exactly
    /// these failures:
    ///
    /// - the client refused the service's certificate: not trusted
    ///   (unknown CA, expired, revoked, another name), or none; with
    ///   rustls, also a service whose TLS versions or parameters the
    ///   client does not accept (rustls's `InvalidCertificate`,
    ///   `NoCertificatesPresented`, `PeerIncompatible`, raised only while
    ///   the client handshakes, before it writes the request);
    /// - the service refused the handshake with one of the alerts
    ///   `certificate_required`, `bad_certificate`,
    ///   `unsupported_certificate`, `certificate_revoked`,
    ///   `certificate_expired`, `certificate_unknown`, `unknown_ca`,
    ///   `access_denied`, `handshake_failure`, `protocol_version`,
    ///   `insufficient_security` (with mutual TLS 1.3 such an alert comes
    ///   after the client has sent the request, but the service checks
    ///   the client's certificate before it can read any of it);
    /// - with `native-tls`, any failure of its handshake (native-tls's own
    ///   error, which only the handshake returns).
    ///
    /// Any other error of the TLS library is a
    /// [`Connection`](TransportKind::Connection) failure. See
    /// [`ClientBuilder::add_root_certificate_pem`](crate::ClientBuilder::add_root_certificate_pem)
    /// and [`ClientBuilder::identity_pem`](crate::ClientBuilder::identity_pem).
    Tls,
    /// The service answered with bytes that are not a valid HTTP answer: a
    /// header value with a control character, a malformed status line, a
    /// head too large, or no HTTP at all (a TLS service answering a plain
    /// `http://` request). It answered, so this is no timeout; but the
    /// request was written, so, as with a
    /// [`Connection`](TransportKind::Connection) failure, the service may
    /// have carried the call out ([`Outcome::Unknown`]), and it is retried
    /// (and reconciled) the same way. The message ends with the HTTP
    /// library's reason (`invalid HTTP header parsed`).
    InvalidHttp,
}

impl TransportKind {
    /// A short name: `connect`, `timeout`, `connection`, `tls`,
    /// `invalid_http` (a span's `error.type`).
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Connect => "connect",
            TransportKind::Timeout => "timeout",
            TransportKind::Connection => "connection",
            TransportKind::Tls => "tls",
            TransportKind::InvalidHttp => "invalid_http",
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportKind::Connect => "could not connect to the service",
            TransportKind::Timeout => "the request timed out",
            TransportKind::Connection => "the connection failed before a complete response",
            TransportKind::Tls => "the TLS handshake with the service failed",
            TransportKind::InvalidHttp => "the service's answer was not valid HTTP",
        })
    }
}

/// Any failure of this crate.
///
/// Match on the class, and ask [`outcome`](Error::outcome) whether the
/// service may have carried the call out:
///
/// - nothing was sent: [`InvalidInput`](Error::InvalidInput),
///   [`Money`](Error::Money), [`Config`](Error::Config);
/// - the service said no: [`Api`](Error::Api);
/// - no usable answer: [`Transport`](Error::Transport),
///   [`UnexpectedResponse`](Error::UnexpectedResponse),
///   [`MissingData`](Error::MissingData), [`Decode`](Error::Decode);
/// - an answer about something else than what was asked:
///   [`AnswerMismatch`](Error::AnswerMismatch) (the client checks every
///   answer against its request);
/// - after retries: [`Reconciliation`](Error::Reconciliation),
///   [`AfterAmbiguousAttempt`](Error::AfterAmbiguousAttempt);
/// - helpers: [`ReturnMismatch`](Error::ReturnMismatch),
///   [`WaitTimeout`](Error::WaitTimeout).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The service answered with `isSuccess` false.
    ///
    /// Boxed so that `Error` stays small (clippy's `result_large_err`);
    /// fields are reached through the box as before (`api.status`).
    ///
    /// When the outcome is [`Outcome::Unknown`] (a 5xx, `INTERNAL_ERROR`,
    /// a 408 or 499), the message ends with `(outcome unknown: it may have
    /// been carried out; look it up before trying again)`; the
    /// [`ApiError`]'s own message does not.
    #[error("{}{}", .0, outcome_suffix(.0.leaves_outcome_open()))]
    Api(Box<ApiError>),

    /// The request broke a rule checked before sending (what the interface
    /// document states, or what the client needs; see
    /// [`InitiateRequestBuilder::build`](crate::model::InitiateRequestBuilder::build));
    /// nothing was sent.
    #[error("invalid request: {0}")]
    InvalidInput(ValidationErrors),

    /// A money conversion or currency code was invalid; nothing was sent.
    #[error(transparent)]
    Money(#[from] MoneyError),

    /// The client could not be built (bad base URL, bad header value).
    #[error("invalid client configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },

    /// Connecting, sending or receiving failed. For
    /// [`TransportKind::Tls`] the message ends with TLS's reason (rustls's,
    /// e.g. `invalid peer certificate: UnknownIssuer`; OpenSSL's error with
    /// `native-tls` on Linux), which holds no secret:
    /// the one cause a reader needs, however deep in the chain. For
    /// [`TransportKind::InvalidHttp`] it ends with the HTTP library's
    /// reason in parentheses (`(invalid HTTP header parsed)`). For
    /// [`TransportKind::Connect`] it ends with the cause when the chain
    /// tells one ([`Error::connect_cause`]: `: the host name could not be
    /// resolved`). When the outcome is [`Outcome::Unknown`] (any kind but `Connect` and `Tls`),
    /// it then ends with `(outcome unknown: it may have been carried out;
    /// look it up before trying again)`.
    #[error(
        "{kind}{}{}{}{}",
        connect_cause_suffix(*.kind, .source.as_ref()),
        tls_reason_suffix(*.kind, .source.as_ref()),
        invalid_http_suffix(*.kind, .source.as_ref()),
        outcome_suffix(outcome::transport_leaves_outcome_open(*.kind))
    )]
    Transport {
        /// Which stage failed.
        kind: TransportKind,
        /// The `X-Request-Id` of the call.
        request_id: String,
        /// The HTTP library's error, when there is one: reqwest 0.12's
        /// type (a reqwest major upgrade is a breaking release of this
        /// crate).
        #[source]
        source: Option<reqwest::Error>,
    },

    /// The body is not the envelope (an HTML 502 from a proxy, an empty 504,
    /// an answer larger than 1 MiB, which is not read whole). Unless it is
    /// a plain 4xx (not 408 or 499), the outcome is [`Outcome::Unknown`]
    /// and the message ends with `(outcome unknown: it may have been
    /// carried out; look it up before trying again)`.
    #[error(
        "unexpected response (HTTP {status}): {reason}{}",
        outcome_suffix(outcome::unexpected_leaves_outcome_open(*.status))
    )]
    UnexpectedResponse {
        /// HTTP status.
        status: u16,
        /// The first 512 bytes of the body (lossy UTF-8).
        body_prefix: String,
        /// `Content-Type`, if sent: its bytes as UTF-8, or one character
        /// per byte (ISO-8859-1) when they are not UTF-8. It may hold
        /// control characters: escape it before showing it.
        content_type: Option<String>,
        /// The `X-Request-Id` of the call.
        request_id: String,
        /// Why it is not an envelope.
        reason: String,
        /// `Retry-After`, when the response carried one.
        retry_after: Option<Duration>,
    },

    /// `isSuccess` true but `data` null.
    #[error("the service reported success without data (HTTP {status})")]
    MissingData {
        /// HTTP status.
        status: u16,
        /// The `X-Request-Id` of the call.
        request_id: String,
        /// The response body exactly as received.
        raw_envelope: String,
    },

    /// A success envelope whose `data` does not match the model.
    #[error("could not decode the response at {path}: {message}")]
    Decode {
        /// The JSON path of the problem (`data.createdAt`).
        path: String,
        /// What is wrong there.
        message: String,
        /// HTTP status.
        status: u16,
        /// The `X-Request-Id` of the call.
        request_id: String,
        /// The response body exactly as received.
        raw_envelope: String,
    },

    /// A retried initiate or confirm was rejected as a repeat (or a 2xx
    /// answer could not be read, on any attempt), and reading the
    /// transaction back did not show the caller's call. `reason` says which
    /// of the two happened; when the read-back itself failed, its error is
    /// the `source`.
    // CONTRACT section 12.
    #[error("could not reconcile the call: {reason}")]
    Reconciliation {
        /// Why.
        reason: String,
        /// Whether the call may have been carried out. `NotCarriedOut` only
        /// when a retried initiate met `DUPLICATE_REFERENCE_NO` and the
        /// stored transaction was compared and differs in amount or
        /// product (the reference belongs to another payment, so this call
        /// created nothing); `Unknown` in every other case.
        outcome: Outcome,
        /// The `X-Request-Id` of the call.
        request_id: String,
        /// The transaction found, when the lookup worked.
        found: Option<Box<PaymentStatus>>,
        /// The lookup's own error, when it failed.
        #[source]
        source: Option<Box<Error>>,
    },

    /// The last attempt of an initiate or confirm failed in a way that
    /// alone would mean "not carried out" (a 4xx, 429, connection refused,
    /// a deadline that stopped the retries), but an earlier attempt of the
    /// same call was ambiguous (a 5xx, a timeout, a dropped connection), so
    /// the service may have carried the call out: [`Error::outcome`] is
    /// [`Outcome::Unknown`]. Look the transaction up before trying again.
    /// Never a status read's error: a read changes nothing, so its earlier
    /// attempts are never ambiguous, and its last attempt's error is told
    /// as it is.
    ///
    /// [`is_retryable`](Error::is_retryable),
    /// [`error_code`](Error::error_code), [`http_status`](Error::http_status),
    /// [`request_id`](Error::request_id), [`raw_envelope`](Error::raw_envelope),
    /// [`retry_after`](Error::retry_after) and [`as_api`](Error::as_api)
    /// answer for `last`.
    ///
    /// The message is `last`'s, then `(after N attempts; an earlier attempt
    /// may have been carried out)`, or only `(after N attempts)` when
    /// `last`'s own message already says the outcome is unknown.
    #[error("{last} (after {attempts} attempts{})", earlier_attempt_suffix(.last))]
    AfterAmbiguousAttempt {
        /// How many attempts were made.
        attempts: u32,
        /// The `X-Request-Id` of the call.
        request_id: String,
        /// The last attempt's error.
        last: Box<Error>,
    },

    /// The service answered, but not about what was asked: the client
    /// checks every answer against its request (on by default; see
    /// [`ClientBuilder::check_answers`](crate::ClientBuilder::check_answers)).
    ///
    /// - initiate: `referenceNo`, `amount`, `productCode` and `currencyCode`
    ///   (`MYR` when the request left it out) as sent, and a `transactionId`
    ///   that is not empty;
    /// - confirm: the `transactionId` and `referenceNo` sent, and an
    ///   `amount` equal to the initiated one when this client initiated the
    ///   transaction;
    /// - status by id: the id asked for; status by reference: the reference
    ///   asked for (also for [`wait_for_final`](crate::Client::wait_for_final),
    ///   [`status_many`](crate::Client::status_many) and the read-backs of
    ///   reconciliation);
    /// - every call: a `transactionId` this client saw answered for one
    ///   reference (and merchant, where known) is never answered for
    ///   another.
    ///
    /// Spellings the service may choose are not disagreements: `150.0` for
    /// `150.00`, an amount as a numeric string, a timestamp with an offset,
    /// `currencyCode` left out of an initiate answer (meaning `MYR`).
    ///
    /// The outcome is [`Outcome::Unknown`]: the service did something, but
    /// not provably what was asked. It is never retried and never turned
    /// into a success, with one exception: an initiate whose answer
    /// disagrees is settled by reading the sent referenceNo back; when that
    /// transaction matches the request (amount, product) and the answer
    /// disagreed on nothing the read cannot show (a status read has no
    /// currency: an answer in another currency is never settled), the
    /// initiate succeeds with it, marked [`Reply::is_reconciled`]. Otherwise this
    /// error stands, and [`AnswerMismatch::read_back`] says what the read
    /// showed. Do not confirm, ship or book against an answer like this:
    /// look the transaction up (by your referenceNo) first.
    #[error(transparent)]
    AnswerMismatch(Box<AnswerMismatch>),

    /// [`verify_return`](crate::Client::verify_return): the transaction the
    /// return address names has another referenceNo at the service, so the
    /// address is forged or belongs to another payment.
    #[error(
        "the return address names referenceNo {claimed:?}, but transaction {} is {:?} at the service",
        .found.data().transaction_id,
        .found.data().reference_no
    )]
    ReturnMismatch {
        /// The referenceNo in the address.
        claimed: String,
        /// What the service said of the transaction the address names.
        found: Box<Reply<PaymentStatus>>,
    },

    /// [`wait_for_final`](crate::Client::wait_for_final) ran out of time.
    #[error("the transaction did not reach a final state within {waited:?}")]
    WaitTimeout {
        /// How long it waited.
        waited: Duration,
        /// The last status read, if any succeeded.
        last: Option<Box<Reply<PaymentStatus>>>,
    },
}

/// HTTP statuses that are retried (CONTRACT section 12).
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

impl Error {
    /// Whether retrying the same call could succeed: connection failures
    /// (an answer that is not valid HTTP included), timeouts, 429, 500,
    /// 502, 503 and 504, and `INTERNAL_ERROR` whatever the HTTP status (a
    /// 200 included): it is retried, and reconciled, exactly as a 500 is.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Api(e) => is_retryable_status(e.status) || e.says_internal_error(),
            Error::Transport {
                kind: TransportKind::Tls,
                ..
            } => false,
            Error::Transport { .. } => true,
            Error::UnexpectedResponse { status, .. } => is_retryable_status(*status),
            Error::AfterAmbiguousAttempt { last, .. } => last.is_retryable(),
            _ => false,
        }
    }

    /// A short, stable name of what failed, for a span's `error.type`
    /// (CONTRACT section 21): the service's `errorCode` for an API error,
    /// the transport failure's kind (`timeout`, `connect`, `connection`,
    /// `tls`, `invalid_http`), else the variant (`unexpected_response`,
    /// `answer_mismatch`, …). Never a message, a key or an id.
    pub fn type_name(&self) -> &str {
        match self {
            Error::Api(e) => e.code.as_str(),
            Error::InvalidInput(_) => "invalid_input",
            Error::Money(_) => "money",
            Error::Config { .. } => "config",
            Error::Transport { kind, .. } => kind.as_str(),
            Error::UnexpectedResponse { .. } => "unexpected_response",
            Error::MissingData { .. } => "missing_data",
            Error::Decode { .. } => "decode",
            Error::Reconciliation { .. } => "reconciliation",
            Error::AfterAmbiguousAttempt { last, .. } => last.type_name(),
            Error::AnswerMismatch(_) => "answer_mismatch",
            Error::ReturnMismatch { .. } => "return_mismatch",
            Error::WaitTimeout { .. } => "wait_timeout",
        }
    }

    /// The service's error code, for [`Error::Api`].
    pub fn error_code(&self) -> Option<&ErrorCode> {
        match self {
            Error::Api(e) => Some(&e.code),
            Error::AfterAmbiguousAttempt { last, .. } => last.error_code(),
            _ => None,
        }
    }

    /// The `X-Request-Id` of the call, for every error raised after the
    /// request id was chosen.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Api(e) => Some(&e.request_id),
            Error::AnswerMismatch(m) => Some(&m.request_id),
            Error::Transport { request_id, .. }
            | Error::UnexpectedResponse { request_id, .. }
            | Error::MissingData { request_id, .. }
            | Error::Decode { request_id, .. }
            | Error::Reconciliation { request_id, .. }
            | Error::AfterAmbiguousAttempt { request_id, .. } => Some(request_id),
            Error::WaitTimeout { last, .. } => last.as_ref().map(|r| r.request_id()),
            Error::ReturnMismatch { found, .. } => Some(found.request_id()),
            _ => None,
        }
    }

    /// The HTTP status, when a response arrived.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Error::Api(e) => Some(e.status),
            Error::UnexpectedResponse { status, .. }
            | Error::MissingData { status, .. }
            | Error::Decode { status, .. } => Some(*status),
            Error::AfterAmbiguousAttempt { last, .. } => last.http_status(),
            Error::AnswerMismatch(m) => Some(m.http_status),
            _ => None,
        }
    }

    /// The response body exactly as received, when it was an envelope.
    pub fn raw_envelope(&self) -> Option<&str> {
        match self {
            Error::Api(e) => Some(&e.raw_envelope),
            Error::MissingData { raw_envelope, .. } | Error::Decode { raw_envelope, .. } => {
                Some(raw_envelope)
            }
            Error::AfterAmbiguousAttempt { last, .. } => last.raw_envelope(),
            Error::ReturnMismatch { found, .. } => Some(found.raw_envelope()),
            Error::AnswerMismatch(m) => Some(&m.raw_envelope),
            _ => None,
        }
    }

    /// `Retry-After` of the response, when it carried one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api(e) => e.retry_after,
            Error::UnexpectedResponse { retry_after, .. } => *retry_after,
            Error::AfterAmbiguousAttempt { last, .. } => last.retry_after(),
            _ => None,
        }
    }

    /// The service's failure, for [`Error::Api`] (also inside
    /// [`Error::AfterAmbiguousAttempt`]).
    pub fn as_api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e.as_ref()),
            Error::AfterAmbiguousAttempt { last, .. } => last.as_api(),
            _ => None,
        }
    }

    /// The answer that disagreed with its request, for
    /// [`Error::AnswerMismatch`].
    pub fn as_answer_mismatch(&self) -> Option<&AnswerMismatch> {
        match self {
            Error::AnswerMismatch(m) => Some(m),
            _ => None,
        }
    }

    /// Whether this is a 2xx answer the client could not read (not the
    /// envelope, `data` null, or `data` not matching the model): the
    /// service carried the call out.
    pub(crate) fn is_unreadable_success(&self) -> bool {
        match self {
            Error::UnexpectedResponse { status, .. }
            | Error::MissingData { status, .. }
            | Error::Decode { status, .. } => (200..300).contains(status),
            _ => false,
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Error::Config {
            message: message.into(),
        }
    }
}

// Users' own `Result<_, Error>` functions must not trip clippy's
// `result_large_err` (128 bytes by default).
const _: () = assert!(std::mem::size_of::<Error>() < 128);

/// An error and its sources in one line, `a: b: c` (reqwest's own
/// `Display` is only the first, e.g. "builder error").
/// `e` and each error under it, oldest cause last; under an `io::Error`
/// the error it wraps (its `source()` skips that one: hyper and reqwest
/// put rustls's and the resolver's errors there).
pub(crate) fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |error| {
        match error.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => error.source(),
        }
    })
}

pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests;
