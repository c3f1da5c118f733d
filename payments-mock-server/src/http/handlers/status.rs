//! `GET /api/payments/{transactionId}/status` and
//! `GET /api/payments/reference/{referenceNo}/status` (interface 4.3, 4.4;
//! CONTRACT sections 3 and 5).
//!
//! Both are matched by hand ([`crate::http::route`]) and take the raw
//! segment, decoded here: an empty segment (`/api/payments//status`) still
//! reaches us, and a segment that is not UTF-8 after decoding gets our own
//! message.

use axum::http::StatusCode;
use axum::response::Response;
use uuid::Uuid;

use crate::domain::transaction::issued_id;
use crate::error::{ApiError, ErrorCode};
use crate::http::extract::{Caller, decoded_segment};
use crate::http::handlers::status_envelope;
use crate::http::state::AppState;
use crate::store::{LookupError, Store as _};

/// Which status endpoint a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target<'a> {
    /// By transactionId (raw segment).
    Id(&'a str),
    /// By referenceNo (raw segment).
    Reference(&'a str),
}

/// Splits the part of the path after `/api/payments/`.
pub fn target(rest: &str) -> Option<Target<'_>> {
    let inner = rest.strip_suffix("/status")?;
    match inner.strip_prefix("reference/") {
        Some(reference) if !reference.contains('/') => Some(Target::Reference(reference)),
        Some(_) => None,
        None if !inner.contains('/') => Some(Target::Id(inner)),
        None => None,
    }
}

/// Reads a transaction by its id (interface document 4.3).
///
/// An empty segment (`/api/payments//status`) reaches it too and gets 400
/// INVALID_TRANSACTION_ID.
#[utoipa::path(
    get,
    path = "/api/payments/{transactionId}/status",
    operation_id = "statusById",
    tag = "payments"
)]
pub(crate) async fn by_id(
    state: &AppState,
    caller: Caller,
    raw: &str,
) -> Result<Response, ApiError> {
    let invalid =
        |m: &str| ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::InvalidTransactionId, m);
    let id = decoded_segment(raw)
        .ok_or_else(|| invalid("transactionId is not valid UTF-8 after percent-decoding"))?;
    if id.trim().is_empty() {
        return Err(invalid("transactionId must not be empty"));
    }
    let found = match issued_id(&id) {
        Some(issued) => {
            let now = state.store.now().await?;
            state
                .store
                .with_id(issued, caller.merchant, |record| {
                    status_envelope(record, now)
                })
                .await?
        }
        None => None,
    };
    found.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::TransactionNotFound,
            format!("no transaction with transactionId {id}"),
        )
    })
}

/// The `merchantId` query parameter, if given. Given empty
/// (`?merchantId=`) is not absent: like any other non-UUID it is a
/// `VALIDATION_ERROR` (CONTRACT section 5), never a silently wider scope.
fn merchant_query(query: Option<&str>) -> Result<Option<Uuid>, ApiError> {
    let Some(query) = query else {
        return Ok(None);
    };
    let value = url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "merchantId")
        .map(|(_, v)| v.into_owned());
    match value {
        None => Ok(None),
        Some(v) => Uuid::parse_str(&v)
            .map(Some)
            .map_err(|_| ApiError::validation("merchantId must be a UUID")),
    }
}

/// Reads a transaction by the merchant's reference (interface document 4.4).
///
/// The scope is the API key's merchant, else the `merchantId` query
/// parameter, else none: a reference several merchants hold is then 400
/// AMBIGUOUS_REFERENCE_NO.
#[utoipa::path(
    get,
    path = "/api/payments/reference/{referenceNo}/status",
    operation_id = "statusByReference",
    tag = "payments"
)]
pub(crate) async fn by_reference(
    state: &AppState,
    caller: Caller,
    raw: &str,
    query: Option<&str>,
) -> Result<Response, ApiError> {
    let invalid =
        |m: &str| ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::InvalidReferenceNo, m);
    let reference = decoded_segment(raw)
        .ok_or_else(|| invalid("referenceNo is not valid UTF-8 after percent-decoding"))?;
    if reference.trim().is_empty() {
        return Err(invalid("referenceNo must not be empty"));
    }
    let query_scope = merchant_query(query)?;
    let scope = caller.merchant.or(query_scope);
    let now = state.store.now().await?;
    let found = state
        .store
        .with_reference(&reference, scope, |record| status_envelope(record, now))
        .await?;
    match found {
        Ok(response) => Ok(response),
        Err(LookupError::NotFound) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::TransactionNotFound,
            format!("no transaction with referenceNo {reference}"),
        )),
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
    use super::*;

    #[test]
    fn targets() {
        assert_eq!(target("abc/status"), Some(Target::Id("abc")));
        assert_eq!(target("/status"), Some(Target::Id("")));
        assert_eq!(target("reference//status"), Some(Target::Reference("")));
        assert_eq!(
            target("reference/INV%2F1/status"),
            Some(Target::Reference("INV%2F1"))
        );
        assert_eq!(target("a/b/status"), None);
        assert_eq!(target("abc"), None);
    }
}
