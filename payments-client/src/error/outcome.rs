//! Whether a failed call may have been carried out ([`Outcome`],
//! [`Error::outcome`]), and whether the service refused it as a repeat of
//! one it already carried out ([`Error::is_repeat`]).

use super::{Error, TransportKind};
use crate::model::status::ErrorCode;

/// Whether the service may have carried out a call that failed.
///
/// It speaks of **one call**: the one whose future returned the error. It
/// knows nothing of another call with the same referenceNo or
/// transaction, and in particular nothing of a call whose future was
/// dropped before it finished (the application's own
/// `tokio::time::timeout` around it, a `select!` that took another
/// branch, a task aborted at shutdown). The outcome of a dropped call is
/// unknown, whatever it had sent: the client is never told how it ended.
///
/// So after a drop, a new call of the same payment can fail on its first
/// attempt with `DUPLICATE_REFERENCE_NO` or `TRANSACTION_ALREADY_CONFIRMED`
/// and [`NotCarriedOut`](Outcome::NotCarriedOut): true of the new call,
/// which changed nothing, while the dropped one was carried out. Such an
/// error says [`Error::is_repeat`]; read the payment back
/// ([`Client::status_by_reference`](crate::Client::status_by_reference),
/// [`Client::status`](crate::Client::status)) and act on what the service
/// holds. Never pay the order again under a new reference because a call
/// was `NotCarriedOut`: look first.
///
/// To bound how long a call may take, prefer the client's own
/// [`timeout`](crate::ClientBuilder::timeout) (per attempt) and
/// [`deadline`](crate::ClientBuilder::deadline) (the attempts together)
/// to dropping the future: a call they stop ends with an error whose
/// outcome is right (a timeout after sending is `Unknown`), and its
/// retries reconcile what they can (a read-back gets a fresh deadline of
/// its own, so a call can take up to about twice the deadline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Certainly not carried out *by this call*: rejected locally, never
    /// sent (connection refused, a TLS handshake refused:
    /// [`TransportKind::Tls`]), or answered with a 4xx, and no earlier
    /// attempt of the same call was ambiguous. A 4xx that refuses a repeat
    /// ([`Error::is_repeat`]) means an earlier call, perhaps a dropped one,
    /// was carried out.
    NotCarriedOut,
    /// Perhaps carried out: a 5xx or `INTERNAL_ERROR` (whatever the HTTP
    /// status, 200 included), a timeout after sending (including a 408 or
    /// 499 from a proxy, with or without an envelope), a
    /// connection closed or broken mid-response (TLS's failures after the
    /// handshake included), an answer that is not valid HTTP
    /// ([`TransportKind::InvalidHttp`]), a success the client could not read,
    /// or any failure of an initiate or confirm after an earlier attempt of
    /// the same call was itself ambiguous
    /// ([`Error::AfterAmbiguousAttempt`]). Check with a status call (or let
    /// the client's retries reconcile it). A status read changes nothing,
    /// so whatever this says of it, nothing was carried out.
    Unknown,
}

/// 408 and 499: a proxy or load balancer gave up waiting, which says
/// nothing of whether the service carried the call out. The same whether
/// the body is an envelope or a proxy's page.
fn gave_up_waiting(status: u16) -> bool {
    matches!(status, 408 | 499)
}

impl Error {
    /// Whether the service may have carried *this* call out. Of a call
    /// whose future was dropped, nothing is known; see [`Outcome`].
    pub fn outcome(&self) -> Outcome {
        match self {
            // A 5xx or INTERNAL_ERROR, whatever the other says: the
            // service may have failed after committing. A 408 or 499 is a
            // gateway that gave up waiting, envelope or not.
            Error::Api(e)
                if e.status >= 500 || e.says_internal_error() || gave_up_waiting(e.status) =>
            {
                Outcome::Unknown
            }
            Error::Api(_) => Outcome::NotCarriedOut,
            Error::InvalidInput(_) | Error::Money(_) | Error::Config { .. } => {
                Outcome::NotCarriedOut
            }
            // A refused connection or TLS handshake (only the refusals
            // `tls::tls_reason` names): the service never read the request.
            Error::Transport {
                kind: TransportKind::Connect | TransportKind::Tls,
                ..
            } => Outcome::NotCarriedOut,
            Error::Transport { .. } => Outcome::Unknown,
            // 408 and 499 from a proxy or load balancer mean it gave up
            // waiting, not that the service refused.
            Error::UnexpectedResponse { status, .. }
                if (400..500).contains(status) && !gave_up_waiting(*status) =>
            {
                Outcome::NotCarriedOut
            }
            Error::Reconciliation { outcome, .. } => *outcome,
            Error::AfterAmbiguousAttempt { .. } | Error::AnswerMismatch(_) => Outcome::Unknown,
            _ => Outcome::Unknown,
        }
    }

    /// Whether the service refused the call as a repeat of one it already
    /// carried out: `DUPLICATE_REFERENCE_NO` (the referenceNo already
    /// holds a transaction) or `TRANSACTION_ALREADY_CONFIRMED`.
    ///
    /// The client reconciles these itself when they answer its own retry
    /// after an ambiguous attempt. When one is the error, the earlier call
    /// was not this one's attempt: a call whose future was dropped (an
    /// application's own timeout), one made before a restart, another
    /// process's, or another order's that used the same reference. The
    /// [`outcome`](Self::outcome) is [`Outcome::NotCarriedOut`], true of
    /// this call only: the payment may well be done. Read it back
    /// ([`Client::status_by_reference`](crate::Client::status_by_reference)
    /// for a referenceNo, [`Client::status`](crate::Client::status) for a
    /// transaction) and compare it with your order before acting; never
    /// pay again under a new reference because of it.
    ///
    /// ```no_run
    /// # use payments_client::{Client, InitiateRequest, Uuid};
    /// # async fn run(client: Client, merchant: Uuid, req: InitiateRequest) -> Result<(), payments_client::Error> {
    /// match client.initiate(req).await {
    ///     Ok(reply) => println!("created {}", reply.data().transaction_id),
    ///     Err(e) if e.is_repeat() => {
    ///         // Already carried out (perhaps by a call this application
    ///         // gave up on): what does the service hold for the order?
    ///         let held = client.status_by_reference("ORDER-1001", Some(merchant)).await?;
    ///         println!("ORDER-1001 is {} ({})", held.data().status, held.data().amount);
    ///     }
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_repeat(&self) -> bool {
        matches!(
            self.error_code(),
            Some(ErrorCode::DuplicateReferenceNo | ErrorCode::TransactionAlreadyConfirmed)
        )
    }
}
