//! The `/_mock/` test controls (CONTRACT section 10) and `/openapi.json`.

use std::time::Duration;

use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{Map, Number, Value, json};
use uuid::Uuid;

use crate::clock::format_time;
use crate::error::{ApiError, ErrorCode, success};
use crate::extract::JsonObject;
use crate::handlers::pay::{PayerError, play_payer};
use crate::handlers::status_data;
use crate::state::AppState;
use crate::store::PayerAction;

/// Largest single advance: 100 years.
const MAX_ADVANCE_SECONDS: u64 = 100 * 365 * 24 * 3600;

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    query
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, v)| k == name && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

fn limit(pairs: &[(String, String)], default: usize, max: usize) -> Result<usize, ApiError> {
    match param(pairs, "limit") {
        None => Ok(default),
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| {
                ApiError::validation(format!("limit must be an integer between 1 and {max}"))
            }),
    }
}

/// `GET /_mock/health`.
pub async fn health(State(state): State<AppState>) -> Response {
    success(
        json!({
            "status": "ok",
            "now": format_time(state.clock.now()),
            "transactions": state.store.len(),
        }),
        None,
    )
}

/// `GET /_mock/transactions?merchantId=&status=&limit=&after=`.
pub async fn transactions(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(query.as_deref());
    let mut problems = Vec::new();
    let merchant = match param(&pairs, "merchantId").map(Uuid::parse_str) {
        None => None,
        Some(Ok(m)) => Some(m),
        Some(Err(_)) => {
            problems.push("merchantId must be a UUID".to_owned());
            None
        }
    };
    let status = param(&pairs, "status");
    let limit = limit(&pairs, 100, 1000).unwrap_or_else(|e| {
        problems.push(e.message);
        100
    });
    let after = param(&pairs, "after");
    if !problems.is_empty() {
        return Err(ApiError::validation(problems.join("; ")));
    }
    let now = state.clock.now();
    let unknown_after = || ApiError::validation("after must be a known transactionId");
    // `after` keeps its strict form: the id exactly as the API writes it.
    let after = match after {
        None => None,
        Some(text) => match Uuid::parse_str(text) {
            Ok(id) if id.to_string() == text => Some(id),
            _ => return Err(unknown_after()),
        },
    };
    let keep = |record: &crate::store::Record| {
        merchant.is_none_or(|m| m == record.fields.merchant_id)
            && status.is_none_or(|s| record.view(now).status.as_str() == s)
    };
    let to_item = |record: &crate::store::Record| {
        let data = status_data(record, now);
        AdminItem {
            transaction_id: data.transaction_id.to_string(),
            reference_no: data.reference_no.to_owned(),
            status: data.status,
            amount: data.amount,
            product_code: data.product_code.to_owned(),
            created_at: data.created_at,
            last_modified_at: data.last_modified_at,
            provider_reference: data.provider_reference.map(str::to_owned),
            message: data.message.map(str::to_owned),
            extra_properties: data.extra_properties.map(str::to_owned),
            merchant_id: record.fields.merchant_id.to_string(),
            amount_minor: record.fields.amount_minor,
            currency_code: record.fields.currency_code.to_string(),
        }
    };
    let (items, more) = state
        .store
        .page(after, limit, keep, to_item)
        .ok_or_else(unknown_after)?;
    let next = match items.last() {
        Some(last) if more => Value::String(last.transaction_id.clone()),
        _ => Value::Null,
    };
    Ok(success(json!({ "items": items, "next": next }), None))
}

/// One item of `GET /_mock/transactions`: status `data` plus the stored
/// facts a test may want (spelled out, never `flatten`: numbers inside).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AdminItem {
    transaction_id: String,
    reference_no: String,
    status: &'static str,
    amount: Number,
    product_code: String,
    created_at: String,
    last_modified_at: Option<String>,
    provider_reference: Option<String>,
    message: Option<String>,
    extra_properties: Option<String>,
    merchant_id: String,
    amount_minor: u64,
    currency_code: String,
}

/// `POST /_mock/transactions/{transactionId}/payer` with
/// `{"action":"pay"|"decline"|"cancel"}`: what the payment page's button
/// does (CONTRACT section 13), for tests without a browser. `data` is the
/// status data plus `redirectTo`, the return address.
pub async fn payer(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Response, ApiError> {
    let action = match body.get("action") {
        None | Some(Value::Null) => Err("action is required"),
        Some(Value::String(a)) => {
            PayerAction::parse(a).ok_or("action must be one of pay, decline, cancel")
        }
        Some(_) => Err("action must be a string: pay, decline or cancel"),
    }
    .map_err(ApiError::validation)?;
    let outcome = play_payer(&state, &id, action).map_err(|e| match e {
        PayerError::NotFound => ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::TransactionNotFound,
            format!("no transaction with transactionId {id}"),
        ),
        PayerError::NotWaiting => ApiError::validation(e.to_string()),
    })?;
    let now = state.clock.now();
    let mut data = serde_json::to_value(status_data(&outcome.record, now))
        .map_err(|_| ApiError::internal())?;
    if let Value::Object(map) = &mut data {
        map.insert("redirectTo".to_owned(), Value::String(outcome.redirect_to));
    }
    Ok(success(data, Some("payer action applied")))
}

/// `POST /_mock/reset`.
pub async fn reset(State(state): State<AppState>) -> Response {
    state.reset();
    success(Value::Null, Some("reset"))
}

fn clock_data(state: &AppState) -> Value {
    let offset = Decimal::from_i128_with_scale(i128::from(state.clock.offset_nanos()), 9)
        .normalize()
        .to_string();
    let offset = serde_json::from_str::<Number>(&offset).unwrap_or_else(|_| Number::from(0));
    json!({ "now": format_time(state.clock.now()), "offsetSeconds": offset })
}

/// `GET /_mock/clock`.
pub async fn clock(State(state): State<AppState>) -> Response {
    success(clock_data(&state), None)
}

/// Seconds from the `{"seconds": N}` body: a non-negative JSON number, read
/// from its text (never through `f64`).
pub(crate) fn advance_seconds(body: &Map<String, Value>) -> Result<Duration, ApiError> {
    let number = match body.get("seconds") {
        None | Some(Value::Null) => return Err(ApiError::validation("seconds is required")),
        Some(Value::Number(n)) => n,
        Some(_) => return Err(ApiError::validation("seconds must be a number")),
    };
    let text = number.to_string();
    let seconds = Decimal::from_str_exact(&text)
        .or_else(|_| Decimal::from_scientific(&text))
        .map_err(|_| {
            ApiError::validation(format!("seconds must be at most {MAX_ADVANCE_SECONDS}"))
        })?;
    if seconds.is_sign_negative() && !seconds.is_zero() {
        return Err(ApiError::validation(
            "seconds must be greater than or equal to 0",
        ));
    }
    if seconds > Decimal::from(MAX_ADVANCE_SECONDS) {
        return Err(ApiError::validation(format!(
            "seconds must be at most {MAX_ADVANCE_SECONDS}"
        )));
    }
    let nanos = (seconds * Decimal::from(1_000_000_000u64)).trunc();
    let nanos = u64::try_from(nanos).map_err(|_| ApiError::internal())?;
    Ok(Duration::from_nanos(nanos))
}

/// `POST /_mock/clock/advance` with `{"seconds": N}`.
pub async fn advance(
    State(state): State<AppState>,
    JsonObject(body): JsonObject,
) -> Result<Response, ApiError> {
    let by = advance_seconds(&body)?;
    state.clock.advance(by);
    Ok(success(clock_data(&state), Some("clock advanced")))
}

/// `GET /_mock/requests?limit=&path=`.
pub async fn requests(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(query.as_deref());
    let limit = limit(&pairs, crate::journal::CAPACITY, crate::journal::CAPACITY)?;
    let path = param(&pairs, "path");
    let entries: Vec<_> = state
        .journal
        .entries()
        .into_iter()
        .filter(|e| path.is_none_or(|p| e.path == p))
        .collect();
    let skip = entries.len().saturating_sub(limit);
    let items: Vec<Value> = entries
        .into_iter()
        .skip(skip)
        .map(|e| {
            let headers: Map<String, Value> = e
                .headers
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            json!({
                "method": e.method,
                "path": e.path,
                "query": e.query,
                "headers": headers,
                "body": e.body,
                "status": e.status,
                "errorCode": e.error_code,
                "requestId": e.request_id,
                "fault": e.fault,
                "at": format_time(e.at),
            })
        })
        .collect();
    Ok(success(json!({ "items": items }), None))
}

/// `GET /openapi.json`.
pub async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        crate::openapi::DOCUMENT,
    )
        .into_response()
}
