//! Transactions in the console: the list, newest first, with filters
//! (status, merchant, part of a referenceNo), paging and live rows. One
//! transaction in full is `transaction.rs`.

use askama::Template;
use axum::extract::RawQuery;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{
    Chrome, console_page, param, query_pairs, shown_time, store_down, viewed_error, visible,
};
use crate::domain::access::Viewer;
use crate::domain::port::{Order, PageQuery, Store as _, StoreError};
use crate::domain::transaction::{Record, Status};
use crate::state::{AppState, Here};
use crate::web::html::render;
use payments_interface::money::major_text;

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
    /// Which of the form's fields hold what was refused (said with
    /// aria-invalid, the first one focused).
    bad_status: bool,
    bad_merchant: bool,
    bad_reference: bool,
}

impl Filters {
    /// The reference filter as the form shows it: control and bidi
    /// characters as visible symbols, as everywhere on the console (the
    /// page's links keep it as typed).
    fn shown_reference(&self) -> std::borrow::Cow<'_, str> {
        visible(&self.typed_reference)
    }

    /// The merchant filter as the form shows it.
    fn shown_merchant(&self) -> std::borrow::Cow<'_, str> {
        visible(&self.typed_merchant)
    }

    /// The id-less name of the first field refused ("status",
    /// "merchant", "reference") among those on the page, or empty when
    /// none is (a refused `before` or `limit` has no field, nor has a
    /// refused `merchant` on a merchant's page, `scoped`: the summary
    /// takes the focus).
    fn first_bad(&self, scoped: bool) -> &'static str {
        [
            (self.bad_status, "status"),
            (self.bad_merchant && !scoped, "merchant"),
            (self.bad_reference, "reference"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
        .unwrap_or_default()
    }

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
                f.bad_status = true;
                problems.push(format!(
                    "status must be one of {}",
                    STATUSES.map(Status::as_str).join(", ")
                ));
            }
        }
        if let Some(m) = param(&pairs, "merchant") {
            f.merchant = Uuid::parse_str(m).ok();
            if f.merchant.is_none() {
                f.bad_merchant = true;
                problems.push("merchant must be a merchantId (a UUID)".to_owned());
            }
        }
        if let Some(r) = param(&pairs, "reference") {
            if r.chars().count() > MAX_REFERENCE_FILTER {
                f.bad_reference = true;
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
        let mut q = form_urlencoded::Serializer::new(String::new());
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
    /// The filters were refused: no rows were read (never on the live
    /// rows, which answer a refused filter with an error page).
    refused: bool,
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
    /// As [`Rows::refused`].
    refused: bool,
    problems: Vec<String>,
    /// How many are stored in all; not shown to a merchant's key.
    total: Option<usize>,
    /// The merchant a merchant's key is held to (no merchant filter then).
    scoped: bool,
    paged: bool,
    next: Option<String>,
    live_url: Option<String>,
    poll_ms: u32,
    reset_done: bool,
}

/// The page of rows the filters ask for; `None` when `before` is unknown
/// (or, for a merchant's key, another merchant's). The merchant and the
/// reference filter go to the store; the status (of the clock's now) is
/// checked here. `scope`: a merchant's key sees that merchant's only.
async fn page(
    state: &AppState,
    filters: &Filters,
    scope: Option<Uuid>,
) -> Result<Option<(Vec<Row>, bool)>, StoreError> {
    if let (Some(own), Some(before)) = (scope, filters.before)
        && state
            .store
            .with_id(before, Some(own), |_| ())
            .await?
            .is_none()
    {
        return Ok(None);
    }
    let now = state.store.now().await?;
    let query = PageQuery {
        order: Order::NewestFirst,
        from: filters.before,
        limit: filters.limit,
        merchant: scope.or(filters.merchant),
        reference_contains: filters.reference.clone(),
    };
    let keep =
        |r: &Record| scope.is_none_or(|own| own == r.fields.merchant_id) && filters.keeps(r, now);
    Ok(state
        .store
        // The tester's look: no coverage (the application met nothing
        // of it).
        .page(&query, keep, |r| row(r, now))
        .await?
        .map(|page| (page.items, page.more)))
}

/// `GET /_mock/ui/`: transactions, newest first.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/",
        operation_id = "consoleTransactions",
        tag = "console"
    )
)]
pub(crate) async fn list(
    Here(state): Here,
    viewer: Viewer,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Response {
    let scope = viewer.role.scope();
    let (filters, mut problems) = Filters::parse(query.as_deref());
    let paged_rows = if problems.is_empty() {
        match page(&state, &filters, scope).await {
            Ok(rows) => Some(rows),
            Err(e) => return store_down(&state, viewer, &e, uri.path()),
        }
    } else {
        None
    };
    let total = match scope {
        Some(_) => None,
        None => match state.store.count().await {
            Ok(total) => Some(total),
            Err(e) => return store_down(&state, viewer, &e, uri.path()),
        },
    };
    let chrome = Chrome::new(&state, uri.path(), "transactions").seen_by(viewer);
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
            refused: !problems.is_empty(),
            problems,
            total,
            scoped: scope.is_some(),
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
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/transactions/rows",
        operation_id = "consoleTransactionRows",
        tag = "console"
    )
)]
pub(crate) async fn rows(
    Here(state): Here,
    viewer: Viewer,
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
        return viewed_error(
            &state,
            Some(viewer),
            StatusCode::BAD_REQUEST,
            "Bad filter",
            &problems.join("; "),
            path,
        );
    }
    let rows = match page(&state, &filters, viewer.role.scope()).await {
        Ok(rows) => rows.map(|(rows, _)| rows).unwrap_or_default(),
        Err(e) => return store_down(&state, viewer, &e, path),
    };
    console_page(render(
        StatusCode::OK,
        &Rows {
            root: crate::web::html::fragment_root_of(path),
            rows,
            filtered: filters.is_filtered(),
            refused: false,
        },
    ))
}
