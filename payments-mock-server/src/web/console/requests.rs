//! The request journal in the console: the newest `/api/` requests,
//! growing by itself (the script polls the feed for what came after the
//! newest row it has and keeps a bounded number of rows), and one request
//! in full.

use askama::Template;
use axum::extract::RawQuery;
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::Response;

use super::target::Shown;
use super::{Chrome, console_page, param, query_pairs, shown_time, store_down, visible};
use crate::domain::access::Viewer;
use crate::domain::journal::{CAPACITY, JournalEntry};
use crate::domain::port::{JournalStats, Store as _, StoreError};
use crate::state::{AppState, Here};
use crate::web::html::render;

/// Rows the list starts with, and the most one poll adds: under a burst
/// the page catches up over the next polls, a page at a time.
const PAGE_ROWS: usize = 50;
/// Rows the page keeps at most (the script drops the oldest beyond it).
pub(crate) const MAX_ROWS: usize = 200;
/// The header the feed names its newest `seq` in.
const SEQ_HEADER: &str = "x-journal-seq";
/// The header the feed names the request id of the entry numbered in
/// [`SEQ_HEADER`] in, when it knows it (the script sends it back as `id`).
const ID_HEADER: &str = "x-journal-request-id";

/// A request id as the page sends it back to the feed (`id`): plain
/// visible ASCII, which a header carries and a script reads back as
/// sent; `None` for another (the feed then goes by `after` alone).
fn sent_back(id: &str) -> Option<&str> {
    let plain = !id.is_empty() && id.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
    plain.then_some(id)
}

/// One row of the list.
#[derive(Debug)]
struct Row {
    seq: u64,
    at: String,
    method: String,
    /// The path and query decoded for reading ([`Shown`]).
    target: String,
    /// The path and query as sent, when it reads otherwise; else empty.
    sent: String,
    status: String,
    status_class: &'static str,
    error_code: String,
    fault: String,
    request_id: String,
    /// The request id as recorded (the feed's `id` compares it).
    id: String,
    replica: String,
    /// The caller's trace and span id (`traceparent`), empty without.
    trace_id: String,
    span_id: String,
}

fn row(entry: JournalEntry) -> Row {
    let trace = payments_serve::trace::TraceParent::from_pairs(
        entry.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    );
    let target = match &entry.query {
        Some(q) => format!("{}?{q}", entry.path),
        None => entry.path.clone(),
    };
    let target = Shown::of(&target);
    Row {
        seq: entry.seq,
        at: shown_time(entry.at),
        method: entry.method,
        target: target.read,
        sent: target.sent,
        status: entry
            .status
            .map_or_else(|| "reset".to_owned(), |s| s.to_string()),
        status_class: match entry.status {
            Some(200..=299) => "ok",
            Some(400..=499) => "wait",
            _ => "bad",
        },
        error_code: entry.error_code.unwrap_or_default(),
        fault: entry.fault.unwrap_or_default(),
        request_id: visible(&entry.request_id).into_owned(),
        id: entry.request_id,
        replica: visible(&entry.replica).into_owned(),
        trace_id: trace.map(|t| t.trace_id()).unwrap_or_default(),
        span_id: trace.map(|t| t.span_id()).unwrap_or_default(),
    }
}

/// Rows alone (what the feed answers).
#[derive(Template)]
#[template(path = "console/request_rows.html")]
struct Rows {
    root: String,
    rows: Vec<Row>,
    /// Say "no request yet" when there are none (the page; not the feed).
    placeholder: bool,
    /// Below the rows: what the journal no longer keeps between them and
    /// the rows the page had (the feed; empty when nothing was lost).
    gap: String,
}

#[derive(Template)]
#[template(path = "console/requests.html")]
struct ListPage {
    chrome: Chrome,
    root: String,
    rows: Vec<Row>,
    placeholder: bool,
    /// Always empty: the page starts with the newest rows.
    gap: String,
    after: u64,
    /// The request id of the row numbered `after`, if one is shown (and
    /// [`sent_back`] can carry it); else empty.
    after_id: String,
    kept: Option<usize>,
    poll_ms: u32,
    max_rows: usize,
}

/// Newest first, at most `limit`, after `after`; of a merchant's key,
/// that merchant's only (looked for among the whole journal's).
async fn newest(
    state: &AppState,
    scope: Option<uuid::Uuid>,
    after: u64,
    limit: usize,
) -> Result<Vec<Row>, StoreError> {
    let read = if scope.is_some() { CAPACITY } else { limit };
    let entries = state.store.requests_since(after, read).await?;
    Ok(state
        .visible_requests(scope, entries)
        .await?
        .into_iter()
        .rev()
        .take(limit)
        .map(row)
        .collect())
}

/// `GET /_mock/ui/requests`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/requests",
        operation_id = "consoleRequests",
        tag = "console"
    )
)]
pub(crate) async fn list(Here(state): Here, viewer: Viewer, uri: Uri) -> Response {
    // The script asks for what came after the newest row shown; with no
    // row, after the newest seq read before the rows were (so a request
    // recorded in between is neither missed nor shown twice), and on a
    // merchant's key after 0.
    let stats = match state.store.journal_stats().await {
        Ok(stats) => stats,
        Err(e) => return store_down(&state, viewer, &e, uri.path()),
    };
    let last = stats.last_seq;
    let scope = viewer.role.scope();
    let rows = match newest(&state, scope, 0, PAGE_ROWS).await {
        Ok(rows) => rows,
        Err(e) => return store_down(&state, viewer, &e, uri.path()),
    };
    let chrome = Chrome::new(&state, uri.path(), "requests").seen_by(viewer);
    let root = chrome.root.clone();
    // A merchant's page with no row starts from the beginning: the
    // journal's newest number would count other merchants' requests.
    let after = rows
        .first()
        .map_or(if scope.is_some() { 0 } else { last }, |r| r.seq);
    let after_id = rows
        .first()
        .and_then(|r| sent_back(&r.id))
        .unwrap_or_default()
        .to_owned();
    console_page(render(
        StatusCode::OK,
        &ListPage {
            chrome,
            root,
            rows,
            placeholder: true,
            gap: String::new(),
            after,
            after_id,
            // A merchant's key is not told how many requests others made.
            kept: scope.is_none().then_some(stats.len),
            poll_ms: super::POLL_MS,
            max_rows: MAX_ROWS,
        },
    ))
}

/// A feed's answer: rows, the position to ask after next, and what
/// was lost in between.
struct FeedPage {
    /// Newest first: the oldest page of those after the position asked.
    rows: Vec<Row>,
    /// The `seq` the next poll asks after: the newest row's when more
    /// are waiting, else the journal's newest (nothing to miss up to it);
    /// on a merchant's key, that merchant's newest row's (or the position
    /// asked, with none).
    next: u64,
    /// The request id of the entry numbered `next`, when the page shows it
    /// (the newest row, or the row it asked after).
    next_id: Option<String>,
    /// Said below the rows when entries after the position asked were
    /// dropped from the journal before they were read; else empty.
    gap: String,
}

/// Said below the rows when the page asked after a `seq` the journal
/// never reached, or after a row the journal numbers another request: the
/// server restarted (a memory store starts empty) or its store is a new
/// one, and the rows are the new journal's from its oldest.
const RESTARTED: &str = "The journal started again (the server restarted, or its store is a new one): the rows above this line are the new journal's, those below it are from before.";

/// Where a page stands: the `seq` of the newest row it has, and that row's
/// request id when it sent it.
#[derive(Debug, Clone, Copy)]
struct Position<'a> {
    after: u64,
    id: Option<&'a str>,
}

/// Whether the journal started again since the page's position: it never
/// reached it (`stats`, read before the rows), or the entry numbered there
/// is kept and is another request than the row the page shows (a new
/// journal that already numbers past it).
async fn started_again(
    state: &AppState,
    at: Position<'_>,
    stats: JournalStats,
) -> Result<bool, StoreError> {
    if at.after > stats.last_seq {
        return Ok(true);
    }
    let Some(id) = at.id.filter(|_| at.after > 0) else {
        return Ok(false);
    };
    let there = state.store.request(at.after).await?;
    Ok(there.is_some_and(|entry| entry.request_id != id))
}

/// The oldest `limit` rows after the page's position (of a merchant's key,
/// that merchant's only), so a page that polls sees every request in turn
/// however many came at once; `stats` is the journal in brief, read before
/// the rows (an entry recorded in between is numbered above its newest).
/// When the journal started again ([`started_again`]), the rows are its
/// oldest, and the next position its newest.
async fn oldest_after(
    state: &AppState,
    scope: Option<uuid::Uuid>,
    at: Position<'_>,
    stats: JournalStats,
    limit: usize,
) -> Result<FeedPage, StoreError> {
    let restarted = started_again(state, at, stats).await?;
    let after = if restarted { 0 } else { at.after };
    let (entries, lost) = match scope {
        // The oldest page, and one more to tell whether more are waiting.
        // When the journal is full and all of it is above `after` (its
        // oldest is), what came between `after` and its oldest entry was
        // dropped unread.
        None => {
            let entries = state.store.requests_after(after, limit + 1).await?;
            let lost = match entries.first() {
                Some(oldest) if stats.len >= CAPACITY && stats.oldest_seq > after => {
                    oldest.seq.saturating_sub(after + 1)
                }
                _ => 0,
            };
            (entries, lost)
        }
        // A merchant's rows are looked for among all the journal keeps
        // after `after`. A merchant's key is not told of others'
        // requests: the journal cannot tell whose the dropped entries
        // were, so a merchant's page never marks a hole (its own rows may
        // be among them).
        Some(_) => (state.store.requests_since(after, CAPACITY).await?, 0),
    };
    let newest_read = entries.last().map_or(0, |e| e.seq);
    let gap = match lost {
        _ if restarted => RESTARTED.to_owned(),
        0 => String::new(),
        1 => "1 request here is no longer kept: the journal keeps the last 1,000, and more came before this page asked for them.".to_owned(),
        n => format!("{n} requests here are no longer kept: the journal keeps the last 1,000, and more came before this page asked for them."),
    };
    let mut visible = state.visible_requests(scope, entries).await?;
    let next = if visible.len() > limit {
        visible.truncate(limit);
        visible.last().map_or(after, |e| e.seq)
    } else if scope.is_some() {
        // A merchant's page moves on to its own newest row only: the
        // journal's newest number would count other merchants' requests
        // for it. Every row it may see after `after` was read above, so
        // asking after its newest again misses none of them.
        visible.last().map_or(after, |e| e.seq)
    } else {
        stats.last_seq.max(after).max(newest_read)
    };
    let next_id = match visible.last() {
        Some(newest) if newest.seq == next => sent_back(&newest.request_id).map(str::to_owned),
        None if next == at.after && !restarted => at.id.map(str::to_owned),
        _ => None,
    };
    Ok(FeedPage {
        rows: visible.into_iter().rev().map(row).collect(),
        next,
        next_id,
        gap,
    })
}

/// `GET /_mock/ui/requests/feed?after=N&id=ID`: the oldest page of rows
/// recorded after `N`, newest first; in the `X-Journal-Seq` header the
/// `seq` to ask after next (the newest row's while more are waiting), in
/// `X-Journal-Request-Id` that entry's request id when the page shows it
/// (sent back as `id`), and below the rows a line when the journal
/// dropped some of them unread (not to a merchant's key), or when it
/// started again: `N` is above its newest, or its entry `N` is kept and
/// is not the request `ID` (its rows from the oldest).
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/requests/feed",
        operation_id = "consoleRequestFeed",
        tag = "console"
    )
)]
pub(crate) async fn feed(
    Here(state): Here,
    viewer: Viewer,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Response {
    let path = uri.path();
    let pairs = query_pairs(query.as_deref());
    // Digits without a leading zero (the document's pattern), up to u64.
    let strict = |t: &str| {
        let plain = t.bytes().all(|b| b.is_ascii_digit()) && (t == "0" || !t.starts_with('0'));
        plain.then(|| t.parse::<u64>().ok()).flatten()
    };
    let after = match param(&pairs, "after").map(strict) {
        None => 0,
        Some(Some(n)) => n,
        Some(None) => {
            return super::viewed_error(
                &state,
                Some(viewer),
                StatusCode::BAD_REQUEST,
                "Bad feed position",
                "after must be a whole number: the seq of the newest row shown",
                path,
            );
        }
    };
    let stats = match state.store.journal_stats().await {
        Ok(stats) => stats,
        Err(e) => return store_down(&state, viewer, &e, path),
    };
    let id = param(&pairs, "id").filter(|id| !id.is_empty());
    let at = Position { after, id };
    let page = match oldest_after(&state, viewer.role.scope(), at, stats, PAGE_ROWS).await {
        Ok(page) => page,
        Err(e) => return store_down(&state, viewer, &e, path),
    };
    let mut response = console_page(render(
        StatusCode::OK,
        &Rows {
            root: crate::web::html::fragment_root_of(path),
            rows: page.rows,
            placeholder: false,
            gap: page.gap,
        },
    ));
    let headers = response.headers_mut();
    headers.insert(SEQ_HEADER, HeaderValue::from(page.next));
    if let Some(id) = page.next_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
        headers.insert(ID_HEADER, id);
    }
    response
}

#[derive(Template)]
#[template(path = "console/request.html")]
struct DetailPage {
    chrome: Chrome,
    row: Row,
    headers: Vec<(String, String)>,
    body: String,
    /// When the journal kept only the body's first bytes: what it kept
    /// and the whole length, said above the body; empty when whole.
    body_cut: String,
}

/// What the request page says of a body the journal cut (its newest
/// bodies are kept whole up to 512 KiB in all, an older one keeps its
/// first KiB): `None` when whole.
fn body_cut(entry: &JournalEntry) -> Option<String> {
    let whole = entry.body_length?;
    Some(format!(
        "Cut: only the first {} of {} bytes is kept (the journal keeps its newest bodies whole, up to 512 KiB in all, and only the first KiB of an older one).",
        bytes(entry.body.len()),
        grouped(whole),
    ))
}

/// What the request page says, as its last header, of headers the
/// journal cut (`whole`: the bytes of their names and values).
fn headers_cut(whole: usize) -> String {
    format!(
        "Cut: the headers took {} bytes; the journal keeps each value up to 1 KiB ({} ends one it cut) and 8 KiB of them in all, leaving out those past it.",
        grouped(whole),
        crate::store::journal::headers::CUT_MARK,
    )
}

/// `n` bytes in words: "1 KiB" for exactly 1,024, else "N bytes".
fn bytes(n: usize) -> String {
    if n == 1024 {
        "1 KiB".to_owned()
    } else {
        format!("{} bytes", grouped(n))
    }
}

/// `n` with its thousands grouped by commas: 65536 → "65,536".
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// `GET /_mock/ui/requests/{seq}`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/requests/{seq}",
        operation_id = "consoleRequest",
        tag = "console"
    )
)]
pub(crate) async fn detail(Here(state): Here, viewer: Viewer, uri: Uri) -> Response {
    let path = uri.path();
    let seq = path
        .strip_prefix("/_mock/ui/requests/")
        .filter(|s| s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0'))
        .and_then(|s| s.parse::<u64>().ok());
    let found = match seq {
        Some(seq) => match state.store.request(seq).await {
            // A merchant's key finds its merchant's requests only.
            Ok(Some(entry)) => state.may_see_request(viewer.role.scope(), entry).await,
            other => other,
        },
        None => Ok(None),
    };
    let found = match found {
        Ok(found) => found,
        Err(e) => return store_down(&state, viewer, &e, path),
    };
    let Some(entry) = found else {
        return super::viewed_error(
            &state,
            Some(viewer),
            StatusCode::NOT_FOUND,
            "No such request",
            "The journal keeps the last 1,000 /api/ requests; this one is not among them.",
            path,
        );
    };
    let (kept, cut) = crate::store::journal::headers::split_cut(entry.headers.clone());
    let mut headers: Vec<(String, String)> = kept
        .iter()
        .map(|(k, v)| (visible(k).into_owned(), visible(v).into_owned()))
        .collect();
    if let Some(whole) = cut {
        headers.push((
            crate::domain::journal::HEADERS_CUT.to_owned(),
            headers_cut(whole),
        ));
    }
    console_page(render(
        StatusCode::OK,
        &DetailPage {
            chrome: Chrome::new(&state, path, "requests").seen_by(viewer),
            headers,
            // As sent: an indented copy would reorder the keys.
            body: visible(&entry.body).into_owned(),
            body_cut: body_cut(&entry).unwrap_or_default(),
            row: row(entry),
        },
    ))
}

#[cfg(test)]
mod merchant_tests;
#[cfg(test)]
mod tests;
