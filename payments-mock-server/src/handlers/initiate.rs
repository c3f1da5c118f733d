//! `POST /api/payments/initiate` (interface 4.1; CONTRACT sections 1, 4, 9).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use uuid::Uuid;

use crate::clock::format_time;
use crate::error::{ApiError, ErrorCode, success};
use crate::extract::{Caller, JsonObject};
use crate::state::AppState;
use crate::store::InsertRefusal;
use crate::validate;

/// Validates, checks the merchant binding, and creates the transaction
/// unless the merchant already used the reference.
pub async fn handle(
    State(state): State<AppState>,
    caller: Caller,
    JsonObject(body): JsonObject,
) -> Result<Response, ApiError> {
    let fields = validate::initiate(&body, &state.catalog)?;
    if let Some(bound) = caller.merchant.filter(|b| *b != fields.merchant_id) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            format!(
                "this API key may only act for merchant {bound}, not {}",
                fields.merchant_id
            ),
        ));
    }
    let initial = state
        .catalog
        .product(&fields.product_code)
        .map(|p| p.initial)
        .ok_or_else(ApiError::internal)?;
    let record = state
        .store
        .initiate_now(fields, initial, &state.clock, state.expiry)
        .map_err(|refusal| match refusal {
            InsertRefusal::Duplicate(existing) => ApiError::new(
                StatusCode::BAD_REQUEST,
                ErrorCode::DuplicateReferenceNo,
                format!("referenceNo is already used by this merchant for transaction {existing}"),
            ),
            InsertRefusal::Full => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::InternalError,
                "the mock holds as many transactions as it can; POST /_mock/reset to start over",
            ),
        })?;
    let f = &record.fields;
    Ok(success(
        InitiateData {
            transaction_id: record.id,
            reference_no: &f.reference_no,
            status: initial.as_str(),
            amount: f.amount_minor,
            currency_code: &f.currency_code,
            product_code: &f.product_code,
            created_at: format_time(record.created_at),
            extra_properties: None,
        },
        Some("payment initiated"),
    ))
}

/// Initiate `data` (interface section 2.3).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct InitiateData<'a> {
    transaction_id: Uuid,
    reference_no: &'a str,
    status: &'static str,
    amount: u64,
    currency_code: &'a str,
    product_code: &'a str,
    created_at: String,
    extra_properties: Option<&'a str>,
}
