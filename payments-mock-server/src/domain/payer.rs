//! Playing the payer without a browser (CONTRACT section 10, the admin
//! control `POST /_mock/transactions/{id}/payer`, and
//! `MockServer::payer`): what the payment page's button does, by
//! transaction id. The page itself (`web/pay.rs`) answers a late submit
//! with the outcome; this control refuses it.

use chrono::{DateTime, Utc};

use crate::domain::lifecycle;
use crate::domain::port::{PayerRefusal, PaymentPageKey, Store, StoreError};
use crate::domain::redirect::return_address;
use crate::domain::transaction::{PayerAction, Record};

/// What playing the payer did ([`crate::Controls::payer`], the admin
/// control): the status after it and where the browser
/// would have been sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PayerOutcome {
    /// The transaction after the decision (`SUCCESSFUL` or `FAILED`).
    pub status: String,
    /// The return address the payment page would send the browser to.
    pub redirect_to: String,
    /// The transaction, for the status `data` of the admin answer.
    pub record: Record,
}

/// Why playing the payer ([`crate::Controls::payer`]) decided nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PayerError {
    /// No transaction with that id.
    #[error("no transaction with that transactionId")]
    NotFound,
    /// Not a confirmed redirect transaction whose payer may still decide.
    #[error("transaction is not waiting for the payer")]
    NotWaiting,
}

/// What the page's button does, by transaction id: decides if the payer
/// still may, else [`PayerError::NotWaiting`] (unlike the page, which
/// answers a late submit with the outcome).
///
/// # Errors
///
/// [`PayerError`]; the outer [`StoreError`] when the store failed.
pub async fn play_payer(
    store: &impl Store,
    transaction_id: &str,
    action: PayerAction,
) -> Result<Result<(PayerOutcome, DateTime<Utc>), PayerError>, StoreError> {
    let key = PaymentPageKey::Transaction(transaction_id);
    let (decided, now) = match lifecycle::decide(store, key, None, action).await? {
        Ok(decided) => decided,
        Err(PayerRefusal::NotFound) => return Ok(Err(PayerError::NotFound)),
        Err(PayerRefusal::NoPaymentPage) => return Ok(Err(PayerError::NotWaiting)),
    };
    if !decided.decided_now {
        return Ok(Err(PayerError::NotWaiting));
    }
    let status = decided.record.view(now).status.as_str();
    let Some(redirect_to) = return_address(&decided.record, status) else {
        return Ok(Err(PayerError::NotWaiting));
    };
    Ok(Ok((
        PayerOutcome {
            status: status.to_owned(),
            redirect_to,
            record: decided.record,
        },
        now,
    )))
}
