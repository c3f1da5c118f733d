//! `/_mock/faults`: the scripted fault rules (CONTRACT section 19).
//! Adding and removing rules change the mock: like reset, they refuse a
//! browser's request from another site's page ([`SameSite`]); with
//! `--admin-key`, the rules are the admin's alone (a merchant's key is 403:
//! a rule may name any merchant's reference).

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use uuid::Uuid;

use crate::fault_rules::{RuleView, parse_rule};
use crate::http::extract::{JsonObject, SameSite};
use crate::state::Here;
use payments_serve::{ApiError, ErrorCode, success};

/// `data` of `GET /_mock/faults`.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct RuleList {
    /// Every rule, in creation order (the order requests meet them).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    items: Vec<RuleView>,
}

/// Adds a fault rule: 201 with the rule, its id and its counts.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/_mock/faults",
        operation_id = "mockFaultAdd",
        tag = "mock"
    )
)]
pub async fn add(
    _: SameSite,
    Here(state): Here,
    JsonObject(body): JsonObject,
) -> Result<Response, ApiError> {
    let rule = parse_rule(&body).map_err(|e| ApiError::validation(e.to_string()))?;
    let view = state
        .fault_rules
        .add(rule)
        .map_err(|e| ApiError::validation(e.to_string()))?;
    let mut response = success(view, Some("fault rule added"));
    *response.status_mut() = StatusCode::CREATED;
    Ok(response)
}

/// The fault rules, with how often each met a request and fired.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(get, path = "/_mock/faults", operation_id = "mockFaults", tag = "mock")
)]
pub async fn list(Here(state): Here) -> Result<Response, ApiError> {
    Ok(success(
        RuleList {
            items: state.fault_rules.list(),
        },
        None,
    ))
}

/// Removes every fault rule.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        delete,
        path = "/_mock/faults",
        operation_id = "mockFaultsClear",
        tag = "mock"
    )
)]
pub async fn clear(_: SameSite, Here(state): Here) -> Result<Response, ApiError> {
    let removed = state.fault_rules.clear();
    Ok(success(
        serde_json::json!({ "removed": removed }),
        Some("fault rules removed"),
    ))
}

/// Removes one fault rule. A malformed id is 400; an unknown one 404.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        delete,
        path = "/_mock/faults/{ruleId}",
        operation_id = "mockFaultRemove",
        tag = "mock",
        params(("ruleId" = String, Path, format = Uuid, description = "The rule's id"))
    )
)]
pub async fn remove(
    _: SameSite,
    Here(state): Here,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = Uuid::try_parse(&id)
        .ok()
        .filter(|_| id.len() == 36)
        .ok_or_else(|| ApiError::validation("ruleId must be a UUID (8-4-4-4-12 hex digits)"))?;
    if state.fault_rules.remove(id) {
        Ok(success(
            serde_json::json!({ "removed": 1 }),
            Some("fault rule removed"),
        ))
    } else {
        Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            format!("no fault rule {id}"),
        ))
    }
}
