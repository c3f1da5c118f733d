//! The console's way in and out when the mock has an admin key (CONTRACT
//! section 18): a sign-in page that asks for a key once (a plain form, no
//! script), a session cookie from then on, and sign-out; and the pages a
//! refused console request gets.
//!
//! The key typed in is compared like a bearer key (every admin and API
//! key, in constant time) and then forgotten: the cookie carries a random
//! session id ([`crate::domain::access::Sessions`]), never the key, and
//! no page ever shows a key or a session id.

use askama::Template;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;

use super::controls::{form, see_other};
use super::{console_page, param, query_pairs, viewed_error};
use crate::domain::access::{
    Refusal, Role, Viewer, ended_session_cookie, session_cookie, session_cookies,
};
use crate::state::AppState;
use crate::web::html::{render, root_of};

/// Where the sign-in page is.
const PATH: &str = "/_mock/ui/sign-in";
/// Where a sign-in goes when it is not told where (relative to the root).
const HOME: &str = "_mock/ui/";
/// Longest `next` kept (a console address with its filters).
const MAX_NEXT: usize = 512;

#[derive(Template)]
#[template(path = "console/sign_in.html")]
struct SignInPage<'a> {
    root: String,
    /// No admin key: the console is open, there is nothing to sign in to.
    open: bool,
    next: &'a str,
    notice: Option<&'a str>,
    problem: Option<&'a str>,
    lifetime: String,
}

/// The sign-in page, drawn at `path` (its own, or any console page's
/// when that page was refused), with `status`.
fn sign_in_page(
    state: &AppState,
    status: StatusCode,
    path: &str,
    next: &str,
    notice: Option<&str>,
    problem: Option<&str>,
) -> Response {
    let mut response = console_page(render(
        status,
        &SignInPage {
            root: root_of(path),
            open: !state.admin.is_enabled(),
            next: console_target(next),
            notice,
            problem,
            lifetime: shown_lifetime(state.admin.sessions.lifetime()),
        },
    ));
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// A session's lifetime as a person reads it: `12 hours`, `1 hour`, or
/// humantime's `90m` for anything else.
fn shown_lifetime(lifetime: std::time::Duration) -> String {
    match lifetime.as_secs() {
        3600 => "1 hour".to_owned(),
        s if s % 3600 == 0 && lifetime.subsec_nanos() == 0 => format!("{} hours", s / 3600),
        _ => humantime::format_duration(lifetime).to_string(),
    }
}

/// `next` when it is a console address relative to the server's root
/// (`_mock/ui/…`, visible ASCII, no way out of the console), else the
/// console's home: a sign-in never sends the browser anywhere else.
fn console_target(next: &str) -> &str {
    let safe = next.len() <= MAX_NEXT
        && next.starts_with(HOME)
        && next.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
        && !next.contains("//")
        && !next.contains("/.")
        && !next.starts_with(PATH.trim_start_matches('/'));
    if safe { next } else { HOME }
}

/// The relative address of `uri` (a console page), to come back to it.
fn target_of(uri: &Uri) -> String {
    let path = uri.path().trim_start_matches('/');
    match uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_owned(),
    }
}

/// The answer to a console request without a key or a valid session: 401
/// and the sign-in page, which brings the browser back here after it.
/// `ended`: the browser sent a session cookie that is no longer (or never
/// was) valid; it is told to forget it.
pub(crate) fn required(state: &AppState, uri: &Uri, ended: bool) -> Response {
    let next = target_of(uri);
    let mut response = sign_in_page(
        state,
        StatusCode::UNAUTHORIZED,
        uri.path(),
        &next,
        ended.then_some(
            "Your sign-in has ended (it expired, you signed out, or the mock restarted): sign in again.",
        ),
        None,
    );
    if ended {
        response.headers_mut().insert(
            header::SET_COOKIE,
            ended_session_cookie(state.admin.secure_cookies()),
        );
    }
    response
}

/// The page of a refused console request: the sign-in page again for a
/// key that is not accepted (401) or an API key bound to no merchant
/// (403); a console page saying so when a merchant's key asks for a
/// change (403).
pub(crate) fn refused(
    state: &AppState,
    refusal: Refusal,
    uri: &Uri,
    viewer: Option<Viewer>,
) -> Response {
    let next = target_of(uri);
    match refusal {
        Refusal::Unauthenticated => sign_in_page(
            state,
            StatusCode::UNAUTHORIZED,
            uri.path(),
            &next,
            None,
            Some("The key in the Authorization header is not accepted here."),
        ),
        Refusal::Unbound => sign_in_page(
            state,
            StatusCode::FORBIDDEN,
            uri.path(),
            &next,
            None,
            Some(UNBOUND),
        ),
        Refusal::ReadOnly => viewed_error(
            state,
            viewer,
            StatusCode::FORBIDDEN,
            "Read only",
            "A merchant's key shows that merchant's transactions and requests and changes nothing: the clock, reset and the payer need the admin key.",
            uri.path(),
        ),
    }
}

const UNBOUND: &str = "This API key is bound to no merchant, so the console has nothing of its own to show it: use the admin key, or a key bound to a merchant.";

/// `GET /_mock/ui/sign-in`: the form (or, without an admin key, a link
/// to the open console).
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/sign-in",
        operation_id = "consoleSignIn",
        tag = "console"
    )
)]
pub(crate) async fn page(
    State(state): State<AppState>,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Response {
    let pairs = query_pairs(query.as_deref());
    let next = param(&pairs, "next").unwrap_or(HOME);
    let notice = param(&pairs, "signed-out").map(|_| "You are signed out.");
    sign_in_page(&state, StatusCode::OK, uri.path(), next, notice, None)
}

/// `POST /_mock/ui/sign-in` with `key` (and `next`): a session and 303 to
/// `next`, or the form again with 401 (a key that is not accepted) or 403
/// (an API key bound to no merchant). The key is never shown back.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/_mock/ui/sign-in",
        operation_id = "consoleSignInSubmit",
        tag = "console"
    )
)]
pub(crate) async fn submit(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let path = uri.path();
    let pairs = match form(&state, &headers, body, path).await {
        Ok(pairs) => pairs,
        Err(page) => return page,
    };
    let next = console_target(param(&pairs, "next").unwrap_or(HOME)).to_owned();
    let key = pairs
        .iter()
        .find(|(name, _)| name == "key")
        .map_or("", |(_, value)| value.as_str());
    // Without an admin key the console is open: any form, even an empty
    // one, leads into it (as the OpenAPI document says: no 401 then).
    let role = if key.is_empty() && state.admin.is_enabled() {
        Err(Refusal::Unauthenticated)
    } else {
        state.admin.role_of(key.as_bytes(), &state.auth)
    };
    match role {
        Ok(Role::Open) => see_other(&root_of(path), &next),
        Ok(role) => {
            // A session the browser may already have ends: a sign-in
            // always starts a fresh id (no fixation).
            for old in session_cookies(&headers) {
                state.admin.sessions.end(old);
            }
            let id = state.admin.sessions.start(role);
            let mut response = see_other(&root_of(path), &next);
            response.headers_mut().insert(
                header::SET_COOKIE,
                session_cookie(
                    &id,
                    state.admin.sessions.lifetime(),
                    state.admin.secure_cookies(),
                ),
            );
            response
        }
        Err(Refusal::Unbound) => sign_in_page(
            &state,
            StatusCode::FORBIDDEN,
            path,
            &next,
            None,
            Some(UNBOUND),
        ),
        Err(_) => sign_in_page(
            &state,
            StatusCode::UNAUTHORIZED,
            path,
            &next,
            None,
            Some("That key is not accepted here. Check it and try again."),
        ),
    }
}

/// `POST /_mock/ui/sign-out`: ends the browser's session, tells it to
/// forget the cookie, and 303 to the sign-in page.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/_mock/ui/sign-out",
        operation_id = "consoleSignOut",
        tag = "console"
    )
)]
pub(crate) async fn sign_out(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let path = uri.path();
    if let Err(page) = form(&state, &headers, body, path).await {
        return page;
    }
    for id in session_cookies(&headers) {
        state.admin.sessions.end(id);
    }
    let mut response = see_other(&root_of(path), "_mock/ui/sign-in?signed-out=1");
    response.headers_mut().insert(
        header::SET_COOKIE,
        ended_session_cookie(state.admin.secure_cookies()),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sign_in_only_ever_leads_into_the_console() {
        for kept in [
            "_mock/ui/",
            "_mock/ui/requests",
            "_mock/ui/transactions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            "_mock/ui/?status=FAILED&reference=INV%2F1",
        ] {
            assert_eq!(console_target(kept), kept);
        }
        for refused in [
            "",
            "https://evil.example/",
            "//evil.example/",
            "/_mock/ui/",
            "_mock/ui//evil.example",
            "_mock/ui/../../reset",
            "_mock/ui/./x",
            "_mock/reset",
            "_mock/ui/\\evil",
            "_mock/ui/a b",
            "_mock/ui/sign-in",
            "_mock/ui/sign-in?next=x",
            "_mock/ui/\u{e9}",
        ] {
            assert_eq!(console_target(refused), HOME, "{refused}");
        }
        let long = format!("_mock/ui/{}", "a".repeat(MAX_NEXT));
        assert_eq!(console_target(&long), HOME);
    }

    #[test]
    fn lifetimes_read_as_words() {
        use std::time::Duration;
        assert_eq!(shown_lifetime(Duration::from_secs(12 * 3600)), "12 hours");
        assert_eq!(shown_lifetime(Duration::from_secs(3600)), "1 hour");
        assert_eq!(shown_lifetime(Duration::from_secs(90 * 60)), "1h 30m");
    }

    #[test]
    fn a_refused_page_knows_its_way_back() {
        let uri: Uri = "/_mock/ui/transactions/x?status=FAILED"
            .parse()
            .expect("uri");
        assert_eq!(target_of(&uri), "_mock/ui/transactions/x?status=FAILED");
    }
}
