//! The console's way in and out when the mock has an admin key (CONTRACT
//! section 18): a sign-in page that asks for a key once (a plain form, no
//! script), a session cookie from then on, and sign-out; and the pages a
//! refused console request gets.
//!
//! The key typed in is compared like a bearer key (every admin and API
//! key, in constant time) and then forgotten: the cookie carries a random
//! session id ([`crate::admin::Sessions`]), never the key, and
//! no page ever shows a key or a session id.

use askama::Template;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;

use super::controls::form;
use super::{console_page, viewed_error};
use crate::admin::{ended_session_cookie, session_cookie, session_cookies};
use crate::domain::access::{Refusal, Role, Viewer};
use crate::forms::{NO_FIELDS, SIGN_IN_FIELDS};
use crate::state::AppState;
use crate::web::html::{render, root_of};
use payments_serve::admin::{
    bearer_challenge, param, query_pairs, see_other, shown_lifetime, target_of,
};

/// Where the sign-in page is.
const PATH: &str = "/_mock/ui/sign-in";
/// Where a sign-in goes when it is not told where (relative to the root).
const HOME: &str = "_mock/ui/";

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
    bearer_challenge(console_page(render(
        status,
        &SignInPage {
            root: root_of(path),
            open: !state.admin.is_enabled(),
            next: console_target(next),
            notice,
            problem,
            lifetime: shown_lifetime(state.admin.sessions.lifetime()),
        },
    )))
}

/// `next` when it is a console address relative to the server's root
/// (`_mock/ui/…`), else the console's home.
fn console_target(next: &str) -> &str {
    payments_serve::admin::console_target(next, HOME, PATH)
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
    let pairs = match form(&state, &headers, body, path, SIGN_IN_FIELDS).await {
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
    if let Err(page) = form(&state, &headers, body, path, NO_FIELDS).await {
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
    fn a_sign_in_only_ever_leads_into_the_mocks_console() {
        assert_eq!(console_target("_mock/ui/requests"), "_mock/ui/requests");
        for refused in ["https://evil.example/", "_mock/ui/sign-in", "_proxy/ui/"] {
            assert_eq!(console_target(refused), HOME, "{refused}");
        }
    }
}
