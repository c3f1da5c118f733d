//! The recovered half of the coverage's fault cells (`coverage.rs`): what a
//! committed fault was about, and whether the application came back for
//! it. Off the common path: [`committed`] runs only for a request that met
//! a fault that commits first (`commit-then-error`, `commit-then-reset`,
//! `answer-other`, `commit-then-hang`, `truncate`), and
//! [`follow_up`] only while a note of one waits (the guard asks
//! `Counter::awaits` first, one atomic load).
//!
//! The application came back when, after the fault, it
//!
//! - read the transaction's status, by id or by reference, and was
//!   answered 200 without a fault of its own (a 404, another merchant's
//!   view, or a read that was itself delayed or trickled is no look at it);
//! - retried the initiate and was answered 400 `DUPLICATE_REFERENCE_NO`
//!   for the same merchant and reference.

use axum::body::Body;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use http_body_util::BodyExt as _;
use payments_interface::{Endpoint, ErrorCode};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::coverage::Subject;
use crate::domain::port::Store as _;
use crate::domain::transaction::issued_id;
use crate::http::extract::{Caller, decoded_segment};
use crate::http::handlers::status::merchant_query;
use crate::state::AppState;

/// Notes that the request (`parts`, `body`) for `endpoint` met the
/// committing fault `kind` after its route answered `response` (the true
/// answer): what it was about waits for the application to come back.
/// Gives back `response`, its body read when it is a success (its
/// `transactionId` names the transaction).
pub(crate) async fn committed(
    state: &AppState,
    caller: Caller,
    parts: &Parts,
    endpoint: Endpoint,
    kind: usize,
    body: &[u8],
    response: Response,
) -> Response {
    let (response, answered) = if response.status() == StatusCode::OK {
        let (head, answer) = response.into_parts();
        let bytes = match answer.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => bytes::Bytes::new(),
        };
        let id = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| v["data"]["transactionId"].as_str().and_then(issued_id));
        (Response::from_parts(head, Body::from(bytes)), id)
    } else {
        (response, None)
    };
    let subject = subject(state, caller, parts, endpoint, body, answered).await;
    state.coverage.committed(endpoint, kind, subject);
    response
}

/// What a faulted request was about: the transaction its true answer, its
/// body or its path names (with its merchant and reference, looked up),
/// else the merchant and reference it names.
async fn subject(
    state: &AppState,
    caller: Caller,
    parts: &Parts,
    endpoint: Endpoint,
    body: &[u8],
    answered: Option<Uuid>,
) -> Subject {
    let object = || serde_json::from_slice::<Map<String, Value>>(body).ok();
    let segment = || {
        payments_interface::route_as(endpoint, parts.uri.path())
            .and_then(|r| decoded_segment(r.raw))
            .map(std::borrow::Cow::into_owned)
    };
    let id = answered.or_else(|| match endpoint {
        Endpoint::Confirm => {
            object().and_then(|o| o.get("transactionId")?.as_str().and_then(issued_id))
        }
        Endpoint::StatusById => segment().as_deref().and_then(issued_id),
        Endpoint::Initiate | Endpoint::StatusByReference => None,
    });
    if let Some(id) = id
        && let Ok(Some((merchant, reference))) = state
            .store
            .with_id(id, caller.merchant, |r| {
                (r.fields.merchant_id, r.fields.reference_no.clone())
            })
            .await
    {
        return Subject {
            id: Some(id),
            merchant: Some(merchant),
            reference: Some(reference),
        };
    }
    match endpoint {
        Endpoint::StatusByReference => Subject {
            id: None,
            merchant: caller
                .merchant
                .or_else(|| merchant_query(parts.uri.query()).ok().flatten()),
            reference: segment().map(String::into_boxed_str),
        },
        // An unknown transaction, or an initiate whose true answer stored
        // none (refused, a duplicate, rate-limited): nothing was changed to
        // come back for.
        Endpoint::Initiate | Endpoint::Confirm | Endpoint::StatusById => Subject::default(),
    }
}

/// The merchant and reference an initiate body names.
fn named(object: Option<&Map<String, Value>>) -> Subject {
    let text = |name| object.and_then(|o| o.get(name)?.as_str());
    Subject {
        id: None,
        merchant: text("merchantId").and_then(|m| Uuid::parse_str(m).ok()),
        reference: text("referenceNo").map(Box::from),
    }
}

/// Whether the request (`parts`, `body`) for `endpoint`, answered
/// `status` and `code` without a fault, is the application coming back
/// for a transaction a committed fault was about; if so, those faults are
/// recovered. Called only while a note waits.
pub(crate) async fn follow_up(
    state: &AppState,
    caller: Caller,
    parts: &Parts,
    endpoint: Endpoint,
    body: &[u8],
    (status, code): (StatusCode, Option<ErrorCode>),
) {
    let seen = match endpoint {
        Endpoint::Initiate
            if status == StatusCode::BAD_REQUEST
                && code == Some(ErrorCode::DuplicateReferenceNo) =>
        {
            let object = serde_json::from_slice::<Map<String, Value>>(body).ok();
            named(object.as_ref())
        }
        Endpoint::StatusById if status == StatusCode::OK => {
            let Some(id) = payments_interface::route_as(endpoint, parts.uri.path())
                .and_then(|r| decoded_segment(r.raw))
                .and_then(|id| issued_id(&id))
            else {
                return;
            };
            match state
                .store
                .with_id(id, caller.merchant, |r| {
                    (r.fields.merchant_id, r.fields.reference_no.clone())
                })
                .await
            {
                Ok(Some((merchant, reference))) => Subject {
                    id: Some(id),
                    merchant: Some(merchant),
                    reference: Some(reference),
                },
                _ => return,
            }
        }
        Endpoint::StatusByReference if status == StatusCode::OK => {
            let Some(reference) = payments_interface::route_as(endpoint, parts.uri.path())
                .and_then(|r| decoded_segment(r.raw))
            else {
                return;
            };
            let scope = caller
                .merchant
                .or_else(|| merchant_query(parts.uri.query()).ok().flatten());
            match state
                .store
                .with_reference(&reference, scope, |r| (r.id, r.fields.merchant_id))
                .await
            {
                Ok(Ok((id, merchant))) => Subject {
                    id: Some(id),
                    merchant: Some(merchant),
                    reference: Some(reference.into()),
                },
                _ => return,
            }
        }
        _ => return,
    };
    state.coverage.came_back(&seen);
}
