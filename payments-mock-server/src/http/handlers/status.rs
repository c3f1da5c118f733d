//! `GET /api/payments/{transactionId}/status` and
//! `GET /api/payments/reference/{referenceNo}/status` (interface 4.3, 4.4;
//! CONTRACT sections 3 and 5).
//!
//! Both are matched by the interface's path matching
//! ([`crate::http::route`]) and take the raw segment, decoded here: an empty segment (`/api/payments//status`) still
//! reaches us, and a segment that is not UTF-8 after decoding gets our own
//! message.

use axum::http::StatusCode;
use axum::response::Response;
use uuid::Uuid;

use crate::domain::port::{LookupError, Store as _};
use crate::domain::transaction::issued_id;
use crate::http::extract::{Caller, decoded_segment};
use crate::http::handlers::status_envelope;
use crate::state::AppState;
use payments_serve::{ApiError, ErrorCode};

/// Reads a transaction by its id (interface document 4.3).
///
/// An empty segment (`/api/payments//status`) reaches it too and gets 400
/// INVALID_TRANSACTION_ID.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/api/payments/{transactionId}/status",
        operation_id = "statusById",
        tag = "payments"
    )
)]
pub(crate) async fn by_id(
    state: &AppState,
    caller: Caller,
    raw: &str,
) -> Result<Response, ApiError> {
    let invalid =
        |m: &str| ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::InvalidTransactionId, m);
    // An id that is no text once decoded is no stored transaction's:
    // simply unknown, as any id that is not a UUID (CONTRACT section 3).
    let id = decoded_segment(raw).ok_or_else(|| not_text("transactionId", raw))?;
    if id.trim().is_empty() {
        return Err(invalid("transactionId must not be empty"));
    }
    let found = match issued_id(&id) {
        Some(issued) => {
            let now = state.store.now().await?;
            state
                .store
                .with_id(issued, caller.merchant, |record| {
                    state.coverage.observe(record, now);
                    status_envelope(record, now)
                })
                .await?
        }
        None => None,
    };
    if found.is_none() {
        // Its sandbox removed meanwhile: 404 SANDBOX_NOT_FOUND.
        state.store.still_here().await?;
    }
    found.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::TransactionNotFound,
            format!("no transaction with transactionId {id}"),
        )
    })
}

/// 404 `TRANSACTION_NOT_FOUND` for a path segment `raw` that is not UTF-8
/// once percent-decoded (named as it came: its escapes are ASCII).
fn not_text(field: &str, raw: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::TransactionNotFound,
        format!("no transaction with {field} {raw} (not UTF-8 once percent-decoded)"),
    )
}

/// 403 `FORBIDDEN` for a key bound to merchant `bound` that names another
/// merchant, `named` (an initiate's `merchantId`, a reference read's
/// `?merchantId=`).
pub(crate) fn other_merchant(bound: Uuid, named: Uuid) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        ErrorCode::Forbidden,
        format!("this API key may only act for merchant {bound}, not {named}"),
    )
}

/// The `merchantId` query parameter, if given. Given empty
/// (`?merchantId=`) is not absent: like any other non-UUID it is a
/// `VALIDATION_ERROR` (CONTRACT section 5), never a silently wider scope.
/// Given twice, the same merchant is that merchant; two that differ are a
/// `VALIDATION_ERROR` too (the first decided before, silently).
pub(crate) fn merchant_query(query: Option<&str>) -> Result<Option<Uuid>, ApiError> {
    let Some(query) = query else {
        return Ok(None);
    };
    let mut scope = None;
    for (_, v) in form_urlencoded::parse(query.as_bytes()).filter(|(k, _)| k == "merchantId") {
        // The hyphenated form only, as initiate's body takes it
        // (rules::UUID): `{…}`, `urn:uuid:…` and 32 bare hex digits are
        // not the document's UUID.
        let merchant = payments_interface::rules::uuid(&v)
            .ok_or_else(|| ApiError::validation("merchantId must be a UUID"))?;
        match scope {
            Some(first) if first != merchant => {
                return Err(ApiError::validation(
                    "merchantId is given more than once, with different values",
                ));
            }
            _ => scope = Some(merchant),
        }
    }
    Ok(scope)
}

/// Reads a transaction by the merchant's reference (interface document 4.4).
///
/// The scope is the API key's merchant, else the `merchantId` query
/// parameter, else none: a reference several merchants hold is then 400
/// AMBIGUOUS_REFERENCE_NO. A key bound to a merchant whose query names
/// another is 403 FORBIDDEN, as on initiate.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/api/payments/reference/{referenceNo}/status",
        operation_id = "statusByReference",
        tag = "payments"
    )
)]
pub(crate) async fn by_reference(
    state: &AppState,
    caller: Caller,
    raw: &str,
    query: Option<&str>,
) -> Result<Response, ApiError> {
    let invalid =
        |m: &str| ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::InvalidReferenceNo, m);
    let reference = decoded_segment(raw).ok_or_else(|| not_text("referenceNo", raw))?;
    if reference.trim().is_empty() {
        return Err(invalid("referenceNo must not be empty"));
    }
    let query_scope = merchant_query(query)?;
    // A key bound to a merchant acts for that merchant alone: a query
    // naming another is refused as initiate refuses a body naming one,
    // never answered for the key's merchant as if it had not been asked.
    if let (Some(bound), Some(named)) = (caller.merchant, query_scope)
        && bound != named
    {
        return Err(other_merchant(bound, named));
    }
    let scope = caller.merchant.or(query_scope);
    let now = state.store.now().await?;
    let found = state
        .store
        .with_reference(&reference, scope, |record| {
            state.coverage.observe(record, now);
            status_envelope(record, now)
        })
        .await?;
    match found {
        Ok(response) => Ok(response),
        Err(LookupError::NotFound) => {
            // Its sandbox removed meanwhile: 404 SANDBOX_NOT_FOUND.
            state.store.still_here().await?;
            Err(ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::TransactionNotFound,
                format!("no transaction with referenceNo {reference}"),
            ))
        }
        Err(LookupError::Ambiguous) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::AmbiguousReferenceNo,
            format!(
                "referenceNo {reference} is used by several merchants; pass merchantId to choose one"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::merchant_query;

    const A: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
    const B: &str = "7a2b1c3d-2c8b-4d2f-8b66-2d3c4e5f6a71";

    #[test]
    fn a_merchant_given_twice_is_one_and_two_that_differ_are_refused() {
        let a = uuid::Uuid::parse_str(A).expect("a UUID");
        assert_eq!(merchant_query(None).expect("none"), None);
        assert_eq!(merchant_query(Some("x=1")).expect("none"), None);
        assert_eq!(
            merchant_query(Some(&format!("merchantId={A}"))).expect("A"),
            Some(a)
        );
        assert_eq!(
            merchant_query(Some(&format!("merchantId={A}&merchantId={A}"))).expect("A"),
            Some(a)
        );
        for query in [
            format!("merchantId={A}&merchantId={B}"),
            format!("merchantId={B}&merchantId={A}"),
        ] {
            let refused = merchant_query(Some(&query)).expect_err("refused");
            assert_eq!(refused.code, payments_serve::ErrorCode::ValidationError);
            assert!(refused.message.starts_with("merchantId "), "{refused}");
            assert!(refused.message.contains("more than once"), "{refused}");
        }
        let refused =
            merchant_query(Some(&format!("merchantId={A}&merchantId="))).expect_err("refused");
        assert_eq!(refused.message, "merchantId must be a UUID");
    }
}
