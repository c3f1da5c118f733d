//! Transactions in the console: the list, newest first, with filters
//! (status, merchant, part of a referenceNo), paging and live rows; and one
//! transaction in full, with its timeline and its journal entries.

use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{
    Chrome, console_error, console_page, param, query_pairs, shown_time, store_down, visible,
};
use crate::domain::money::major_text;
use crate::domain::redirect::payment_url;
use crate::domain::transaction::issued_id;
use crate::http::state::AppState;
use crate::store::journal::JournalEntry;
use crate::store::{ConfirmResult, Order, PageQuery, Record, Status, Store as _, StoreError};
use crate::web::html::render;

/// Rows per page unless `limit` says otherwise; at most [`MAX_LIMIT`].
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 500;
/// Longest referenceNo filter (a referenceNo is at most 64 characters).
const MAX_REFERENCE_FILTER: usize = 64;

/// Every status a filter can name, in the order the list offers them.
const STATUSES: [Status; 6] = [
    Status::Pending,
    Status::Initiated,
    Status::Confirmed,
    Status::Successful,
    Status::Failed,
    Status::Expired,
];

/// The list's query: what to show and from where.
#[derive(Debug, Default)]
struct Filters {
    status: Option<Status>,
    merchant: Option<Uuid>,
    reference: Option<String>,
    before: Option<Uuid>,
    limit: usize,
    /// As typed, to show them back in the form.
    typed_status: String,
    typed_merchant: String,
    typed_reference: String,
}

impl Filters {
    /// Reads the query; every problem is collected.
    fn parse(query: Option<&str>) -> (Self, Vec<String>) {
        let pairs = query_pairs(query);
        let mut problems = Vec::new();
        let mut f = Self {
            limit: DEFAULT_LIMIT,
            typed_status: param(&pairs, "status").unwrap_or_default().to_owned(),
            typed_merchant: param(&pairs, "merchant").unwrap_or_default().to_owned(),
            typed_reference: param(&pairs, "reference").unwrap_or_default().to_owned(),
            ..Self::default()
        };
        if let Some(s) = param(&pairs, "status") {
            f.status = STATUSES.into_iter().find(|st| st.as_str() == s);
            if f.status.is_none() {
                problems.push(format!(
                    "status must be one of {}",
                    STATUSES.map(Status::as_str).join(", ")
                ));
            }
        }
        if let Some(m) = param(&pairs, "merchant") {
            f.merchant = Uuid::parse_str(m).ok();
            if f.merchant.is_none() {
                problems.push("merchant must be a merchantId (a UUID)".to_owned());
            }
        }
        if let Some(r) = param(&pairs, "reference") {
            if r.chars().count() > MAX_REFERENCE_FILTER {
                problems.push(format!(
                    "reference must be at most {MAX_REFERENCE_FILTER} characters"
                ));
            } else {
                f.reference = Some(r.to_owned());
            }
        }
        if let Some(b) = param(&pairs, "before") {
            f.before = Uuid::parse_str(b).ok().filter(|id| id.to_string() == b);
            if f.before.is_none() {
                problems.push("before must be a transactionId from this list".to_owned());
            }
        }
        if let Some(l) = param(&pairs, "limit") {
            // Digits, no sign and no leading zero: the document's pattern.
            let plain = l.bytes().all(|b| b.is_ascii_digit()) && !l.starts_with('0');
            match l.parse::<usize>() {
                Ok(n) if plain && (1..=MAX_LIMIT).contains(&n) => f.limit = n,
                _ => problems.push(format!("limit must be a number from 1 to {MAX_LIMIT}")),
            }
        }
        (f, problems)
    }

    fn is_filtered(&self) -> bool {
        self.status.is_some() || self.merchant.is_some() || self.reference.is_some()
    }

    fn keeps(&self, record: &Record, now: DateTime<Utc>) -> bool {
        self.merchant.is_none_or(|m| m == record.fields.merchant_id)
            && self
                .reference
                .as_deref()
                .is_none_or(|r| record.fields.reference_no.contains(r))
            && self.status.is_none_or(|s| record.view(now).status == s)
    }

    /// The query string of these filters, paged from `before`.
    fn query(&self, before: Option<&str>) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in [
            ("status", self.typed_status.as_str()),
            ("merchant", self.typed_merchant.as_str()),
            ("reference", self.typed_reference.as_str()),
        ] {
            if !value.is_empty() {
                q.append_pair(name, value);
            }
        }
        if self.limit != DEFAULT_LIMIT {
            q.append_pair("limit", &self.limit.to_string());
        }
        if let Some(b) = before {
            q.append_pair("before", b);
        }
        q.finish()
    }
}

/// One row of the list, copied out under the store's read lock.
#[derive(Debug)]
struct Row {
    id: String,
    reference: String,
    product: String,
    amount: String,
    currency: String,
    status: &'static str,
    status_class: &'static str,
    created: String,
    merchant: String,
}

/// The CSS class of a status badge.
pub(crate) fn status_class(status: Status) -> &'static str {
    match status {
        Status::Successful => "ok",
        Status::Failed | Status::Expired => "bad",
        Status::Confirmed | Status::Pending | Status::Initiated => "wait",
    }
}

fn row(record: &Record, now: DateTime<Utc>) -> Row {
    let status = record.view(now).status;
    let f = &record.fields;
    Row {
        id: record.id.to_string(),
        reference: visible(&f.reference_no).into_owned(),
        product: f.product_code.to_string(),
        amount: major_text(f.amount_minor, f.currency_exponent),
        currency: f.currency_code.to_string(),
        status: status.as_str(),
        status_class: status_class(status),
        created: shown_time(record.created_at),
        merchant: f.merchant_id.to_string(),
    }
}

/// The list's rows alone (what the script refreshes).
#[derive(Template)]
#[template(path = "console/rows.html")]
struct Rows {
    root: String,
    rows: Vec<Row>,
    filtered: bool,
}

#[derive(Template)]
#[template(path = "console/transactions.html")]
struct ListPage<'a> {
    chrome: Chrome,
    status_options: Vec<(&'static str, bool)>,
    filters: &'a Filters,
    root: String,
    rows: Vec<Row>,
    filtered: bool,
    problems: Vec<String>,
    total: usize,
    paged: bool,
    next: Option<String>,
    live_url: Option<String>,
    poll_ms: u32,
    reset_done: bool,
}

/// The page of rows the filters ask for; `None` when `before` is unknown.
/// The merchant and the reference filter go to the store; the status (of
/// the clock's now) is checked here.
async fn page(state: &AppState, filters: &Filters) -> Result<Option<(Vec<Row>, bool)>, StoreError> {
    let now = state.store.now().await?;
    let query = PageQuery {
        order: Order::NewestFirst,
        from: filters.before,
        limit: filters.limit,
        merchant: filters.merchant,
        reference_contains: filters.reference.clone(),
    };
    Ok(state
        .store
        .page(&query, |r| filters.keeps(r, now), |r| row(r, now))
        .await?
        .map(|page| (page.items, page.more)))
}

/// `GET /_mock/ui/`: transactions, newest first.
#[utoipa::path(
    get,
    path = "/_mock/ui/",
    operation_id = "consoleTransactions",
    tag = "console"
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Response {
    let (filters, mut problems) = Filters::parse(query.as_deref());
    let paged_rows = if problems.is_empty() {
        match page(&state, &filters).await {
            Ok(rows) => Some(rows),
            Err(e) => return store_down(&state, &e, uri.path()),
        }
    } else {
        None
    };
    let total = match state.store.count().await {
        Ok(total) => total,
        Err(e) => return store_down(&state, &e, uri.path()),
    };
    let chrome = Chrome::new(&state, uri.path(), "transactions");
    let reset_done = query_pairs(query.as_deref())
        .iter()
        .any(|(k, v)| k == "reset" && v == "done");
    let mut status = if problems.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    let (rows, more) = match paged_rows {
        Some(Some(rows)) => rows,
        Some(None) => {
            // A well-formed id that is not stored: nothing to page from.
            status = StatusCode::NOT_FOUND;
            problems.push(
                "before names no stored transaction (was the mock reset?): start from the newest"
                    .to_owned(),
            );
            (Vec::new(), false)
        }
        None => (Vec::new(), false),
    };
    let next = rows
        .last()
        .filter(|_| more)
        .map(|last| format!("?{}", filters.query(Some(&last.id))));
    let paged = filters.before.is_some();
    let live_url = (!paged && problems.is_empty()).then(|| {
        format!(
            "{}_mock/ui/transactions/rows?{}",
            chrome.root,
            filters.query(None)
        )
    });
    let root = chrome.root.clone();
    let status_options = STATUSES
        .iter()
        .map(|s| (s.as_str(), filters.status == Some(*s)))
        .collect();
    console_page(render(
        status,
        &ListPage {
            chrome,
            status_options,
            filters: &filters,
            root,
            rows,
            filtered: filters.is_filtered(),
            problems,
            total,
            paged,
            next,
            live_url,
            poll_ms: super::POLL_MS,
            reset_done,
        },
    ))
}

/// `GET /_mock/ui/transactions/rows`: the first page's rows alone, for the
/// list's script to refresh in place.
#[utoipa::path(
    get,
    path = "/_mock/ui/transactions/rows",
    operation_id = "consoleTransactionRows",
    tag = "console"
)]
pub(crate) async fn rows(
    State(state): State<AppState>,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Response {
    let (filters, mut problems) = Filters::parse(query.as_deref());
    let path = uri.path();
    if filters.before.is_some() {
        problems
            .push("before is not taken here: the live rows are always the first page".to_owned());
    }
    if !problems.is_empty() {
        return console_error(
            &state,
            StatusCode::BAD_REQUEST,
            "Bad filter",
            &problems.join("; "),
            path,
        );
    }
    let rows = match page(&state, &filters).await {
        Ok(rows) => rows.map(|(rows, _)| rows).unwrap_or_default(),
        Err(e) => return store_down(&state, &e, path),
    };
    console_page(render(
        StatusCode::OK,
        &Rows {
            root: crate::web::html::fragment_root_of(path),
            rows,
            filtered: filters.is_filtered(),
        },
    ))
}

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
    path: String,
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
#[utoipa::path(
    get,
    path = "/_mock/ui/transactions/{transactionId}",
    operation_id = "consoleTransaction",
    tag = "console"
)]
pub(crate) async fn detail(State(state): State<AppState>, uri: Uri) -> Response {
    let path = uri.path();
    let id = path
        .strip_prefix("/_mock/ui/transactions/")
        .unwrap_or_default();
    let found = match issued_id(id) {
        Some(issued) => state.store.with_id(issued, None, Record::clone).await,
        None => Ok(None),
    };
    let now = state.store.now().await;
    let entries = state
        .store
        .requests_since(0, crate::store::journal::CAPACITY)
        .await;
    let (found, now, entries) = match (found, now, entries) {
        (Ok(found), Ok(now), Ok(entries)) => (found, now, entries),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return store_down(&state, &e, path),
    };
    let Some(record) = found else {
        return console_error(
            &state,
            StatusCode::NOT_FOUND,
            "No such transaction",
            "No stored transaction has this transactionId (ids are kept until a reset).",
            path,
        );
    };
    let view = record.view(now);
    let page = record.payment_page();
    let open_page = page
        .filter(|p| p.is_open(now))
        .map(|p| payment_url(&state.public_url, &p.token));
    let requests = entries
        .into_iter()
        .rev()
        .filter(|e| concerns(e, &record))
        .map(|e| Request {
            seq: e.seq,
            at: shown_time(e.at),
            method: e.method,
            path: visible(&format!(
                "{}{}",
                e.path,
                e.query.map(|q| format!("?{q}")).unwrap_or_default()
            ))
            .into_owned(),
            status: e
                .status
                .map_or_else(|| "reset".to_owned(), |s| s.to_string()),
            error_code: e.error_code.unwrap_or_default(),
        })
        .collect();
    console_page(render(
        StatusCode::OK,
        &DetailPage {
            chrome: Chrome::new(&state, path, "transactions"),
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
    if entry.path == "/api/payments/initiate" {
        let body: serde_json::Value = serde_json::from_str(&entry.body).unwrap_or_default();
        let merchant = body["merchantId"]
            .as_str()
            .and_then(|m| Uuid::parse_str(m).ok());
        return body["referenceNo"] == reference && merchant == Some(record.fields.merchant_id);
    }
    entry
        .path
        .strip_prefix("/api/payments/reference/")
        .and_then(|rest| rest.strip_suffix("/status"))
        .and_then(crate::http::extract::decode_segment)
        .is_some_and(|r| r == reference)
}
