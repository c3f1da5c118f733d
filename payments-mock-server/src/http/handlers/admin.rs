//! The `/_mock/` test controls (CONTRACT section 10) and `/openapi.json`.
//!
//! Query parameters are strict, like bodies: a parameter given with a value
//! that breaks its rule (an empty one included) is a `VALIDATION_ERROR`,
//! exactly as the OpenAPI document describes it.
//!
//! The controls that change the mock (reset, the clock, the payer) refuse a
//! browser's request made by another site's page ([`SameSite`]): a page
//! elsewhere could otherwise reset an integrator's mock through their
//! browser (a plain form can post to `/_mock/reset`, which takes no body).
//!
//! With `--admin-key` the middleware lets only keys through (CONTRACT
//! section 18); a merchant's key reaches the reads alone, and they show it
//! its merchant's part ([`Viewer`]'s scope).

use axum::extract::{Path, RawQuery};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use serde_json::{Number, Value};
use uuid::Uuid;

use crate::domain::access::Viewer;
use crate::domain::clock::format_time;
use crate::domain::payer::{PayerError, play_payer};
use crate::domain::port::{Order, PageQuery, Store as _};
use crate::domain::rules;
use crate::domain::transaction::{PayerAction, Status};
use crate::http::extract::{JsonObject, SameSite};
use crate::http::handlers::{StatusData, status_data};
use crate::state::Here;
use payments_serve::admin::query_pairs;
use payments_serve::{ApiError, ErrorCode, success};

mod requests;
#[cfg(feature = "openapi")]
pub(crate) use requests::__path_requests;
pub(crate) use requests::requests;
#[cfg(feature = "openapi")]
pub(crate) use requests::{JournalItem, JournalPage, SEQ_MAX};

/// The journal's length, the most `GET /_mock/requests` returns.
const JOURNAL: usize = crate::domain::journal::CAPACITY;
/// Default and largest page of `GET /_mock/transactions`.
pub(crate) const PAGE_DEFAULT: usize = 100;
pub(crate) const PAGE_MAX: usize = 1000;

/// The statuses a filter can name.
pub(crate) const STATUSES: [Status; 6] = [
    Status::Pending,
    Status::Initiated,
    Status::Confirmed,
    Status::Successful,
    Status::Failed,
    Status::Expired,
];

/// The first value of `name`, empty or not: here an empty `?limit=` is a
/// mistake to name, not an absent filter (the console's
/// [`payments_serve::admin::param`] takes it as absent).
fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn limit(
    pairs: &[(String, String)],
    default: usize,
    max: usize,
    problems: &mut Vec<String>,
) -> usize {
    match param(pairs, "limit") {
        None => default,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) && !text.starts_with('+') => n,
            _ => {
                problems.push(format!("limit must be an integer between 1 and {max}"));
                default
            }
        },
    }
}

/// One item of `GET /_mock/transactions`: status `data` plus the stored
/// facts a test may want (spelled out, never `flatten`: numbers inside).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct AdminTransaction {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    transaction_id: String,
    reference_no: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::transaction_status))]
    status: &'static str,
    /// Major units with exactly the currency's fraction digits.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::major_amount))]
    amount: Number,
    product_code: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::timestamp))]
    created_at: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::optional_timestamp))]
    last_modified_at: Option<String>,
    provider_reference: Option<String>,
    message: Option<String>,
    /// Provider data as JSON text.
    extra_properties: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    merchant_id: String,
    /// The initiate's amount in minor units.
    amount_minor: u64,
    /// ISO 4217.
    currency_code: String,
}

/// `data` of `GET /_mock/transactions`.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct TransactionPage {
    items: Vec<AdminTransaction>,
    /// The `after` of the next page, or null on the last.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Uuid))]
    next: Option<String>,
}

/// Every stored transaction, oldest first, a page at a time.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/transactions",
        operation_id = "mockTransactions",
        tag = "mock"
    )
)]
pub async fn transactions(
    Here(state): Here,
    viewer: Viewer,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(query.as_deref());
    let mut problems = Vec::new();
    let merchant = param(&pairs, "merchantId").and_then(|m| {
        let id = rules::uuid(m);
        if id.is_none() {
            problems.push("merchantId must be a UUID".to_owned());
        }
        id
    });
    let status = param(&pairs, "status").and_then(|s| {
        let found = STATUSES.into_iter().find(|st| st.as_str() == s);
        if found.is_none() {
            problems.push(format!(
                "status must be one of {}",
                STATUSES.map(Status::as_str).join(", ")
            ));
        }
        found
    });
    let limit = limit(&pairs, PAGE_DEFAULT, PAGE_MAX, &mut problems);
    // `after` is an id exactly as the API writes it (lower-case).
    let after = param(&pairs, "after").and_then(|a| {
        let id = rules::is_issued_id(a)
            .then(|| Uuid::parse_str(a).ok())
            .flatten();
        if id.is_none() {
            problems.push("after must be a transactionId as issued (lower-case UUID)".to_owned());
        }
        id
    });
    if !problems.is_empty() {
        return Err(ApiError::validation(problems.join("; ")));
    }
    let missing_after = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::TransactionNotFound,
            "after names no stored transaction (was the mock reset?)",
        )
    };
    // A merchant's key sees its own merchant's transactions, as on /api/:
    // another merchant's are not there, not even as a place to page from.
    let scope = viewer.role.scope();
    if let Some(own) = scope {
        if merchant.is_some_and(|m| m != own) {
            return Ok(success(
                TransactionPage {
                    items: Vec::new(),
                    next: None,
                },
                None,
            ));
        }
        if let Some(after) = after
            && state
                .store
                .with_id(after, Some(own), |_| ())
                .await?
                .is_none()
        {
            return Err(missing_after());
        }
    }
    let merchant = scope.or(merchant);
    let now = state.store.now().await?;
    let keep = |record: &crate::domain::transaction::Record| {
        scope.is_none_or(|own| own == record.fields.merchant_id)
            && status.is_none_or(|s| record.view(now).status == s)
    };
    // The test's look: no coverage (the application met nothing of it).
    let to_item = |record: &crate::domain::transaction::Record| {
        let data = status_data(record, now);
        AdminTransaction {
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
    let query = PageQuery {
        order: Order::OldestFirst,
        from: after,
        limit,
        merchant,
        reference_contains: None,
    };
    let page = state
        .store
        .page(&query, keep, to_item)
        .await?
        .ok_or_else(missing_after)?;
    let next = page
        .items
        .last()
        .filter(|_| page.more)
        .map(|last| last.transaction_id.clone());
    Ok(success(
        TransactionPage {
            items: page.items,
            next,
        },
        None,
    ))
}

/// `data` of `POST /_mock/transactions/{transactionId}/payer`: the status
/// data after the decision, and where the browser would have gone. The
/// status fields are spelled out (`serde(flatten)` would turn the exact
/// amount into a map).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct PayerData<'a> {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    transaction_id: Uuid,
    reference_no: &'a str,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::transaction_status))]
    status: &'static str,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::major_amount))]
    amount: Number,
    product_code: &'a str,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::timestamp))]
    created_at: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::optional_timestamp))]
    last_modified_at: Option<String>,
    provider_reference: Option<&'a str>,
    message: Option<&'a str>,
    extra_properties: Option<&'a str>,
    /// The return address: `returnUrl` with `transactionId`, `referenceNo`
    /// and `status` appended.
    #[cfg_attr(feature = "openapi", schema(format = "uri"))]
    redirect_to: String,
}

impl<'a> PayerData<'a> {
    fn new(status: StatusData<'a>, redirect_to: String) -> Self {
        Self {
            transaction_id: status.transaction_id,
            reference_no: status.reference_no,
            status: status.status,
            amount: status.amount,
            product_code: status.product_code,
            created_at: status.created_at,
            last_modified_at: status.last_modified_at,
            provider_reference: status.provider_reference,
            message: status.message,
            extra_properties: status.extra_properties,
            redirect_to,
        }
    }
}

/// Plays the payer of a redirect-based transaction, without a browser.
///
/// What the payment page's Pay, Decline or Cancel button does (CONTRACT
/// section 13), at the virtual clock's now.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/_mock/transactions/{transactionId}/payer",
        operation_id = "mockPayer",
        tag = "mock"
    )
)]
pub async fn payer(
    _: SameSite,
    Here(state): Here,
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
    let (outcome, now) = play_payer(&state.store, &id, action)
        .await?
        .map_err(|e| match e {
            PayerError::NotFound => ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::TransactionNotFound,
                format!("no transaction with transactionId {id}"),
            ),
            PayerError::NotWaiting => ApiError::validation(e.to_string()),
        })?;
    state
        .coverage
        .transition(Some(Status::Confirmed), outcome.record.recorded_status());
    Ok(success(
        PayerData::new(
            status_data(&outcome.record, now),
            outcome.redirect_to.clone(),
        ),
        Some("payer action applied"),
    ))
}

/// Forgets every transaction and the journal; real time again.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(post, path = "/_mock/reset", operation_id = "mockReset", tag = "mock")
)]
pub async fn reset(_: SameSite, Here(state): Here) -> Result<Response, ApiError> {
    state.reset().await?;
    Ok(success(Value::Null, Some("reset")))
}

/// `data` of the clock controls.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClockData {
    /// Virtual now.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::timestamp))]
    now: String,
    /// How far the virtual clock is ahead of real time, in seconds (up to
    /// nine fraction digits).
    #[cfg_attr(feature = "openapi", schema(value_type = f64, minimum = 0))]
    offset_seconds: Number,
}

fn clock_data(reading: crate::domain::port::ClockReading) -> ClockData {
    let offset = rust_decimal::Decimal::from_i128_with_scale(i128::from(reading.offset_nanos), 9)
        .normalize()
        .to_string();
    ClockData {
        now: format_time(reading.now),
        offset_seconds: serde_json::from_str::<Number>(&offset).unwrap_or_else(|_| Number::from(0)),
    }
}

/// The virtual clock.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(get, path = "/_mock/clock", operation_id = "mockClock", tag = "mock")
)]
pub async fn clock(Here(state): Here) -> Result<Response, ApiError> {
    Ok(success(clock_data(state.store.clock().await?), None))
}

/// Moves the virtual clock forward; expiry, settlement and payer windows follow.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/_mock/clock/advance",
        operation_id = "mockClockAdvance",
        tag = "mock"
    )
)]
pub async fn advance(
    _: SameSite,
    Here(state): Here,
    JsonObject(body): JsonObject,
) -> Result<Response, ApiError> {
    let by = crate::domain::clock::advance_seconds(&body)?;
    // The check and the add are one step of the store: of racing
    // advances that only one fits, the others are 400 and move nothing.
    let reading = state
        .store
        .advance_clock_within(by)
        .await?
        .map_err(crate::domain::invalid::Invalid::from)?;
    Ok(success(clock_data(reading), Some("clock advanced")))
}

/// The counts in the Prometheus text format, or OpenMetrics text when
/// `Accept` asks for it (CONTRACT section 18). With `--admin-key`, an
/// admin key only (the middleware).
#[cfg(feature = "metrics")]
#[cfg_attr(
    feature = "openapi",
    utoipa::path(get, path = "/metrics", operation_id = "metrics", tag = "mock")
)]
pub async fn metrics(Here(state): Here, headers: axum::http::HeaderMap) -> Response {
    use axum::response::IntoResponse as _;
    let accept = headers
        .get(axum::http::header::ACCEPT)
        .map(|v| v.as_bytes());
    let (body, content_type) = state.metrics.render(accept);
    ([(axum::http::header::CONTENT_TYPE, content_type)], body).into_response()
}

/// This document.
#[cfg(feature = "openapi")]
#[utoipa::path(get, path = "/openapi.json", operation_id = "openapi", tag = "mock")]
pub async fn openapi(Here(state): Here) -> Response {
    use axum::response::IntoResponse as _;
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        state.openapi_json(),
    )
        .into_response()
}
