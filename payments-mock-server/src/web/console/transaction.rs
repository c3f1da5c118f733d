//! One transaction in the console, in full: every field, its timeline, the
//! journal entries that concern it, and its payment page when it has one.

use askama::Template;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::target::Shown;
use super::transactions::status_class;
use super::{Chrome, console_page, shown_time, store_down, viewed_error, visible};
use crate::domain::access::Viewer;
use crate::domain::journal::JournalEntry;
use crate::domain::port::Store as _;
use crate::domain::redirect::payment_url;
use crate::domain::transaction::issued_id;
use crate::domain::transaction::{ConfirmResult, Record};
use crate::state::{AppState, Here};
use crate::web::html::render;
use payments_interface::Endpoint;
use payments_interface::money::major_text;

/// One event of a transaction's life.
#[derive(Debug)]
struct Event {
    what: String,
    at: String,
}

/// One journal entry that concerns the transaction.
#[derive(Debug)]
struct Request {
    seq: u64,
    at: String,
    method: String,
    /// The path and query decoded for reading ([`Shown`]).
    path: String,
    /// The path and query as sent, when it reads otherwise; else empty.
    sent: String,
    status: String,
    error_code: String,
}

#[derive(Template)]
#[template(path = "console/transaction.html")]
struct DetailPage {
    chrome: Chrome,
    id: String,
    status: &'static str,
    status_class: &'static str,
    fields: Vec<(&'static str, String)>,
    timeline: Vec<Event>,
    requests: Vec<Request>,
    payment_url: Option<String>,
}

/// `GET /_mock/ui/transactions/{id}`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/transactions/{transactionId}",
        operation_id = "consoleTransaction",
        tag = "console"
    )
)]
pub(crate) async fn detail(Here(state): Here, viewer: Viewer, uri: Uri) -> Response {
    let path = uri.path();
    let scope = viewer.role.scope();
    let id = path
        .strip_prefix("/_mock/ui/transactions/")
        .unwrap_or_default();
    let found = match issued_id(id) {
        // A merchant's key finds its merchant's transactions only.
        Some(issued) => state.store.with_id(issued, scope, Record::clone).await,
        None => Ok(None),
    };
    let now = state.store.now().await;
    let entries = match state
        .store
        .requests_since(0, crate::domain::journal::CAPACITY)
        .await
    {
        Ok(entries) => state.visible_requests(scope, entries).await,
        Err(e) => Err(e),
    };
    let (found, now, entries) = match (found, now, entries) {
        (Ok(found), Ok(now), Ok(entries)) => (found, now, entries),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            return store_down(&state, viewer, &e, path);
        }
    };
    let Some(record) = found else {
        return viewed_error(
            &state,
            Some(viewer),
            StatusCode::NOT_FOUND,
            "No such transaction",
            "No stored transaction has this transactionId (ids are kept until a reset).",
            path,
        );
    };
    // The tester's look: no coverage (the application met nothing of it).
    let view = record.view(now);
    let page = record.payment_page();
    let open_page = page
        .filter(|p| p.is_open(now))
        .map(|p| payment_url(&state.public_url, &p.token));
    let requests = entries
        .into_iter()
        .rev()
        .filter(|e| concerns(e, &record))
        .map(|e| {
            let target = Shown::of(&format!(
                "{}{}",
                e.path,
                e.query.map(|q| format!("?{q}")).unwrap_or_default()
            ));
            Request {
                seq: e.seq,
                at: shown_time(e.at),
                method: e.method,
                path: target.read,
                sent: target.sent,
                status: e
                    .status
                    .map_or_else(|| "reset".to_owned(), |s| s.to_string()),
                error_code: e.error_code.unwrap_or_default(),
            }
        })
        .collect();
    console_page(render(
        StatusCode::OK,
        &DetailPage {
            chrome: Chrome::new(&state, path, "transactions").seen_by(viewer),
            id: record.id.to_string(),
            status: view.status.as_str(),
            status_class: status_class(view.status),
            fields: fields(&record, &view, &state),
            timeline: timeline(&record, now),
            requests,
            payment_url: open_page,
        },
    ))
}

/// Every stored field, and what the status read shows now.
fn fields(
    record: &Record,
    view: &crate::domain::transaction::View<'_>,
    state: &AppState,
) -> Vec<(&'static str, String)> {
    let f = &record.fields;
    let rare = f.rare.as_deref();
    let confirmation = record.confirmation.as_deref();
    let text = |s: &str| visible(s).into_owned();
    let opt = |s: Option<&str>| s.map_or_else(|| "—".to_owned(), |s| visible(s).into_owned());
    let time = |t: Option<DateTime<Utc>>| t.map_or_else(|| "—".to_owned(), shown_time);
    vec![
        ("transactionId", record.id.to_string()),
        ("status", view.status.as_str().to_owned()),
        ("message", opt(view.message)),
        ("merchantId", f.merchant_id.to_string()),
        ("referenceNo", text(&f.reference_no)),
        (
            "description",
            opt(rare.and_then(|r| r.description.as_deref())),
        ),
        (
            "amount",
            format!(
                "{} {} ({} minor units)",
                major_text(f.amount_minor, f.currency_exponent),
                f.currency_code,
                f.amount_minor
            ),
        ),
        ("productCode", text(&f.product_code)),
        (
            "product",
            opt(state
                .catalog
                .product(&f.product_code)
                .map(|p| p.description.as_str())),
        ),
        (
            "quantity",
            f.quantity.map_or_else(|| "—".to_owned(), |q| q.to_string()),
        ),
        ("countryCode", opt(f.country_code.as_deref())),
        ("storeId", text(&f.store_id)),
        ("deviceId", opt(rare.and_then(|r| r.device_id.as_deref()))),
        ("payerId", opt(f.payer_id.as_deref())),
        ("returnUrl", opt(rare.and_then(|r| r.return_url.as_deref()))),
        (
            "extraProperties (initiate)",
            opt(rare.and_then(|r| r.extra_properties.as_deref())),
        ),
        (
            "providerReference",
            opt(confirmation.and_then(|c| c.provider_reference.as_deref())),
        ),
        (
            "extraProperties (confirm)",
            opt(confirmation.and_then(|c| c.extra_properties.as_deref())),
        ),
        ("createdAt", shown_time(record.created_at)),
        ("confirmedAt", time(confirmation.map(|c| c.confirmed_at))),
        ("lastModifiedAt", time(view.last_modified_at)),
        (
            "expires at (unless confirmed)",
            if confirmation.is_some() {
                "—".to_owned()
            } else {
                shown_time(record.expires_at)
            },
        ),
        (
            "settles at (async products)",
            time(confirmation.and_then(|c| match c.result {
                ConfirmResult::Settling { settles_at } => Some(settles_at),
                _ => None,
            })),
        ),
        (
            "payer window ends (redirect products)",
            time(record.payment_page().map(|p| p.deadline)),
        ),
        (
            "payer's later submits (changed nothing)",
            record
                .payment_page()
                .map_or_else(|| "—".to_owned(), |p| p.later_submits.to_string()),
        ),
    ]
}

/// Created, confirmed, then what followed and when: settled, expired, the
/// payer's decision or the end of the payer window. Only what has happened
/// at `now`.
fn timeline(record: &Record, now: DateTime<Utc>) -> Vec<Event> {
    let event = |what: &str, at: DateTime<Utc>| Event {
        what: what.to_owned(),
        at: shown_time(at),
    };
    let mut events = vec![event("created", record.created_at)];
    match record.confirmation.as_deref() {
        None if now >= record.expires_at => events.push(event("expired", record.expires_at)),
        None => {}
        Some(c) => {
            events.push(event("confirmed", c.confirmed_at));
            match &c.result {
                ConfirmResult::Settling { settles_at } if now >= *settles_at => {
                    events.push(event("settled", *settles_at));
                }
                ConfirmResult::Failed { error_message } => {
                    events.push(event(&format!("failed: {error_message}"), c.confirmed_at));
                }
                ConfirmResult::AwaitingPayer(page) => match page.decision {
                    Some(d) => events.push(event(
                        &format!("decided by the payer: {}", d.action.as_str()),
                        d.at,
                    )),
                    None if now >= page.deadline => {
                        events.push(event("payer window ended", page.deadline));
                    }
                    None => {}
                },
                _ => {}
            }
        }
    }
    events
}

/// Whether a journal entry is about this transaction: it names the id (in
/// the path, a status read; in the body, a confirm), or it is an initiate
/// of the same merchant and referenceNo, or a status read by that
/// referenceNo.
fn concerns(entry: &JournalEntry, record: &Record) -> bool {
    let id = record.id.to_string();
    if entry.path.contains(&id) || entry.body.contains(&id) {
        return true;
    }
    let reference = &*record.fields.reference_no;
    match payments_interface::route(&entry.path) {
        Some(route) if route.endpoint == Endpoint::Initiate => {
            let body: serde_json::Value = serde_json::from_str(&entry.body).unwrap_or_default();
            let merchant = body["merchantId"]
                .as_str()
                .and_then(|m| Uuid::parse_str(m).ok());
            body["referenceNo"] == reference && merchant == Some(record.fields.merchant_id)
        }
        Some(route) if route.endpoint == Endpoint::StatusByReference => {
            route.decoded().is_some_and(|r| r == reference)
        }
        _ => false,
    }
}
