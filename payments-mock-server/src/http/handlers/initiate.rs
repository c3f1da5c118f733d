//! `POST /api/payments/initiate` (interface 4.1; CONTRACT sections 1, 4, 9).

use axum::http::StatusCode;
use axum::response::Response;

use crate::domain::fields::KnownFields;
use crate::domain::lifecycle::{self, InitiateAttempt, InitiateRefusal};
use crate::domain::transaction::Record;
use crate::domain::validate;
use crate::http::extract::Caller;
use crate::http::json::JsonOut;
use crate::state::AppState;
use payments_serve::{ApiError, ErrorCode};

/// Creates a payment transaction (interface document 4.1).
///
/// Validates every rule of the body at once, checks an API key's merchant
/// binding, and creates the transaction unless the merchant already used
/// the referenceNo (400 DUPLICATE_REFERENCE_NO, naming the existing one).
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/api/payments/initiate",
        operation_id = "initiate",
        tag = "payments"
    )
)]
pub(crate) async fn handle(
    state: &AppState,
    caller: Caller,
    bytes: &[u8],
) -> Result<Response, ApiError> {
    // The parsed body ends here: it is not kept across the store's await
    // (the future stays smaller; every request's future holds this one).
    let fields = validate::initiate_fields(&KnownFields::parse(bytes)?, &state.catalog)?;
    let attempt = InitiateAttempt {
        fields,
        scope: caller.merchant,
        catalog: &state.catalog,
        expiry: state.expiry,
    };
    let (record, initial) = lifecycle::initiate(&state.store, attempt)
        .await?
        .map_err(refused)?;
    state.coverage.transition(None, record.recorded_status());
    Ok(initiate_envelope(&record, initial.as_str()))
}

/// The answer to a refused initiate.
fn refused(refusal: InitiateRefusal) -> ApiError {
    match refusal {
        InitiateRefusal::OtherMerchant { bound, named } => {
            super::status::other_merchant(bound, named)
        }
        InitiateRefusal::Duplicate(existing) => ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::DuplicateReferenceNo,
            format!("referenceNo is already used by this merchant for transaction {existing}"),
        ),
        InitiateRefusal::Full => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InternalError,
            "the mock holds as many transactions as it can; POST /_mock/reset to start over",
        ),
    }
}

/// The success envelope of an initiate, written by hand ([`JsonOut`]):
/// the same bytes as serde writes for [`InitiateData`] (tested below).
pub(crate) fn initiate_envelope(record: &Record, status: &str) -> Response {
    let f = &record.fields;
    let mut out = JsonOut::with_capacity(320 + f.reference_no.len());
    out.raw(r#"{"isSuccess":true,"errorCode":null,"message":"payment initiated","data":{"transactionId":"#);
    out.uuid(record.id);
    out.raw(r#","referenceNo":"#);
    out.string(&f.reference_no);
    out.raw(r#","status":"#);
    out.string(status);
    out.raw(r#","amount":"#);
    out.u64(f.amount_minor);
    out.raw(r#","currencyCode":"#);
    out.string(&f.currency_code);
    out.raw(r#","productCode":"#);
    out.string(&f.product_code);
    out.raw(r#","createdAt":"#);
    out.time(record.created_at);
    out.raw(r#","extraProperties":null}}"#);
    out.into_response()
}

/// Initiate `data` (interface document section 2.3), as serde would write
/// it: what [`initiate_envelope`] writes by hand (tested), and what the
/// OpenAPI document describes.
#[cfg(any(test, feature = "openapi"))]
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitiateData<'a> {
    /// The new transaction's id (UUID v7, lower case).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    transaction_id: uuid::Uuid,
    /// Echo of the request.
    reference_no: &'a str,
    /// The product's initial state: `PENDING` or `INITIATED`.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::transaction_status))]
    status: &'a str,
    /// Echo of the request, in minor units.
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 1, maximum = 9_007_199_254_740_991_u64)
    )]
    amount: u64,
    /// Echo of the request; `MYR` when it had none.
    currency_code: &'a str,
    /// Echo of the request.
    product_code: &'a str,
    /// Creation time.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::timestamp))]
    created_at: String,
    /// Always null on initiate.
    extra_properties: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use axum::body::to_bytes;
    use chrono::DateTime;

    use super::*;
    use crate::domain::catalog::InitialState;
    use crate::domain::clock::format_time;
    use crate::domain::transaction::NewTransaction;
    use crate::store::test_support::fields;
    use payments_serve::success;

    #[tokio::test]
    async fn the_initiate_envelope_is_byte_for_byte_what_serde_writes() {
        let store = crate::store::MemoryStore::new("test");
        let created = DateTime::from_timestamp_millis(1_795_000_000_007).expect("a time");
        for (n, reference) in ["INV-1", "a \"quoted\" \\ ref\t", "ünï ✓ 🚀 /?#%"]
            .into_iter()
            .enumerate()
        {
            for amount in [1, 1050, 9_007_199_254_740_991] {
                let record = store
                    .initiate(
                        NewTransaction {
                            merchant_id: uuid::Uuid::now_v7(),
                            amount_minor: amount,
                            currency_code: ["MYR", "JPY", "KWD"][n].to_owned(),
                            currency_exponent: [2, 0, 3][n],
                            extra_properties: Some("{}".to_owned()),
                            ..fields(&format!("{reference}{amount}"))
                        },
                        InitialState::Pending,
                        created,
                        created,
                    )
                    .expect("stored");
                let f = &record.fields;
                let serde = success(
                    InitiateData {
                        transaction_id: record.id,
                        reference_no: &f.reference_no,
                        status: "PENDING",
                        amount: f.amount_minor,
                        currency_code: &f.currency_code,
                        product_code: &f.product_code,
                        created_at: format_time(record.created_at),
                        extra_properties: None,
                    },
                    Some("payment initiated"),
                );
                let fast = initiate_envelope(&record, "PENDING");
                assert_eq!(fast.headers(), serde.headers());
                let fast = to_bytes(fast.into_body(), usize::MAX).await.expect("body");
                let serde = to_bytes(serde.into_body(), usize::MAX).await.expect("body");
                assert_eq!(
                    String::from_utf8_lossy(&fast),
                    String::from_utf8_lossy(&serde)
                );
            }
        }
    }
}
