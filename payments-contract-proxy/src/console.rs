//! The proxy's web console (CONTRACT section 16): the exchanges that
//! passed through, newest first, each with its verdict and its findings (a
//! badge per level), growing by itself; one exchange in full, its secrets
//! replaced as in a recording, at `/_proxy/ui/`; the interface coverage
//! (CONTRACT section 20) at `/_proxy/ui/coverage`. The consoles'
//! stylesheet and script (`payments_serve::pages`), served from the
//! binary.

use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use payments_serve::pages::console_page as page;
use payments_serve::pages::{
    CONSOLE_SCRIPT as SCRIPT, CONSOLE_STYLESHEET as STYLESHEET, POLL_MS, fragment_root_of, render,
    root_of, shown_time, static_asset as asset, visible,
};

use super::access::SignedIn;
use super::coverage;
use super::rules::{Level, Verdict};
use crate::state::{Judged, ProxyState};

/// Rows the page keeps at most.
const MAX_ROWS: usize = 200;
/// Rows the page starts with, and the most one poll adds.
const PAGE_ROWS: usize = 50;

#[derive(Debug)]
struct FindingRow {
    rule: &'static str,
    level: &'static str,
    class: &'static str,
    message: String,
}

#[derive(Debug)]
struct Row {
    /// The feed's position (see `Judged::row`), not shown.
    row: u64,
    seq: u64,
    time: String,
    method: String,
    path: String,
    status: u16,
    verdict: &'static str,
    verdict_class: &'static str,
    findings: Vec<FindingRow>,
}

fn verdict_class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "ok",
        Verdict::Violation => "bad",
        Verdict::Undocumented | Verdict::Unchecked => "wait",
    }
}

fn level_class(level: Level) -> &'static str {
    match level {
        Level::Violation => "bad",
        Level::Undocumented => "wait",
        Level::Client => "ok",
    }
}

fn row(judged: &Judged) -> Row {
    let e = &judged.exchange;
    let target = match &e.request.query {
        Some(q) => format!("{}?{q}", e.request.path),
        None => e.request.path.clone(),
    };
    Row {
        row: judged.row,
        seq: e.seq,
        time: shown_time(e.time),
        method: visible(&e.request.method).into_owned(),
        path: visible(&target).into_owned(),
        status: e.response.status,
        verdict: judged.verdict.as_str(),
        verdict_class: verdict_class(judged.verdict),
        findings: judged
            .findings
            .iter()
            .map(|f| FindingRow {
                rule: f.rule,
                level: f.level.as_str(),
                class: level_class(f.level),
                message: visible(&f.message).into_owned(),
            })
            .collect(),
    }
}

/// The newest judged exchanges, newest first, and the feed position of
/// the newest kept (the page asks after it next).
fn newest(proxy: &ProxyState, limit: usize) -> (Vec<Row>, u64) {
    let judge = proxy.lock();
    let last = judge.recent.back().map_or(0, |j| j.row);
    (
        judge.recent.iter().rev().take(limit).map(row).collect(),
        last,
    )
}

/// What a feed answers from the kept items (oldest first, positions
/// 1, 2, 3… as they were judged): the oldest `limit` after `after`, the
/// position to ask after next (the newest returned while more wait, else
/// the newest kept), and how many after `after` were dropped unread.
///
/// Exchanges end out of `seq` order (a slow one is judged after a quick
/// later one), so the feed pages by the order they were judged in: a
/// slow exchange is never skipped by a browser that has seen a later one;
/// and by the oldest first, so a burst is shown whole over the next polls.
fn page_after<T>(
    kept: impl Iterator<Item = T>,
    position: impl Fn(&T) -> u64,
    after: u64,
    limit: usize,
) -> (Vec<T>, u64, u64) {
    let mut newer = kept.filter(|t| position(t) > after).peekable();
    let lost = newer
        .peek()
        .map_or(0, |oldest| position(oldest).saturating_sub(after + 1));
    let mut page: Vec<T> = Vec::with_capacity(limit);
    let mut next = after;
    for item in newer {
        next = next.max(position(&item));
        if page.len() < limit {
            page.push(item);
        }
    }
    if let Some(newest) = page.last().filter(|_| page.len() == limit) {
        next = position(newest);
    }
    (page, next, lost)
}

/// Said below the rows when the page asked after a position the console
/// never reached: the proxy restarted (its console starts empty).
const RESTARTED: &str = "The console started again (the proxy restarted): the rows above this line are the new console's, those below it are from before.";

/// The feed's answer from the kept items: [`page_after`], and the line
/// said below the rows. `newest` is the position of the last item the
/// console kept: a position `after` above it is one this console never
/// reached (the proxy restarted), answered from the oldest kept.
fn answer_after<T>(
    kept: impl Iterator<Item = T>,
    position: impl Fn(&T) -> u64,
    newest: u64,
    after: u64,
    limit: usize,
) -> (Vec<T>, u64, String) {
    if after > newest {
        let (page, next, _) = page_after(kept, position, 0, limit);
        return (page, next, RESTARTED.to_owned());
    }
    let (page, next, lost) = page_after(kept, position, after, limit);
    (page, next, gap_line(lost))
}

/// The line said below the rows where exchanges were dropped unread.
fn gap_line(lost: u64) -> String {
    match lost {
        0 => String::new(),
        1 => "1 exchange here is no longer kept: the console keeps the last 500, and more came before this page asked for them.".to_owned(),
        n => format!("{n} exchanges here are no longer kept: the console keeps the last 500, and more came before this page asked for them."),
    }
}

#[derive(Template)]
#[template(path = "exchange_rows.html")]
struct Rows {
    root: String,
    rows: Vec<Row>,
    placeholder: bool,
    /// Below the rows: the exchanges dropped unread (empty when none).
    gap: String,
}

#[derive(Template)]
#[template(path = "exchanges.html")]
struct ListPage {
    root: String,
    upstream: String,
    enforce: bool,
    signed_in: bool,
    rows: Vec<Row>,
    placeholder: bool,
    /// Always empty: the page starts with the newest rows.
    gap: String,
    after: u64,
    total: u64,
    violations: u64,
    undocumented: u64,
    client: u64,
    poll_ms: u32,
    max_rows: usize,
}

/// `GET /_proxy/ui/`: the exchanges.
async fn list(
    State(proxy): State<ProxyState>,
    SignedIn(signed_in): SignedIn,
    uri: Uri,
) -> Response {
    let summary = proxy.summary();
    let (rows, last) = newest(&proxy, PAGE_ROWS);
    let after = rows.first().map_or(last, |r| r.row);
    page(render(
        StatusCode::OK,
        &ListPage {
            root: root_of(uri.path()),
            upstream: proxy.config.shown_upstream(),
            enforce: proxy.config.enforce,
            signed_in,
            rows,
            placeholder: true,
            gap: String::new(),
            after,
            total: summary.exchanges,
            violations: summary.count(Level::Violation),
            undocumented: summary.count(Level::Undocumented),
            client: summary.count(Level::Client),
            poll_ms: POLL_MS,
            max_rows: MAX_ROWS,
        },
    ))
}

/// `GET /_proxy/ui/exchanges/feed?after=N`: the oldest page of rows
/// after `N`, newest first, and in `X-Journal-Seq` the position to ask
/// after next; an `N` above the newest kept position (the proxy
/// restarted) is answered from the oldest, with a line saying so.
async fn feed(State(proxy): State<ProxyState>, uri: Uri, RawQuery(query): RawQuery) -> Response {
    let after = query
        .as_deref()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "after")
                .map(|(_, v)| v.into_owned())
        })
        .unwrap_or_default();
    let after = match after.as_deref().map(str::parse::<u64>) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            return payments_serve::ApiError::validation("after must be a whole number")
                .into_response();
        }
    };
    let (rows, next, gap) = {
        let judge = proxy.lock();
        let (page, next, gap) =
            answer_after(judge.recent.iter(), |j| j.row, judge.rows, after, PAGE_ROWS);
        (page.into_iter().rev().map(row).collect(), next, gap)
    };
    let mut response = page(render(
        StatusCode::OK,
        &Rows {
            root: fragment_root_of(uri.path()),
            rows,
            placeholder: false,
            gap,
        },
    ));
    response
        .headers_mut()
        .insert("x-journal-seq", HeaderValue::from(next));
    response
}

#[derive(Debug)]
struct Side {
    title: &'static str,
    headers: Vec<(String, String)>,
    body: String,
}

#[derive(Template)]
#[template(path = "exchange.html")]
struct DetailPage {
    root: String,
    upstream: String,
    enforce: bool,
    signed_in: bool,
    row: Row,
    duration: String,
    /// The caller's trace and span id (`traceparent`), empty without.
    trace_id: String,
    span_id: String,
    sides: Vec<Side>,
}

#[derive(Template)]
#[template(
    source = r#"{% extends "base.html" %}{% block title %}Not found{% endblock %}{% block content %}<h1>No such exchange</h1><p>The console keeps the last 500 exchanges; this one is not among them.</p><p><a href="{{ root }}_proxy/ui/">Back to the exchanges</a></p>{% endblock %}"#,
    ext = "html"
)]
struct NotFound {
    root: String,
    upstream: String,
    enforce: bool,
    signed_in: bool,
}

#[derive(Template)]
#[template(
    source = r#"{% extends "base.html" %}{% block title %}Not found{% endblock %}{% block content %}<h1>No such page</h1><p>The console has no page at this address.</p><p><a href="{{ root }}_proxy/ui/">Back to the exchanges</a></p>{% endblock %}"#,
    ext = "html"
)]
struct NoSuchPage {
    root: String,
    upstream: String,
    enforce: bool,
    signed_in: bool,
}

/// Any other address under `/_proxy/ui/`: a page saying so (404), as a
/// browser shows it, with the way back; never the JSON envelope.
async fn no_such_page(
    State(proxy): State<ProxyState>,
    SignedIn(signed_in): SignedIn,
    uri: Uri,
) -> Response {
    page(render(
        StatusCode::NOT_FOUND,
        &NoSuchPage {
            root: root_of(uri.path()),
            upstream: proxy.config.shown_upstream(),
            enforce: proxy.config.enforce,
            signed_in,
        },
    ))
}

/// `GET /_proxy/ui/exchanges/{seq}`: one exchange in full.
async fn detail(
    State(proxy): State<ProxyState>,
    SignedIn(signed_in): SignedIn,
    uri: Uri,
) -> Response {
    let path = uri.path();
    let root = root_of(path);
    let seq = path
        .strip_prefix("/_proxy/ui/exchanges/")
        .and_then(|s| s.parse::<u64>().ok());
    let found = seq.and_then(|seq| {
        proxy
            .lock()
            .recent
            .iter()
            .find(|j| j.exchange.seq == seq)
            .cloned()
    });
    let Some(judged) = found else {
        return page(render(
            StatusCode::NOT_FOUND,
            &NotFound {
                root,
                upstream: proxy.config.shown_upstream(),
                enforce: proxy.config.enforce,
                signed_in,
            },
        ));
    };
    let side = |title, m: &super::Message| Side {
        title,
        headers: m
            .headers
            .iter()
            .map(|(k, v)| (visible(k).into_owned(), visible(v).into_owned()))
            .collect(),
        body: m.body.as_deref().map_or_else(
            || format!("({} bytes, streamed through unjudged)", m.body_bytes),
            |b| visible(b).into_owned(),
        ),
    };
    let sides = vec![
        side("Request", &judged.exchange.request),
        side("Answer", &judged.exchange.response),
    ];
    page(render(
        StatusCode::OK,
        &DetailPage {
            root,
            upstream: proxy.config.shown_upstream(),
            enforce: proxy.config.enforce,
            signed_in,
            duration: format!("{:.1} ms", judged.exchange.duration_ms),
            trace_id: judged.exchange.trace_id.clone().unwrap_or_default(),
            span_id: judged.exchange.span_id.clone().unwrap_or_default(),
            row: row(&judged),
            sides,
        },
    ))
}

#[derive(Template)]
#[template(path = "coverage.html")]
struct CoveragePage {
    root: String,
    upstream: String,
    enforce: bool,
    signed_in: bool,
    total: u64,
    headline: String,
    cells: Vec<coverage::Row>,
    outside: Vec<coverage::Row>,
}

/// `GET /_proxy/ui/coverage`: the interface coverage as a table.
async fn coverage_page(
    State(proxy): State<ProxyState>,
    SignedIn(signed_in): SignedIn,
    uri: Uri,
) -> Response {
    let seen = proxy.coverage();
    let (cells, mut outside) = coverage::rows(&seen);
    for row in &mut outside {
        row.name = visible(&row.name).into_owned();
    }
    page(render(
        StatusCode::OK,
        &CoveragePage {
            root: root_of(uri.path()),
            upstream: proxy.config.shown_upstream(),
            enforce: proxy.config.enforce,
            signed_in,
            total: proxy.summary().exchanges,
            headline: coverage::headline(&seen),
            cells,
            outside,
        },
    ))
}

/// The console's routes under `/_proxy/ui`.
pub(super) fn routes() -> axum::Router<ProxyState> {
    axum::Router::new()
        .route(
            "/_proxy/ui",
            get(|| async { Redirect::permanent("/_proxy/ui/") }),
        )
        .route("/_proxy/ui/", get(list))
        .route("/_proxy/ui/exchanges/feed", get(feed))
        .route("/_proxy/ui/exchanges/{seq}", get(detail))
        .route("/_proxy/ui/coverage", get(coverage_page))
        .route("/_proxy/ui/{*rest}", axum::routing::any(no_such_page))
        .route(
            "/_proxy/ui/static/console.css",
            get(|| async { asset(STYLESHEET, "text/css; charset=utf-8") }),
        )
        .route(
            "/_proxy/ui/static/console.js",
            get(|| async { asset(SCRIPT, "text/javascript; charset=utf-8") }),
        )
}

#[cfg(test)]
mod tests {
    use askama::Template as _;

    use super::{RESTARTED, Row, Rows, answer_after, gap_line, page_after};

    #[test]
    fn an_exchanges_link_is_named_by_its_request_and_a_hole_is_said() {
        let rows = Rows {
            root: "../../".to_owned(),
            rows: vec![Row {
                row: 3,
                seq: 7,
                time: "2025-01-01T00:00:00Z".to_owned(),
                method: "GET".to_owned(),
                path: "/api/payments/T-1/status".to_owned(),
                status: 200,
                verdict: "pass",
                verdict_class: "ok",
                findings: vec![],
            }],
            placeholder: false,
            gap: gap_line(2),
        }
        .render()
        .expect("rendered");
        assert!(
            rows.contains(r#"<a href="../../_proxy/ui/exchanges/7">GET <bdi>/api/payments/T-1/status</bdi></a>"#),
            "{rows}"
        );
        assert!(rows.contains(r##"<td data-label="#">7</td>"##), "{rows}");
        let (link, hole) = (
            rows.find("exchanges/7").expect("the row"),
            rows.find(r#"<tr class="gap"><td colspan="6">2 exchanges here are no longer kept"#)
                .expect("the hole"),
        );
        assert!(link < hole, "the hole is below the rows: {rows}");
    }

    #[test]
    fn a_feed_pages_a_burst_from_its_oldest_and_names_the_newest_returned() {
        let kept = 1..=130_u64;
        let (page, next, lost) = page_after(kept.clone(), |r| *r, 0, 50);
        assert_eq!((page, next, lost), ((1..=50).collect(), 50, 0));
        let (page, next, _) = page_after(kept.clone(), |r| *r, 100, 50);
        assert_eq!((page, next), ((101..=130).collect(), 130));
        // Exactly a page left: the next poll finds nothing more.
        let (page, next, _) = page_after(kept.clone(), |r| *r, 80, 50);
        assert_eq!((page.len(), next), (50, 130));
        let (page, next, _) = page_after(kept, |r| *r, 130, 50);
        assert_eq!((page, next), (vec![], 130));
        // Nothing kept: the position stays.
        assert_eq!(
            page_after(std::iter::empty::<u64>(), |r| *r, 7, 50),
            (vec![], 7, 0)
        );
    }

    #[test]
    fn exchanges_dropped_unread_are_counted_at_the_hole() {
        let kept = 61..=560_u64;
        let (page, next, lost) = page_after(kept.clone(), |r| *r, 20, 50);
        assert_eq!((page.first(), next, lost), (Some(&61), 110, 40));
        assert!(gap_line(lost).starts_with("40 exchanges here are no longer kept"));
        assert_eq!(page_after(kept, |r| *r, 60, 50).2, 0);
        assert_eq!(gap_line(0), "");
    }

    #[test]
    fn a_position_the_console_never_reached_is_answered_from_its_oldest() {
        // The proxy restarted: the page asks after 130, the console has 1..=5.
        let (page, next, gap) = answer_after(1..=5_u64, |r| *r, 5, 130, 50);
        assert_eq!((page, next), ((1..=5).collect(), 5));
        assert_eq!(gap, RESTARTED);
        // Nothing kept yet: no row, the real position, the line once.
        let (page, next, gap) = answer_after(std::iter::empty::<u64>(), |r| *r, 0, 130, 50);
        assert_eq!((page, next, gap.as_str()), (vec![], 0, RESTARTED));
        // More than a page since the restart: the oldest page first.
        let (page, next, _) = answer_after(1..=70_u64, |r| *r, 70, 130, 50);
        assert_eq!((page.len(), next), (50, 50));
        // Not restarted: as before, no line.
        let (page, next, gap) = answer_after(1..=130_u64, |r| *r, 130, 130, 50);
        assert_eq!((page, next, gap.as_str()), (vec![], 130, ""));
    }
}
