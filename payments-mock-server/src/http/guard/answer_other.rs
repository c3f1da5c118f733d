//! The `answer-other` fault (`guard.rs`): the answer about another
//! transaction that a misrouting gateway or a stale cache gives.

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use http_body_util::BodyExt as _;
use payments_interface::Endpoint;
use serde_json::Value;
use uuid::Uuid;

use crate::domain::port::{Order, PageQuery, Store as _};
use crate::domain::transaction::Record;
use crate::http::extract::Caller;
use crate::state::AppState;

/// How long an `/api/` answer waits for another transaction to answer
/// about: the bound of every other `/api/` call on a store.
const OTHER_SEARCH: std::time::Duration = std::time::Duration::from_secs(4);

/// The `answer-other` fault: `response` (the true answer, the change made)
/// and, to answer instead, the same endpoint's answer about the newest
/// other transaction of the caller's scope (a confirmed one for a
/// confirm), in its current status, as a misrouting gateway answers. No
/// answer instead (`None`) when the true answer is no success, or no other
/// transaction is there to show: the fault changed nothing, and the guard
/// counts it nowhere.
pub(super) async fn answer_other(
    state: &AppState,
    caller: Caller,
    parts: &Parts,
    response: Response,
) -> (Response, Option<Response>) {
    use crate::http::handlers::{confirm::confirm_envelope, initiate::initiate_envelope};
    if response.status() != StatusCode::OK {
        return (response, None);
    }
    let Some(endpoint) = payments_interface::route(parts.uri.path()).map(|r| r.endpoint) else {
        return (response, None);
    };
    let (head, body) = response.into_parts();
    let Ok(collected) = body.collect().await else {
        // The true answer is lost: a 500, a fault met all the same.
        return (super::injected_error(), Some(super::injected_error()));
    };
    let bytes = collected.to_bytes();
    let this = serde_json::from_slice::<Value>(&bytes).ok().and_then(|v| {
        v["data"]["transactionId"]
            .as_str()
            .and_then(|id| Uuid::parse_str(id).ok())
    });
    let query = PageQuery {
        order: Order::NewestFirst,
        from: None,
        limit: 1,
        merchant: caller.merchant,
        reference_contains: None,
    };
    // An `/api/` answer keeps its 4 s bound however long a store's page of
    // another transaction takes (a list of the console may take up to a
    // minute on a big sandbox): past it, no other transaction was found.
    let other = tokio::time::timeout(
        OTHER_SEARCH,
        state.store.page(
            &query,
            |r| Some(r.id) != this && (endpoint != Endpoint::Confirm || r.confirmation.is_some()),
            Record::clone,
        ),
    )
    .await
    .unwrap_or(Ok(None));
    // The other transaction as a status read would show it now (a settled
    // BILLPAY is SUCCESSFUL, not its stored CONFIRMED): a stale answer
    // would make a watching proxy see a status go back (issue 40).
    let now = match state.store.now().await {
        Ok(now) => now,
        Err(_) => state.store.now_hint(),
    };
    let replaced = match other {
        Ok(Some(page)) => page.items.first().and_then(|other| match endpoint {
            Endpoint::Initiate => Some(initiate_envelope(other, other.view(now).status.as_str())),
            Endpoint::Confirm => confirm_envelope(other, now),
            Endpoint::StatusById | Endpoint::StatusByReference => {
                Some(crate::http::handlers::status_envelope(other, now))
            }
        }),
        _ => None,
    };
    (
        Response::from_parts(head, axum::body::Body::from(bytes)),
        replaced,
    )
}
