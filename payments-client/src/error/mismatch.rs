//! What [`Error::AnswerMismatch`] carries: an answer that is not about the
//! request it answers.
//!
//! The checks themselves live in `guard.rs`; these are only the types a
//! caller matches on and the one line they print. They are part of the
//! error (an [`AnswerMismatch`] may hold the [`Error`] of its read-back), so
//! they live under it.

use std::fmt;

use rust_decimal::Decimal;
use uuid::Uuid;

use super::Error;
use crate::model::envelope::Reply;
use crate::model::ids::TransactionId;
use crate::model::transaction::PaymentStatus;

/// The call whose answer was checked, and what it asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Asked {
    /// An initiate of this referenceNo.
    Initiate {
        /// The referenceNo sent.
        reference_no: String,
    },
    /// A confirm of this transaction.
    Confirm {
        /// The transactionId sent.
        transaction_id: TransactionId,
    },
    /// A status read by transactionId.
    Status {
        /// The transactionId in the path.
        transaction_id: TransactionId,
    },
    /// A status read by referenceNo.
    StatusByReference {
        /// The referenceNo in the path.
        reference_no: String,
    },
}

impl fmt::Display for Asked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Asked::Initiate { reference_no } => write!(f, "initiate of {reference_no}"),
            Asked::Confirm { transaction_id } => write!(f, "confirm of {transaction_id}"),
            Asked::Status { transaction_id } => write!(f, "status of {transaction_id}"),
            Asked::StatusByReference { reference_no } => {
                write!(f, "status of reference {reference_no}")
            }
        }
    }
}

/// One way an answer disagrees with its request.
///
/// Amounts are shown in major units of their currency (`25.00`), whatever
/// unit the wire used, so that an initiate's minor units and a confirm's
/// decimal read alike.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Disagreement {
    /// A field of the answer is not what the request sent: shown as
    /// `referenceNo sent ORDER-77, answered INV-2026-0001`.
    Field {
        /// The field's JSON name (`referenceNo`, `amount`, `productCode`,
        /// `currencyCode`, `transactionId`).
        field: &'static str,
        /// What the request sent (for `currencyCode`, `MYR` when the
        /// request left it out).
        sent: String,
        /// What the answer says.
        answered: String,
    },
    /// A confirm's `amount` is not the amount this client initiated the
    /// transaction with: `amount initiated 25.00, answered 150.00`.
    InitiatedAmount {
        /// The initiated amount, in major units.
        initiated: Decimal,
        /// The confirm's `amount`, as answered.
        answered: Decimal,
    },
    /// An initiate was answered with an empty `transactionId`.
    EmptyTransactionId,
    /// The answer's `transactionId` is one this client saw answered for
    /// another referenceNo (or another merchant) earlier: one transaction
    /// cannot belong to two payments.
    TransactionIdReused {
        /// The transactionId.
        transaction_id: TransactionId,
        /// The referenceNo it was answered for earlier.
        earlier_reference_no: String,
        /// The merchant of that earlier answer, when the call named one.
        earlier_merchant_id: Option<Uuid>,
        /// The referenceNo it is answered for now.
        reference_no: String,
        /// The merchant of this call, when it names one.
        merchant_id: Option<Uuid>,
    },
}

impl Disagreement {
    /// The JSON name of the field that disagrees.
    pub fn field(&self) -> &'static str {
        match self {
            Disagreement::Field { field, .. } => field,
            Disagreement::InitiatedAmount { .. } => "amount",
            Disagreement::EmptyTransactionId | Disagreement::TransactionIdReused { .. } => {
                "transactionId"
            }
        }
    }
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disagreement::Field {
                field,
                sent,
                answered,
            } => write!(f, "{field} sent {sent}, answered {answered}"),
            Disagreement::InitiatedAmount {
                initiated,
                answered,
            } => write!(f, "amount initiated {initiated}, answered {answered}"),
            Disagreement::EmptyTransactionId => f.write_str("transactionId answered empty"),
            Disagreement::TransactionIdReused {
                transaction_id,
                earlier_reference_no,
                earlier_merchant_id,
                reference_no,
                merchant_id,
            } => match (earlier_merchant_id, merchant_id) {
                (Some(earlier), Some(now)) if earlier != now => write!(
                    f,
                    "transactionId {transaction_id} answered for merchant {now} referenceNo \
                     {reference_no}, earlier for merchant {earlier} referenceNo {earlier_reference_no}"
                ),
                _ => write!(
                    f,
                    "transactionId {transaction_id} answered for referenceNo {reference_no}, \
                     earlier for {earlier_reference_no}"
                ),
            },
        }
    }
}

/// What reading the sent referenceNo back showed, after an initiate whose
/// answer disagreed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadBack {
    /// The reference holds a transaction that is not the one asked for.
    Disagrees {
        /// The status read.
        found: Box<Reply<PaymentStatus>>,
        /// How it differs from the initiate request.
        disagreements: Vec<Disagreement>,
    },
    /// Reading the reference back failed (not found, a transport error,
    /// another answer that disagrees).
    Failed(Box<Error>),
    /// The reference holds a transaction of the request's amount and
    /// product, but the answer disagreed on what a status read does not
    /// show (`field`: the `currencyCode`; 150.00 MYR and 150.00 USD read the
    /// same): the read cannot settle it, and the mismatch stands.
    Unsettled {
        /// The status read.
        found: Box<Reply<PaymentStatus>>,
        /// The field the read cannot show.
        field: &'static str,
    },
}

/// An answer that is not about what was asked: an initiate answered with
/// another reference, amount, product or currency; a confirm or status
/// read answered for another transaction or reference; a transactionId
/// seen for another reference; a confirm whose amount is not the initiated
/// one. See [`Error::AnswerMismatch`].
#[derive(Debug)]
#[non_exhaustive]
pub struct AnswerMismatch {
    /// The call and what it asked about.
    pub asked: Asked,
    /// Every way the answer disagrees, never empty.
    pub disagreements: Vec<Disagreement>,
    /// HTTP status of the answer.
    pub http_status: u16,
    /// The `X-Request-Id` of the call.
    pub request_id: String,
    /// The answer exactly as received.
    pub raw_envelope: String,
    /// For an initiate: what reading the sent referenceNo back showed.
    pub read_back: Option<ReadBack>,
}

impl AnswerMismatch {
    /// Whether `field` (its JSON name) disagrees.
    pub fn has(&self, field: &str) -> bool {
        self.disagreements.iter().any(|d| d.field() == field)
    }
}

impl fmt::Display for AnswerMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the service answered for another request: ",
            self.asked
        )?;
        write_list(f, &self.disagreements)?;
        let reference = match &self.asked {
            Asked::Initiate { reference_no } => reference_no.as_str(),
            _ => "the reference",
        };
        match &self.read_back {
            None => Ok(()),
            Some(ReadBack::Disagrees { disagreements, .. }) => {
                write!(f, "; reading {reference} back found another transaction: ")?;
                write_list(f, disagreements)
            }
            // The read-back's own error is told here, once; it is not also
            // the `source` (STYLE: the source is not repeated). A read
            // changes nothing: "it may have been carried out" is not said
            // of it.
            Some(ReadBack::Failed(e)) => write!(
                f,
                "; reading {reference} back failed: {}",
                e.to_string_without_outcome()
            ),
            Some(ReadBack::Unsettled { field, .. }) => write!(
                f,
                "; reading {reference} back found a transaction of the amount and product sent, \
                 but a status read does not show its {field}"
            ),
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Disagreement]) -> fmt::Result {
    for (i, d) in items.iter().enumerate() {
        if i > 0 {
            f.write_str("; ")?;
        }
        write!(f, "{d}")?;
    }
    Ok(())
}

impl std::error::Error for AnswerMismatch {}
