//! `GET /_mock/health` (CONTRACT sections 10, 15 and 18): the mock's state
//! in brief, as much as the caller may see.

use axum::response::Response;
use serde::Serialize;

use crate::domain::access::Viewer;
use crate::domain::clock::format_time;
use crate::domain::port::Store as _;
use crate::state::Here;
use payments_serve::{ApiError, success};

/// `data` of `GET /_mock/health`: with `--admin-key`, an anonymous
/// caller is told `status` alone, a merchant's key also `now` and its
/// merchant's count, the admin key everything (CONTRACT section 18).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct Health {
    /// Always `ok`.
    status: &'static str,
    /// Virtual now (RFC 3339, UTC, milliseconds); not for an anonymous
    /// caller when `--admin-key` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    now: Option<String>,
    /// How many transactions are stored (a merchant's key: its own
    /// merchant's); not for an anonymous caller when `--admin-key` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    transactions: Option<usize>,
    /// Where state is kept: `memory`, `sqlite:PATH`, or the PostgreSQL URL
    /// with its password as `***` (CONTRACT section 15); the admin key's
    /// (or everyone's without `--admin-key`).
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<String>,
    /// The replica that answered (`--replica-name`); the admin key's (or
    /// everyone's without `--admin-key`).
    #[serde(skip_serializing_if = "Option::is_none")]
    replica: Option<String>,
}

/// The mock's state in brief, as much as the caller may see (without
/// `--admin-key`, everything); 503 `STORE_UNAVAILABLE` while the database
/// behind `--store` cannot be reached.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(get, path = "/_mock/health", operation_id = "mockHealth", tag = "mock")
)]
pub async fn health(Here(state): Here, viewer: Option<Viewer>) -> Result<Response, ApiError> {
    state.store.check().await?;
    let mut health = Health {
        status: "ok",
        now: None,
        transactions: None,
        store: None,
        replica: None,
    };
    let Some(viewer) = viewer else {
        return Ok(success(health, None));
    };
    health.now = Some(format_time(state.store.now().await?));
    match viewer.role.scope() {
        // One count by the store (one statement on the databases), not
        // a walk through the merchant's transactions a page at a time.
        Some(merchant) => {
            health.transactions = Some(state.store.count_of_merchant(merchant).await?);
        }
        None => {
            health.transactions = Some(state.store.count().await?);
            health.store = Some(state.store.shown());
            health.replica = Some(state.replica.clone());
        }
    }
    Ok(success(health, None))
}
