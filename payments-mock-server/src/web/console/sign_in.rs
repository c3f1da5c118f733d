//! The console's way in and out when the mock has an admin key (CONTRACT
//! section 18): a sign-in page that asks for a key once (a plain form, no
//! script), a session cookie from then on, and sign-out; and the pages a
//! refused console request gets.
//!
//! The key typed in is compared like a bearer key (every admin and API
//! key, in constant time) and then forgotten: the cookie carries a random
//! session id ([`crate::admin::Sessions`]), never the key, and
//! no page ever shows a key or a session id.

use axum::body::Body;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use payments_serve::admin::sign_in::{self as flow, Console, Form, Refused, SignIn};

use super::{form, viewed_error};
use crate::admin::{COOKIE, Sessions};
use crate::domain::access::{Refusal, Role, Viewer};
use crate::forms::{NO_FIELDS, SIGN_IN_FIELDS};
use crate::state::{AppState, Here};

/// Where a sign-in goes when it is not told where (relative to the root).
const HOME: &str = "_mock/ui/";

/// The mock's console as its sign-in page names it.
const CONSOLE: Console = Console {
    brand: "payments mock console",
    home: HOME,
    server: "mock",
    key_label: "Key",
    lead: "This mock's console is behind a key. Enter the admin key, or your merchant's API key to see your own transactions and requests.",
    cookie: COOKIE,
};

/// An API key bound to no merchant, typed in or in the header: 403.
const UNBOUND: Refused = Refused {
    status: StatusCode::FORBIDDEN,
    problem: "This API key is bound to no merchant, so the console has nothing of its own to show it: use the admin key, or a key bound to a merchant.",
};

/// The mock's console behind the sign-in: an admin key, or a merchant's
/// API key, whose session sees that merchant's part only.
impl SignIn for AppState {
    type Role = Role;
    const CONSOLE: Console = CONSOLE;

    fn is_open(&self) -> bool {
        !self.admin.is_enabled()
    }

    fn sessions(&self) -> &Sessions {
        &self.admin.sessions
    }

    fn secure_cookies(&self) -> bool {
        self.admin.secure_cookies()
    }

    /// Every admin and API key compared
    /// ([`crate::admin::AdminAccess::role_of`]): 401 for a key that is
    /// neither, 403 for an API key bound to no merchant.
    fn role_of(&self, key: &str) -> Result<Role, Refused> {
        self.admin
            .role_of(key.as_bytes(), &self.auth)
            .map_err(|refusal| match refusal {
                Refusal::Unbound => UNBOUND,
                _ => Refused::NOT_ACCEPTED,
            })
    }

    /// The console's strict forms (see [`form::read`]): the sign-in's
    /// `key` and `next`, the sign-out's nothing.
    async fn read_form(
        &self,
        which: Form,
        headers: &HeaderMap,
        body: Body,
        path: &str,
    ) -> Result<Vec<(String, String)>, Response> {
        let fields = match which {
            Form::SignIn => SIGN_IN_FIELDS,
            Form::SignOut => NO_FIELDS,
        };
        // Whoever posts the sign-in or sign-out form is not known here.
        form::read(self, None, headers, body, path, fields).await
    }
}

/// The answer to a console request without a key or a valid session: 401
/// and the sign-in page, which brings the browser back here after it.
/// `ended`: the browser sent a session cookie that is no longer (or never
/// was) valid; it is told to forget it.
pub(crate) fn required(state: &AppState, uri: &Uri, ended: bool) -> Response {
    flow::required(state, uri, ended)
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
    match refusal {
        Refusal::Unauthenticated => flow::refused(state, uri, Refused::BEARER_NOT_ACCEPTED),
        Refusal::Unbound => flow::refused(state, uri, UNBOUND),
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
pub(crate) async fn page(Here(state): Here, uri: Uri, RawQuery(query): RawQuery) -> Response {
    flow::show(&state, uri.path(), query.as_deref())
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
    Here(state): Here,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    flow::submit(&state, uri.path(), &headers, body).await
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
    Here(state): Here,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    flow::sign_out(&state, uri.path(), &headers, body).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn console_target(next: &str) -> &str {
        flow::target::<AppState>(next)
    }

    #[test]
    fn a_sign_in_only_ever_leads_into_the_mocks_console() {
        assert_eq!(console_target("_mock/ui/requests"), "_mock/ui/requests");
        for refused in ["https://evil.example/", "_mock/ui/sign-in", "_proxy/ui/"] {
            assert_eq!(console_target(refused), HOME, "{refused}");
        }
    }
}
