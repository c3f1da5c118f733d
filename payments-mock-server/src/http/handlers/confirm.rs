//! `POST /api/payments/confirm` (interface 4.2; CONTRACT section 6, rules
//! in order: body, unknown, reference mismatch, expired, already
//! confirmed, code required, transition).

use axum::http::StatusCode;
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Number;
use uuid::Uuid;

use crate::domain::clock::format_time;
use crate::domain::fields::KnownFields;
use crate::domain::lifecycle::{self, ConfirmAttempt, ConfirmRefusal};
use crate::domain::port::Store as _;
use crate::domain::transaction::{ConfirmResult, Record, Status};
use crate::domain::validate;
use crate::http::extract::Caller;
use crate::state::AppState;
use payments_interface::money::major_number;
use payments_serve::{ApiError, ErrorCode, success};

/// Confirms a transaction (interface document 4.2).
///
/// Checks, in order: the body, the transaction exists (400
/// TRANSACTION_NOT_FOUND otherwise, as the interface document says), the
/// referenceNo is its own, not expired, not already confirmed, a code where
/// the product needs one; then the product's outcome. Exactly one of many
/// concurrent confirms succeeds.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/api/payments/confirm",
        operation_id = "confirm",
        tag = "payments"
    )
)]
pub(crate) async fn handle(
    state: &AppState,
    caller: Caller,
    bytes: &[u8],
) -> Result<Response, ApiError> {
    let body = validate::confirm_fields(&KnownFields::parse(bytes)?)?;
    let attempt = ConfirmAttempt {
        transaction_id: &body.transaction_id,
        reference_no: &body.reference_no,
        confirmation_code: body.confirmation_code.as_deref(),
        scope: caller.merchant,
        public_url: &state.public_url,
    };
    let (record, now) = match lifecycle::confirm(&state.store, &attempt, &state.catalog).await? {
        Ok(confirmed) => confirmed,
        Err(refusal) => {
            if refusal == ConfirmRefusal::Expired {
                observe_expiry(state, &attempt).await;
            }
            return Err(refusal_error(refusal, &body.transaction_id));
        }
    };
    state.coverage.confirmed(&record, now);
    confirm_envelope(&record, now).ok_or_else(ApiError::internal)
}

/// A confirm refused as expired tells the application its transaction
/// expired: the coverage counts that move when no read showed it before.
/// A store that fails here costs the count, never the answer.
async fn observe_expiry(state: &AppState, attempt: &ConfirmAttempt<'_>) {
    let Some(id) = crate::domain::transaction::issued_id(attempt.transaction_id) else {
        return;
    };
    let Ok(now) = state.store.now().await else {
        return;
    };
    let _ = state
        .store
        .with_id(id, attempt.scope, |record| {
            state.coverage.observe(record, now)
        })
        .await;
}

/// The success envelope of a confirm of `record` (which has a
/// confirmation) as seen at `now`; `None` without a confirmation.
pub(crate) fn confirm_envelope(record: &Record, now: DateTime<Utc>) -> Option<Response> {
    let confirmation = record.confirmation.as_deref()?;
    let view = record.view(now);
    let error_message = match &confirmation.result {
        ConfirmResult::Failed { error_message } => Some(error_message.as_str()),
        _ => None,
    };
    let message = match (&confirmation.result, view.status) {
        (_, Status::Failed) => "payment failed",
        (ConfirmResult::AwaitingPayer(_), _) => {
            "payment confirmed, awaiting the payer on the payment page"
        }
        (_, Status::Confirmed) => "payment confirmed, settlement pending",
        _ => "payment successful",
    };
    Some(success(
        ConfirmData {
            transaction_id: record.id,
            reference_no: &record.fields.reference_no,
            status: view.status.as_str(),
            amount: major_number(record.fields.amount_minor, record.fields.currency_exponent),
            provider_reference: confirmation.provider_reference.as_deref(),
            confirmed_at: format_time(confirmation.confirmed_at),
            error_message,
            extra_properties: confirmation.extra_properties.as_deref(),
        },
        Some(message),
    ))
}

/// Confirm `data` (interface document section 2.5).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConfirmData<'a> {
    /// The transaction.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    transaction_id: Uuid,
    /// The merchant's reference.
    reference_no: &'a str,
    /// After the confirm: `SUCCESSFUL`, `FAILED`, or `CONFIRMED` (settling,
    /// or a redirect product waiting on its payer).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::transaction_status))]
    status: &'static str,
    /// Major units with exactly the currency's fraction digits.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::major_amount))]
    amount: Number,
    /// The provider's reference; null when the product declined at the
    /// confirm (a redirect product's keeps it whatever the payer decides).
    provider_reference: Option<&'a str>,
    /// When the confirm was processed.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::timestamp))]
    confirmed_at: String,
    /// Why it failed; null otherwise.
    error_message: Option<&'a str>,
    /// Provider data as JSON text: gift card PINs (`{"pins":[...]}`), or a
    /// redirect product's payment page (`{"paymentUrl":"<public URL>/pay/<token>"}`).
    extra_properties: Option<&'a str>,
}

fn refusal_error(refusal: ConfirmRefusal, id: &str) -> ApiError {
    let bad = |code, message: String| ApiError::new(StatusCode::BAD_REQUEST, code, message);
    match refusal {
        ConfirmRefusal::NotFound => bad(
            ErrorCode::TransactionNotFound,
            format!("no transaction with transactionId {id}"),
        ),
        ConfirmRefusal::ReferenceMismatch => {
            ApiError::validation("referenceNo does not match the transaction")
        }
        ConfirmRefusal::Expired => bad(
            ErrorCode::TransactionExpired,
            format!("transaction {id} has expired and can no longer be confirmed"),
        ),
        ConfirmRefusal::AlreadyConfirmed => bad(
            ErrorCode::TransactionAlreadyConfirmed,
            format!("transaction {id} has already been confirmed"),
        ),
        ConfirmRefusal::CodeRequired(product) => ApiError::validation(format!(
            "confirmationCode is required for product {product}"
        )),
    }
}
