//! What a successful call hands back: [`Reply`], the decoded `data` of the
//! response envelope and everything known about the exchange. Decoding the
//! envelope into a reply or an error is `decode.rs`'s.

/// Why a [`Reply`] was read back from the status endpoint instead of taken
/// from the call's own answer (CONTRACT section 12, section 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reconciled {
    /// A retry was rejected as a repeat (`DUPLICATE_REFERENCE_NO`,
    /// `TRANSACTION_ALREADY_CONFIRMED`) after an attempt whose outcome was
    /// unknown, and the read-back matched: the payment was carried out,
    /// by that attempt or by another call of the same reference (or
    /// transaction), which no answer tells apart. Under concurrent calls
    /// of one payment, several may end so; an application that does
    /// something once per payment (a receipt, a shipment) keys it on the
    /// transaction id, not on "my call made it".
    RetryFoundItDone,
    /// The service answered 2xx, but the answer could not be read (not the
    /// envelope, `data` null, `data` of another shape): it carried the call
    /// out, and the read-back is its result. No retry need have happened.
    AnswerUnreadable,
    /// An initiate's answer was about another request; the sent reference,
    /// read back, held this request's transaction.
    AnswerAboutAnotherRequest,
}

/// A successful answer: the decoded `data` plus everything known about the
/// exchange that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply<T> {
    pub(crate) data: T,
    pub(crate) message: Option<String>,
    pub(crate) request_id: String,
    pub(crate) attempts: u32,
    pub(crate) reconciled: Option<Reconciled>,
    pub(crate) http_status: u16,
    pub(crate) raw_envelope: String,
}

impl<T> Reply<T> {
    /// The decoded `data`.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// The decoded `data`, owned.
    pub fn into_data(self) -> T {
        self.data
    }

    /// The envelope's informational `message`, if any.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The `X-Request-Id` sent with every attempt of this call.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// How many HTTP attempts the call took (1 when no retry was needed).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether the result was read back from the status endpoint instead
    /// of taken from the call's own answer: a retry met
    /// `DUPLICATE_REFERENCE_NO` or `TRANSACTION_ALREADY_CONFIRMED`, a 2xx
    /// answer to initiate or confirm could not be read, or an initiate's
    /// answer was about another request and the sent reference, read
    /// back, held this request's transaction. The raw envelope and HTTP
    /// status are then those of that status read.
    pub fn is_reconciled(&self) -> bool {
        self.reconciled.is_some()
    }

    /// Why the result was read back ([`is_reconciled`](Self::is_reconciled)),
    /// so that what is said of it is what happened: a retry found the call
    /// already carried out, or the call's one answer could not be read, or
    /// was about another request. `None` for the call's own answer.
    pub fn reconciled(&self) -> Option<Reconciled> {
        self.reconciled
    }

    /// HTTP status of the response the data came from.
    pub fn http_status(&self) -> u16 {
        self.http_status
    }

    /// The response body exactly as received.
    pub fn raw_envelope(&self) -> &str {
        &self.raw_envelope
    }

    /// Replaces the data, keeping the metadata.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Reply<U> {
        Reply {
            data: f(self.data),
            message: self.message,
            request_id: self.request_id,
            attempts: self.attempts,
            reconciled: self.reconciled,
            http_status: self.http_status,
            raw_envelope: self.raw_envelope,
        }
    }
}
