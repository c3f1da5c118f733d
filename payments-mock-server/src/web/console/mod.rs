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
//! - `faults.rs`: the scripted fault rules
//! - `sandboxes.rs`: the sandbox picker (the root's)
//! - `coverage.rs`: what the application under test met of the mock
//!   (an admin's page).
//! - `sign_in.rs`: with `--admin-key`, the way in (a key typed once, then
//!   a session cookie) and out, and the pages of a refused request
//!   (CONTRACT section 18): the mock's words and role rules on
//!   payments-serve's sign-in.
//! - `form.rs`: how the console's forms (the clock's, reset's, the
//!   sign-in's and sign-out's) are read.
//!
//! Never behind the `/api/` keys, never faulted; behind the admin key
//! when one is configured, where a merchant's key sees its merchant's
//! transactions and requests only and changes nothing. Its forms (clock,
//! reset, sign-in, sign-out) are refused from another origin: a web page
//! elsewhere cannot reset the mock through a visitor's browser.

mod controls;
mod coverage;
mod faults;
mod form;
mod requests;
mod sandboxes;
pub(crate) mod sign_in;
mod target;
mod transaction;
mod transactions;

use axum::http::StatusCode;
use axum::response::{Redirect, Response};
use axum::routing::{MethodRouter, get};

use askama::Template;

use crate::domain::access::{Role, Viewer};
use crate::domain::port::{Store as _, StoreError};
use crate::state::AppState;
use crate::web::html::{render, root_of};

pub(crate) use payments_serve::pages::{
    CONSOLE_SCRIPT as SCRIPT, CONSOLE_STYLESHEET as STYLESHEET, POLL_MS, console_page, shown_time,
    visible,
};

/// Where the console lives.
pub const PATH: &str = "/_mock/ui/";

/// Adds the console's routes, all under `/_mock/ui`, to a route table
/// through `route` (path, methods, handler).
pub(crate) fn routes<T>(
    table: T,
    route: impl Fn(T, &'static str, &[&'static str], MethodRouter<AppState>) -> T,
) -> T {
    let table = route(table, "/_mock/ui", &["get"], get(root));
    let table = route(table, "/_mock/ui/", &["get"], get(transactions::list));
    let table = route(
        table,
        "/_mock/ui/transactions/rows",
        &["get"],
        get(transactions::rows),
    );
    let table = route(
        table,
        "/_mock/ui/transactions/{transactionId}",
        &["get"],
        get(transaction::detail),
    );
    let table = route(table, "/_mock/ui/requests", &["get"], get(requests::list));
    let table = route(
        table,
        "/_mock/ui/requests/feed",
        &["get"],
        get(requests::feed),
    );
    let table = route(
        table,
        "/_mock/ui/requests/{seq}",
        &["get"],
        get(requests::detail),
    );
    let table = route(
        table,
        "/_mock/ui/clock",
        &["get", "post"],
        get(controls::clock).post(controls::advance),
    );
    let table = route(table, "/_mock/ui/catalog", &["get"], get(controls::catalog));
    let table = route(table, "/_mock/ui/coverage", &["get"], get(coverage::page));
    let table = route(table, "/_mock/ui/faults", &["get"], get(faults::page));
    let table = route(table, "/_mock/ui/sandboxes", &["get"], get(sandboxes::page));
    let table = route(
        table,
        "/_mock/ui/reset",
        &["get", "post"],
        get(controls::reset_page).post(controls::reset),
    );
    let table = route(
        table,
        "/_mock/ui/sign-in",
        &["get", "post"],
        get(sign_in::page).post(sign_in::submit),
    );
    let table = route(
        table,
        "/_mock/ui/sign-out",
        &["post"],
        axum::routing::post(sign_in::sign_out),
    );
    let table = route(
        table,
        "/_mock/ui/static/console.css",
        &["get"],
        get(stylesheet),
    );
    route(table, "/_mock/ui/static/console.js", &["get"], get(script))
}

/// The console's operations, for the OpenAPI document.
#[cfg(feature = "openapi")]
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    root,
    transactions::list,
    transactions::rows,
    transaction::detail,
    requests::list,
    requests::feed,
    requests::detail,
    controls::clock,
    controls::advance,
    controls::catalog,
    coverage::page,
    faults::page,
    sandboxes::page,
    controls::reset_page,
    controls::reset,
    sign_in::page,
    sign_in::submit,
    sign_in::sign_out,
    stylesheet,
    script,
))]
pub(crate) struct Operations;

/// The console's address without its slash: to `/_mock/ui/`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(get, path = "/_mock/ui", operation_id = "consoleRoot", tag = "console")
)]
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
    /// Where state is kept (a PostgreSQL password as `***`): empty unless
    /// the viewer is known to hold the admin key (or the console is open).
    pub store: String,
    /// This replica's name: as `store`.
    pub replica: String,
    /// The store and replica, until [`Chrome::seen_by`] knows the viewer
    /// may see them (CONTRACT 18): a page whose viewer is unknown (a
    /// refused form, an unknown page) never shows them.
    held: (String, String),
    /// Who is looking, when the console is behind an admin key ("with the
    /// admin key", "as merchant …"); empty when it is open.
    pub who: String,
    /// Whether the viewer came with a session (then the page offers
    /// sign-out).
    pub signed_in: bool,
    /// Whether the viewer may change the mock (a merchant's key may not:
    /// no reset in the navigation); false until the viewer is known.
    pub may_change: bool,
    /// The sandbox this console shows (its label or id), when it is one;
    /// empty at the root, whose navigation lists the sandboxes instead.
    pub sandbox: String,
}

impl Chrome {
    /// The chrome at the store's now as this process last read it: a page
    /// reads the store's clock before it is drawn, so the two agree.
    pub(crate) fn new(state: &AppState, path: &str, nav: &'static str) -> Self {
        Self {
            root: root_of(path),
            nav,
            now: crate::domain::clock::format_time(state.store.now_hint()),
            store: String::new(),
            replica: String::new(),
            held: (
                visible(&state.store.shown()).into_owned(),
                visible(&state.replica).into_owned(),
            ),
            who: String::new(),
            signed_in: false,
            may_change: false,
            sandbox: state.sandbox.map_or_else(String::new, |s| {
                let label = state.sandbox_label().unwrap_or_else(|| s.id.to_string());
                visible(&label).into_owned()
            }),
        }
    }

    /// The chrome as `viewer` sees it.
    pub(crate) fn seen_by(mut self, viewer: Viewer) -> Self {
        self.who = match viewer.role {
            Role::Open => String::new(),
            Role::Admin => "with the admin key".to_owned(),
            Role::Merchant(m) => format!("as merchant {m}"),
            Role::Owner(m) => format!("as merchant {m}, in its sandbox"),
        };
        self.signed_in = viewer.signed_in;
        self.may_change = viewer.role.may_change();
        // CONTRACT 18: the store (a file path, a database's host and
        // user) and the replica's name need the admin key, as on
        // `/_mock/health`.
        if shows_store(viewer) {
            (self.store, self.replica) = std::mem::take(&mut self.held);
        }
        self
    }
}

/// Whether `viewer` may see where state is kept and the replica's name:
/// the admin key's, or anyone's on an open console.
fn shows_store(viewer: Viewer) -> bool {
    matches!(viewer.role, Role::Open | Role::Admin)
}

/// The page while the store's database cannot be reached (CONTRACT
/// section 15): 503, saying so; which database, to the admin alone.
pub(crate) fn store_down(
    state: &AppState,
    viewer: Viewer,
    error: &StoreError,
    path: &str,
) -> Response {
    tracing::warn!(error = %error, "console: the store is unavailable");
    let which = if shows_store(viewer) {
        format!(" ({})", state.store.shown())
    } else {
        String::new()
    };
    viewed_error(
        state,
        Some(viewer),
        StatusCode::SERVICE_UNAVAILABLE,
        "Store unavailable",
        &format!(
            "The mock cannot reach the database it keeps its state in{which}. The page will work again once it is back; nothing needs a restart."
        ),
        path,
    )
}

#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorPage<'a> {
    chrome: Chrome,
    status: u16,
    title: &'a str,
    detail: &'a str,
}

/// A console error page (a refused form, an unknown page...), inside the
/// console's navigation, for a viewer not known: nothing only an admin
/// may see, no navigation to what only some may use.
pub(crate) fn console_error(
    state: &AppState,
    status: StatusCode,
    title: &str,
    detail: &str,
    path: &str,
) -> Response {
    viewed_error(state, None, status, title, detail, path)
}

/// [`console_error`] as `viewer` sees it (when known).
pub(crate) fn viewed_error(
    state: &AppState,
    viewer: Option<Viewer>,
    status: StatusCode,
    title: &str,
    detail: &str,
    path: &str,
) -> Response {
    let chrome = Chrome::new(state, path, "");
    // Without an admin key everyone is the open console's viewer.
    let viewer = viewer.or_else(|| (!state.admin.is_enabled()).then_some(Viewer::OPEN));
    console_page(render(
        status,
        &ErrorPage {
            chrome: match viewer {
                Some(viewer) => chrome.seen_by(viewer),
                None => chrome,
            },
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

pub(crate) use payments_serve::admin::{param, query_pairs};

/// The console's stylesheet, from the binary.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/static/console.css",
        operation_id = "consoleStylesheet",
        tag = "console"
    )
)]
async fn stylesheet() -> Response {
    payments_serve::pages::static_asset(STYLESHEET, "text/css; charset=utf-8")
}

/// The console's one script (rows that refresh themselves), from the binary.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/static/console.js",
        operation_id = "consoleScript",
        tag = "console"
    )
)]
async fn script() -> Response {
    payments_serve::pages::static_asset(SCRIPT, "text/javascript; charset=utf-8")
}

#[cfg(test)]
mod text_tests;
