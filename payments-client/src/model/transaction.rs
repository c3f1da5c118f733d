//! Response payloads (`data` of the envelope) for the three kinds of call.
//!
//! Decoding follows CONTRACT section 11: unknown fields are ignored, optional
//! fields may be absent or `null`, and amounts, timestamps and
//! `extraProperties` accept every form listed there.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::model::currency::Currency;
use crate::model::ids::TransactionId;
use crate::model::status::TransactionStatus;
use crate::money::MinorAmount;

/// `data` of a successful initiate (interface document section 2.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Initiated {
    /// The service's id, used by every later call.
    pub transaction_id: TransactionId,
    /// Echo of the request.
    pub reference_no: String,
    /// Initial state, usually `PENDING` or `INITIATED`.
    pub status: TransactionStatus,
    /// Echo of the request, in minor units.
    pub amount: MinorAmount,
    /// Echo of the request; `MYR` when the service leaves it out.
    #[serde(default, deserialize_with = "crate::model::wire::currency_or_default")]
    pub currency_code: Currency,
    /// Echo of the request.
    pub product_code: String,
    /// When the transaction was created.
    #[serde(deserialize_with = "crate::model::wire::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Provider data as a JSON string.
    #[serde(default, deserialize_with = "crate::model::wire::extra_properties")]
    pub extra_properties: Option<String>,
}

/// `data` of a successful confirm (interface document section 2.5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Confirmation {
    /// The transaction.
    pub transaction_id: TransactionId,
    /// Merchant reference.
    pub reference_no: String,
    /// State after confirmation: `CONFIRMED`, `SUCCESSFUL` or `FAILED`.
    pub status: TransactionStatus,
    /// Amount in major units, with the scale the service sent (`150.00`).
    #[serde(
        deserialize_with = "crate::model::wire::decimal",
        serialize_with = "crate::model::wire::decimal_as_number"
    )]
    pub amount: Decimal,
    /// The downstream provider's reference.
    #[serde(default)]
    pub provider_reference: Option<String>,
    /// When the confirm was processed. `None` only when the service left it
    /// out, or for a reconciled result (the status read does not show it).
    #[serde(default, deserialize_with = "crate::model::wire::opt_timestamp")]
    pub confirmed_at: Option<DateTime<Utc>>,
    /// Why a confirmation ended `FAILED`.
    #[serde(default)]
    pub error_message: Option<String>,
    /// Confirmation data as a JSON string (gift card PINs, for example).
    #[serde(default, deserialize_with = "crate::model::wire::extra_properties")]
    pub extra_properties: Option<String>,
}

/// `data` of both status calls (interface document section 2.6).
///
/// It carries no currency: convert [`amount`](Self::amount) with the
/// currency the transaction was initiated in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PaymentStatus {
    /// The transaction.
    pub transaction_id: TransactionId,
    /// Merchant reference.
    pub reference_no: String,
    /// Current state.
    pub status: TransactionStatus,
    /// Amount in major units, with the scale the service sent (`150.00`).
    #[serde(
        deserialize_with = "crate::model::wire::decimal",
        serialize_with = "crate::model::wire::decimal_as_number"
    )]
    pub amount: Decimal,
    /// Product code.
    pub product_code: String,
    /// Creation time.
    #[serde(deserialize_with = "crate::model::wire::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Time of the latest state change, if any.
    #[serde(default, deserialize_with = "crate::model::wire::opt_timestamp")]
    pub last_modified_at: Option<DateTime<Utc>>,
    /// The downstream provider's reference, if any.
    #[serde(default)]
    pub provider_reference: Option<String>,
    /// Extra detail (`transaction expired`, a decline reason).
    #[serde(default)]
    pub message: Option<String>,
    /// Status data as a JSON string.
    #[serde(default, deserialize_with = "crate::model::wire::extra_properties")]
    pub extra_properties: Option<String>,
}
