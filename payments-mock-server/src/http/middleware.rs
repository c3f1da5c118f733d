//! Cross-cutting layers for every route: the request id, the request log,
//! the envelope guarantee (CONTRACT section 2), and who may use the admin
//! side (section 18: [`admit`]).

use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderName, HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt as _;
use tower::ServiceExt as _;
use tower::util::BoxCloneSyncService;
use uuid::Uuid;

use crate::domain::access::{Refusal, Role, Viewer};
use crate::http::access::refusal_response;
use crate::http::answers::panic_response;
use crate::http::extract::{acceptable_request_id, is_json_content_type};
use crate::http::guard::api_guard;
use crate::state::AppState;
use payments_serve::ConnectionAbort;
use payments_serve::{ApiError, ErrorCodeTag};

/// The routes outside `/api/`, behind their layers.
pub(crate) type Others = BoxCloneSyncService<Request<Body>, Response, Infallible>;

/// `X-Request-Id`.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Answers a request: sets the request id, runs `/api/` requests through
/// the guard and their routes ([`api_guard`]: auth, rate limit, faults,
/// journal) and everything else through `others` (the router of the
/// admin routes, pages and console), makes sure the response is the
/// envelope (or a page), echoes the id and writes one log line (never a
/// header value, so never a key).
///
/// `abort` closes the request's connection ([`api_guard`]).
pub(crate) async fn respond<B>(
    state: &AppState,
    others: &Others,
    abort: Option<&ConnectionAbort>,
    req: Request<B>,
) -> Response
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let started = Instant::now();
    let id = match req.headers().get(&REQUEST_ID) {
        Some(given) if acceptable_request_id(given.as_bytes()) => detached(given),
        _ => new_request_id(),
    };
    let method = req.method().clone();
    // Shares the request's bytes: the path is logged from it afterwards.
    let uri = req.uri().clone();
    // Pages answer their errors as pages, linked relative to their path;
    // so do they under a sandbox that is not live (the root answers it).
    #[cfg(feature = "pages")]
    let page_path = (crate::web::html::is_page_path(uri.path())
        || crate::web::html::is_sandboxed_page_path(uri.path()))
    .then(|| uri.path().to_owned());

    // The guard answers a handler's panic itself (and journals it); a
    // panic in the guard, or below a router without a panic layer, is
    // answered here, so the connection still gets its 500.
    // `/api/` is routed once, here: for the route and for the metrics.
    let api = uri.path().starts_with("/api/");
    let endpoint = if api {
        payments_interface::route(uri.path()).map(|m| m.endpoint)
    } else {
        None
    };
    let response = if api {
        let guarded = AssertUnwindSafe(api_guard(state, req, endpoint, &id, abort)).catch_unwind();
        guarded.await.unwrap_or_else(panic_response)
    } else {
        match admit(state, req.map(Body::new)) {
            Ok(mut req) => {
                // A sandbox's handlers serve its state (`state::Here`).
                if !state.is_root() {
                    req.extensions_mut().insert(state.clone());
                }
                let routed = AssertUnwindSafe(others.clone().oneshot(req)).catch_unwind();
                match routed.await {
                    Ok(Ok(response)) => response,
                    Ok(Err(never)) => match never {},
                    Err(panic) => panic_response(panic),
                }
            }
            Err(refused) => *refused,
        }
    };
    #[cfg(feature = "pages")]
    let mut response = match &page_path {
        Some(page_path) => ensure_page(response, page_path, state),
        None => ensure_envelope(response),
    };
    #[cfg(not(feature = "pages"))]
    let mut response = ensure_envelope(response);
    if response.status() == StatusCode::NOT_FOUND {
        // A path that is no route allows no method. axum's method router
        // adds `Allow` to whatever its fallback answers, 404 included
        // (`POST /api/payments/foo/bar` came back 404 with `Allow: GET,HEAD`).
        response.headers_mut().remove(header::ALLOW);
    }
    response.headers_mut().insert(REQUEST_ID, id.clone());
    let tag = response.extensions().get::<ErrorCodeTag>().map(|t| t.0);
    let code = tag.map_or("", |c| c.as_str());
    let path = uri.path();
    // One clock read for the log line and the histogram.
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    state.metrics.request(path, endpoint, status, tag, elapsed);
    // The coverage's answer cells are counted by the guard, as the
    // request's journal entry is admitted (`coverage/tally.rs`).
    // A sandbox's request is logged with its prefix: the whole path asked
    // (its id written on the stack: no allocation per request).
    let mut id_text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    let sandbox = state
        .sandbox
        .map(|s| &*s.id.hyphenated().encode_lower(&mut id_text));
    let shown = crate::http::log_path::shown_path(sandbox, path);
    let extensions = response.extensions();
    let fault = extensions
        .get::<payments_serve::trace::InjectedFault>()
        .map_or("", |f| f.0.as_str());
    let fault_rule = extensions
        .get::<crate::http::guard::InjectedByRule>()
        .map_or("", |r| r.0.as_str());
    payments_serve::log_request(&payments_serve::RequestLine {
        method: method.as_str(),
        path: &shown,
        status,
        elapsed,
        request_id: id.to_str().unwrap_or(""),
        error_code: code,
        fault,
        fault_rule,
    });
    response
}

/// A copy of a request header value that owns its bytes.
///
/// A value hyper parsed shares the connection's read buffer (8 KiB or
/// more); the journal keeps the request id for its last 1,000 requests, and
/// a shared value would pin one whole buffer per entry and make hyper
/// allocate a fresh one for every request (measured: 4.9 MB after 600
/// requests of the client, which sends `X-Request-Id`).
fn detached(value: &HeaderValue) -> HeaderValue {
    HeaderValue::from_bytes(value.as_bytes()).unwrap_or_else(|_| new_request_id())
}

/// A fresh request id: a v4 UUID, hyphenated.
fn new_request_id() -> HeaderValue {
    let mut text = Uuid::encode_buffer();
    let text = Uuid::new_v4().hyphenated().encode_lower(&mut text);
    HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static("unknown"))
}

/// Which part of the server a path outside `/api/` is in, for the admin
/// keys (CONTRACT section 18).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    /// Open to everyone: `/_mock/health`, `/openapi.json`, the payment
    /// page (its token is the payer's capability), the console's sign-in
    /// and sign-out and its stylesheet and script, unknown paths.
    Open,
    /// The `/_mock/` JSON controls: an `Authorization: Bearer` key.
    Controls,
    /// The console: a key, or a session of its sign-in page.
    #[cfg_attr(not(feature = "pages"), allow(dead_code))]
    Console,
    /// `/metrics` and `/_mock/coverage`: an admin key only (a merchant's
    /// key is 403).
    AdminOnly,
    /// `/_mock/sandboxes`: a key, the admin's or a merchant's (which makes,
    /// lists and removes its own sandboxes only).
    Sandboxes,
}

/// The console's paths that stay open with an admin key: the way in and
/// out, and what the sign-in page is drawn with.
const OPEN_CONSOLE_PATHS: [&str; 4] = [
    "/_mock/ui/sign-in",
    "/_mock/ui/sign-out",
    "/_mock/ui/static/console.css",
    "/_mock/ui/static/console.js",
];

fn area(path: &str) -> Area {
    // The whole process's counts: no merchant's part to show.
    if (cfg!(feature = "metrics") && path == "/metrics") || path == "/_mock/coverage" {
        return Area::AdminOnly;
    }
    // The fault rules: a rule may name any merchant's reference, and it
    // faults every caller's requests.
    if path == "/_mock/faults" || path.starts_with("/_mock/faults/") {
        return Area::AdminOnly;
    }
    if path == "/_mock/sandboxes" || path.starts_with("/_mock/sandboxes/") {
        return Area::Sandboxes;
    }
    let Some(rest) = path.strip_prefix("/_mock") else {
        return Area::Open;
    };
    if path == "/_mock/health" || OPEN_CONSOLE_PATHS.contains(&path) {
        Area::Open
    } else if cfg!(feature = "pages") && (rest == "/ui" || rest.starts_with("/ui/")) {
        Area::Console
    } else {
        // `/_mock/…` and `/_mockanything`: every spelling the router
        // might ever serve under the prefix is behind the key.
        Area::Controls
    }
}

/// Lets a request outside `/api/` through to its route, with the
/// [`Viewer`] it comes from as an extension, or answers it: without an
/// admin key everything is open to a request that names the mock by an
/// address, as `localhost` or by its public URL's host (else 403: DNS
/// rebinding); with one, the controls want an
/// `Authorization: Bearer` key and the console a key or a session (else
/// 401, the console's sign-in page), an API key bound to no merchant is
/// 403, and a merchant's key is 403 for anything but reading (GET, HEAD),
/// and for `/metrics` and `/_mock/coverage` (the whole server's counts: an
/// admin key only).
///
/// `/api/` never comes here: its guard has its own keys, and its hot path
/// pays nothing for these.
/// A refusal is boxed: the way through is the common case.
fn admit(state: &AppState, mut req: Request<Body>) -> Result<Request<Body>, Box<Response>> {
    let area = area(req.uri().path());
    if !state.admin.is_enabled() {
        // Open to whoever reaches it, but only by a name DNS rebinding
        // cannot give another site's page: an address, `localhost`, or
        // the public URL's host.
        if area != Area::Open
            && !payments_serve::admin::names_this_server(
                req.headers(),
                Some(state.public_url.as_str()),
            )
        {
            return Err(Box::new(crate::http::access::foreign_host(req.headers())));
        }
        req.extensions_mut().insert(Viewer::OPEN);
        return Ok(req);
    }
    let viewer = match area {
        // Open, but what it tells depends on who asks (CONTRACT section
        // 18): a valid key's viewer goes with it; no key, or a wrong one,
        // is anonymous (no viewer) and is told only that the mock is up.
        Area::Open if req.uri().path() == "/_mock/health" => {
            let role = match state.admin.bearer(req.headers(), &state.auth) {
                Some(Ok(role)) => Some(role),
                _ => None,
            };
            // A sandbox's health is its own: to anyone but the admin and
            // its merchant it does not exist, as on every other route
            // (else its id, and its clock, could be probed).
            if let Some(sandbox) = state.sandbox {
                let sees = match role {
                    Some(Role::Admin) => true,
                    Some(Role::Merchant(m)) => sandbox.owner == Some(m),
                    _ => false,
                };
                if !sees {
                    return Err(Box::new(
                        crate::http::handlers::sandboxes::not_found().into_response(),
                    ));
                }
            }
            if let Some(role) = role {
                req.extensions_mut().insert(Viewer {
                    role,
                    signed_in: false,
                });
            }
            return Ok(req);
        }
        Area::Open => return Ok(req),
        Area::Controls | Area::AdminOnly | Area::Sandboxes => {
            match state.admin.bearer(req.headers(), &state.auth) {
                Some(Ok(role)) => Viewer {
                    role,
                    signed_in: false,
                },
                Some(Err(refusal)) => return Err(Box::new(refusal_response(refusal))),
                None => return Err(Box::new(refusal_response(Refusal::Unauthenticated))),
            }
        }
        Area::Console => console_viewer(state, &req)?,
    };
    let reads = matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    // Under a merchant's sandbox: its merchant's key controls it (clock,
    // reset, faults, coverage); another merchant's finds no sandbox.
    let mut viewer = viewer;
    if let (Some(sandbox), Role::Merchant(m)) = (state.sandbox, viewer.role) {
        if sandbox.owner != Some(m) {
            return Err(Box::new(
                crate::http::handlers::sandboxes::not_found().into_response(),
            ));
        }
        viewer.role = Role::Owner(m);
    }
    // `/metrics` counts the whole server, whichever sandbox it is asked
    // under: the admin's alone (a sandbox's owner controls only its own).
    let server_wide = cfg!(feature = "metrics") && req.uri().path() == "/metrics";
    // A merchant's key makes, lists and removes its own sandboxes.
    if (!reads || area == Area::AdminOnly) && !viewer.role.may_change() && area != Area::Sandboxes
        || server_wide && viewer.role != Role::Admin
    {
        return Err(Box::new(refused(
            state,
            area,
            Refusal::ReadOnly,
            &req,
            Some(viewer),
        )));
    }
    req.extensions_mut().insert(viewer);
    Ok(req)
}

/// The console's viewer: by an `Authorization: Bearer` key (curl, a test),
/// else by the session cookie; without either the sign-in page (401).
#[cfg(feature = "pages")]
fn console_viewer(state: &AppState, req: &Request<Body>) -> Result<Viewer, Box<Response>> {
    use crate::admin::session_cookies;
    match state.admin.bearer(req.headers(), &state.auth) {
        Some(Ok(role)) => {
            return Ok(Viewer {
                role,
                signed_in: false,
            });
        }
        Some(Err(refusal)) => {
            return Err(Box::new(refused(state, Area::Console, refusal, req, None)));
        }
        None => {}
    }
    let mut presented = false;
    for id in session_cookies(req.headers()) {
        presented = true;
        if let Some(role) = state.admin.sessions.find(id) {
            return Ok(Viewer {
                role,
                signed_in: true,
            });
        }
    }
    Err(Box::new(crate::web::console::sign_in::required(
        state,
        req.uri(),
        presented,
    )))
}

#[cfg(not(feature = "pages"))]
fn console_viewer(_: &AppState, _: &Request<Body>) -> Result<Viewer, Box<Response>> {
    Err(Box::new(refusal_response(Refusal::Unauthenticated)))
}

/// The answer to a refused request: the envelope, or on the console a page.
fn refused(
    state: &AppState,
    area: Area,
    refusal: Refusal,
    req: &Request<Body>,
    viewer: Option<Viewer>,
) -> Response {
    #[cfg(feature = "pages")]
    if area == Area::Console {
        return crate::web::console::sign_in::refused(state, refusal, req.uri(), viewer);
    }
    let _ = (state, area, req, viewer);
    refusal_response(refusal)
}

/// Replaces a failure that is not our JSON (axum's or tower-http's own
/// rejections) by the envelope for its status, keeping useful headers.
fn ensure_envelope(response: Response) -> Response {
    let status = response.status();
    // The status first: a success is kept without a header look-up.
    if !(status.is_client_error() || status.is_server_error())
        || response
            .extensions()
            .get::<crate::http::delivery::Verbatim>()
            .is_some()
        || response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| is_json_content_type(v.as_bytes()))
    {
        return response;
    }
    let mut replacement = ApiError::for_status(status).into_response();
    *replacement.status_mut() = status;
    for name in [header::ALLOW, header::RETRY_AFTER, header::WWW_AUTHENTICATE] {
        if let Some(v) = response.headers().get(&name) {
            replacement.headers_mut().insert(name, v.clone());
        }
    }
    replacement
}

/// On a page path (`/pay/`, `/_mock/ui/`, feature `pages`), replaces a failure that is not a page (an
/// unknown route, a wrong method, a body over the limit, a panic) by an
/// error page for its status, keeping `Allow`: a browser shows a page, never
/// JSON.
#[cfg(feature = "pages")]
fn ensure_page(response: Response, path: &str, state: &AppState) -> Response {
    let status = response.status();
    if crate::web::html::is_html(&response)
        || !(status.is_client_error() || status.is_server_error())
    {
        return response;
    }
    // A page under a sandbox that is not live (unknown, removed,
    // expired) is a 404 page, never JSON; one another merchant's key
    // asked for is answered as an unknown one (CONTRACT 18: invisible),
    // never by a page drawn with the sandbox's own label, clock and store.
    if let Some(tag) = response
        .extensions()
        .get::<payments_serve::ErrorCodeTag>()
        .copied()
        .filter(|tag| tag.0 == payments_serve::ErrorCode::SandboxNotFound)
    {
        // Drawn at the whole path the browser asked, under a live sandbox
        // too: the same page, byte for byte, as under an unknown one.
        let asked = match state.sandbox {
            Some(sandbox) if !path.starts_with("/sandboxes/") => {
                format!("/sandboxes/{}{path}", sandbox.id)
            }
            _ => path.to_owned(),
        };
        let mut page = crate::web::html::sandbox_not_found_page(&asked);
        page.extensions_mut().insert(tag);
        return page;
    }
    let mut replacement = if path.starts_with("/_mock/ui") {
        crate::web::console::error_for_status(state, status, path)
    } else {
        crate::web::html::error_page_for_status(state, status, path)
    };
    if let Some(allow) = response.headers().get(header::ALLOW) {
        replacement
            .headers_mut()
            .insert(header::ALLOW, allow.clone());
    }
    replacement
}

#[cfg(test)]
mod tests;
