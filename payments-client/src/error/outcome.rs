//! Whether a failed call may have been carried out ([`Outcome`],
//! [`Error::outcome`]), and whether the service refused it as a repeat of
//! one it already carried out ([`Error::is_repeat`]).

use super::{ApiError, Error, TransportKind};
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

/// What the message of an error that leaves its call's outcome open by
/// itself ends with ([`Error::says_outcome_unknown`]): a shop that logs
/// only `{e}` still learns that money may have moved.
pub(super) const OUTCOME_UNKNOWN: &str =
    " (outcome unknown: it may have been carried out; look it up before trying again)";

/// [`OUTCOME_UNKNOWN`] when `open`, else nothing.
pub(super) fn outcome_suffix(open: bool) -> &'static str {
    if open { OUTCOME_UNKNOWN } else { "" }
}

/// What [`Error::AfterAmbiguousAttempt`] adds after its attempts: that an
/// earlier attempt may have been carried out, unless `last`'s own message
/// already says the outcome is unknown (said once, not twice).
pub(super) fn earlier_attempt_suffix(last: &Error) -> &'static str {
    if last.says_outcome_unknown() {
        ""
    } else {
        "; an earlier attempt may have been carried out"
    }
}

impl ApiError {
    /// A 5xx or `INTERNAL_ERROR`, whatever the other says (the service may
    /// have failed after committing), or a 408 or 499 (a gateway that gave
    /// up waiting, envelope or not).
    pub(super) fn leaves_outcome_open(&self) -> bool {
        self.status >= 500 || self.says_internal_error() || gave_up_waiting(self.status)
    }
}

/// Anything but a refused connection or TLS handshake (only the refusals
/// `tls::tls_reason` names), after which the service never read the
/// request.
pub(super) fn transport_leaves_outcome_open(kind: TransportKind) -> bool {
    !matches!(kind, TransportKind::Connect | TransportKind::Tls)
}

/// Anything but a plain 4xx: 408 and 499 from a proxy or load balancer
/// mean it gave up waiting, not that the service refused.
pub(super) fn unexpected_leaves_outcome_open(status: u16) -> bool {
    !(400..500).contains(&status) || gave_up_waiting(status)
}

impl Error {
    /// Whether the service may have carried *this* call out. Of a call
    /// whose future was dropped, nothing is known; see [`Outcome`].
    pub fn outcome(&self) -> Outcome {
        match self {
            Error::Api(e) if e.leaves_outcome_open() => Outcome::Unknown,
            Error::Api(_) => Outcome::NotCarriedOut,
            Error::InvalidInput(_) | Error::Money(_) | Error::Config { .. } => {
                Outcome::NotCarriedOut
            }
            Error::Transport { kind, .. } if !transport_leaves_outcome_open(*kind) => {
                Outcome::NotCarriedOut
            }
            Error::Transport { .. } => Outcome::Unknown,
            Error::UnexpectedResponse { status, .. }
                if !unexpected_leaves_outcome_open(*status) =>
            {
                Outcome::NotCarriedOut
            }
            Error::Reconciliation { outcome, .. } => *outcome,
            Error::AfterAmbiguousAttempt { .. } | Error::AnswerMismatch(_) => Outcome::Unknown,
            _ => Outcome::Unknown,
        }
    }

    /// Whether this error's own message says the outcome is unknown (ends
    /// with [`OUTCOME_UNKNOWN`]): the classes whose outcome is
    /// [`Outcome::Unknown`] by themselves, an API error, a transport
    /// failure or an answer that is not the envelope.
    pub(crate) fn says_outcome_unknown(&self) -> bool {
        match self {
            Error::Api(e) => e.leaves_outcome_open(),
            Error::Transport { kind, .. } => transport_leaves_outcome_open(*kind),
            Error::UnexpectedResponse { status, .. } => unexpected_leaves_outcome_open(*status),
            _ => false,
        }
    }

    /// The message without its closing note on the outcome (`(outcome
    /// unknown: it may have been carried out; …)`): for an error told
    /// inside another's message, where the note would speak of the wrong
    /// call (a read-back, which changes nothing), and for a program that
    /// says the outcome its own way, as the `payments` CLI does. Other
    /// errors' messages are returned whole.
    ///
    /// ```
    /// # use payments_client::Client;
    /// # async fn demo(client: Client, id: &str) {
    /// if let Err(e) = client.status(id).await {
    ///     // A read changes nothing: log what failed, not the outcome note.
    ///     eprintln!("status read failed: {}", e.to_string_without_outcome());
    /// }
    /// # }
    /// ```
    #[must_use]
    pub fn to_string_without_outcome(&self) -> String {
        let text = self.to_string();
        match text.strip_suffix(OUTCOME_UNKNOWN) {
            Some(stripped) if self.says_outcome_unknown() => stripped.to_owned(),
            _ => text,
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
