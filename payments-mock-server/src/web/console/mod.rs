//! The web console (CONTRACT section 14): the mock seen in a browser, at
//! `/_mock/ui/`. Server-rendered pages (askama, auto-escaped) over the same
//! store, journal, clock and catalogue the JSON admin endpoints read, so the
//! two can never disagree; a small stylesheet and one small script, both
//! compiled into the binary; nothing fetched from elsewhere.
//!
//! - `transactions.rs`: the list (filters, paging, live rows) and the detail
//!   page (fields, timeline, journal, payment page link).
//! - `requests.rs`: the request journal, live, and one request in full.
//! - `controls.rs`: the clock, the catalogue, reset.
//!
//! Never behind the API key, never faulted. Its forms (clock, reset) are
//! refused from another origin: a web page elsewhere cannot reset the mock
//! through a visitor's browser.

mod controls;
mod requests;
mod transaction;
mod transactions;

use std::borrow::Cow;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use askama::Template;

use crate::http::state::AppState;
use crate::store::{Store as _, StoreError};
use crate::web::html::{render, root_of};

/// The console's script: live rows for transactions and requests.
pub const SCRIPT: &str = include_str!("../../../assets/console.js");
/// The console's stylesheet: the pages' one plus the console's parts.
pub const STYLESHEET: &str = concat!(
    include_str!("../../../assets/mock.css"),
    include_str!("../../../assets/console.css")
);

/// How often the pages poll for what is new, in milliseconds (in each
/// page's markup, read by the script).
pub const POLL_MS: u32 = 1000;

/// Where the console lives.
pub const PATH: &str = "/_mock/ui/";

/// The console's routes, all under `/_mock/ui`, each with its operation in
/// the OpenAPI document.
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(root))
        .routes(routes!(transactions::list))
        .routes(routes!(transactions::rows))
        .routes(routes!(transaction::detail))
        .routes(routes!(requests::list))
        .routes(routes!(requests::feed))
        .routes(routes!(requests::detail))
        .routes(routes!(controls::clock, controls::advance))
        .routes(routes!(controls::catalog))
        .routes(routes!(controls::reset_page, controls::reset))
        .routes(routes!(stylesheet))
        .routes(routes!(script))
}

/// The console's address without its slash: to `/_mock/ui/`.
#[utoipa::path(get, path = "/_mock/ui", operation_id = "consoleRoot", tag = "console")]
async fn root() -> Redirect {
    Redirect::permanent(PATH)
}

/// What every console page shows around its content.
#[derive(Debug, Clone)]
pub(crate) struct Chrome {
    /// Relative path back to the server's root (`../../`).
    pub root: String,
    /// Which navigation entry is current.
    pub nav: &'static str,
    /// Virtual now, RFC 3339.
    pub now: String,
    /// Where state is kept (a PostgreSQL password as `***`).
    pub store: String,
    /// This replica's name.
    pub replica: String,
}

impl Chrome {
    /// The chrome at the store's now as this process last read it: a page
    /// reads the store's clock before it is drawn, so the two agree.
    pub(crate) fn new(state: &AppState, path: &str, nav: &'static str) -> Self {
        Self {
            root: root_of(path),
            nav,
            now: crate::domain::clock::format_time(state.store.now_hint()),
            store: visible(&state.store.shown()).into_owned(),
            replica: visible(&state.replica).into_owned(),
        }
    }
}

/// The page while the store's database cannot be reached (CONTRACT
/// section 15): 503, saying so.
pub(crate) fn store_down(state: &AppState, error: &StoreError, path: &str) -> Response {
    tracing::warn!(error = %error, "console: the store is unavailable");
    console_error(
        state,
        StatusCode::SERVICE_UNAVAILABLE,
        "Store unavailable",
        &format!(
            "The mock cannot reach the database it keeps its state in ({}). The page will work again once it is back; nothing needs a restart.",
            state.store.shown()
        ),
        path,
    )
}

/// The headers of console pages: the page headers, plus the console's own
/// script and its polls (`script-src`, `connect-src` 'self'), and forms
/// that only post back to the console.
const CONSOLE_CSP: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; \
     style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// `response` (a page) with the console's content security policy, and
/// `Referer` kept within the mock: with `no-referrer` (the payment page's
/// policy) a browser sends `Origin: null` on a form post, and the console
/// could not tell its own forms from another site's.
pub(crate) fn console_page(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONSOLE_CSP),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorPage<'a> {
    chrome: Chrome,
    status: u16,
    title: &'a str,
    detail: &'a str,
}

/// A console error page (a bad filter, an unknown transaction...), inside
/// the console's navigation.
pub(crate) fn console_error(
    state: &AppState,
    status: StatusCode,
    title: &str,
    detail: &str,
    path: &str,
) -> Response {
    console_page(render(
        status,
        &ErrorPage {
            chrome: Chrome::new(state, path, ""),
            status: status.as_u16(),
            title,
            detail,
        },
    ))
}

/// The page for a failure before the console's handlers (an unknown page,
/// a wrong method, a body over the limit).
pub(crate) fn error_for_status(state: &AppState, status: StatusCode, path: &str) -> Response {
    let (title, detail) = match status {
        StatusCode::NOT_FOUND => ("No such page", "The console has no page at this address."),
        StatusCode::METHOD_NOT_ALLOWED => (
            "Method not allowed",
            "This page is read with GET; only the clock and reset forms post.",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => (
            "Request too large",
            "The submitted form is larger than a console form can be.",
        ),
        _ => ("Request not accepted", "The request could not be handled."),
    };
    console_error(state, status, title, detail, path)
}

/// Text from outside made visible as text: control characters become
/// their Unicode control pictures (`␛` for ESC) and bidirectional controls
/// (which would reorder what follows them) a visible `<U+202E>`; line
/// breaks and tabs stay. Escaping for HTML is the template's job.
pub fn visible(text: &str) -> Cow<'_, str> {
    let shown = |c: char| match c {
        '\n' | '\t' => None,
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + u32::from(c)).map(String::from),
        '\u{7f}' => Some("\u{2421}".to_owned()),
        '\u{80}'..='\u{9f}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{61c}' => Some(format!("<U+{:04X}>", u32::from(c))),
        _ => None,
    };
    if !text.chars().any(|c| shown(c).is_some()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match shown(c) {
            Some(s) => out.push_str(&s),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A time as the console shows it: `2026-11-25 10:15:30.123 UTC`.
pub(crate) fn shown_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S%.3f UTC").to_string()
}

/// The query parameters of a console URL (form-decoded), in order.
pub(crate) fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    query
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default()
}

/// The first value of `name`; a form's empty field is no value.
pub(crate) fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// The console's stylesheet, from the binary.
#[utoipa::path(
    get,
    path = "/_mock/ui/static/console.css",
    operation_id = "consoleStylesheet",
    tag = "console"
)]
async fn stylesheet() -> Response {
    static_asset(STYLESHEET, "text/css; charset=utf-8")
}

/// The console's one script (rows that refresh themselves), from the binary.
#[utoipa::path(
    get,
    path = "/_mock/ui/static/console.js",
    operation_id = "consoleScript",
    tag = "console"
)]
async fn script() -> Response {
    static_asset(SCRIPT, "text/javascript; charset=utf-8")
}

fn static_asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_become_visible_text() {
        assert!(matches!(visible("plain ü ✓"), Cow::Borrowed(_)));
        assert_eq!(visible("a\u{1b}[31mb"), "a\u{241b}[31mb");
        assert_eq!(visible("x\u{0}y\u{7f}"), "x\u{2400}y\u{2421}");
        assert_eq!(visible("\u{202e}evil"), "<U+202E>evil");
        assert_eq!(visible("line\nnext\tcol"), "line\nnext\tcol");
    }
}
