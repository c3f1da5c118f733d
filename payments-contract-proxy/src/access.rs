//! The proxy's own pages behind `--admin-key` (CONTRACT section 18): with
//! an admin key, `/_proxy/` and `/metrics` want `Authorization: Bearer
//! KEY`; the console (and the summary and coverage it links to) also
//! takes a session of its sign-in page, kept in the cookie
//! `payments_proxy_session`. Keys are
//! compared in constant time and never shown or logged; the cookie
//! carries a random session id, never the key.
//!
//! `/api/` never comes here: it is the application's exchange with the
//! upstream (its `Authorization` is the upstream's business), and
//! [`crate::dispatch`] sends it straight to the forwarder. Without an
//! admin key everything is open, as on a developer's loopback, to a
//! request whose `Host` is an IP address or `localhost`: another name may
//! be a web page elsewhere reaching the proxy through DNS rebinding
//! ([`payments_serve::admin::names_this_server`]), and is refused (403).

use axum::body::Body;
use axum::extract::{RawQuery, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use payments_serve::admin::sign_in::{self, Console, Form, Refused, SignIn};
use payments_serve::admin::{
    FormRefusal, SessionCookie, Sessions, any_matches, bearer_challenge, bearer_token, read_form,
};
use payments_serve::{ApiError, ErrorCode};

use crate::state::ProxyState;

/// Where the sign-in page is.
const SIGN_IN: &str = "/_proxy/ui/sign-in";
/// The most a sign-in or sign-out form may carry.
const FORM_LIMIT: usize = 8 * 1024;

/// The proxy's console as its sign-in page names it; its session cookie
/// has another name than the mock's, so one browser may be signed in to
/// both on one host.
const CONSOLE: Console = Console {
    brand: "payments contract proxy",
    home: "_proxy/ui/",
    server: "proxy",
    key_label: "Admin key",
    lead: "This proxy's console, summary and metrics are behind a key. Enter the admin key the proxy was started with.",
    cookie: SessionCookie::new("payments_proxy_session"),
};

/// The request `headers` going upstream without the proxy's own console
/// session: a browser signed in to the console sends it with every request
/// to the host, `/api/` too, and it is a credential of this proxy, never
/// the service's. Other cookies go on as they came.
pub(crate) fn without_own_session(headers: &mut axum::http::HeaderMap) {
    use axum::http::{HeaderValue, header};
    if !headers.contains_key(header::COOKIE) {
        return;
    }
    let kept: Vec<HeaderValue> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| match value.to_str() {
            Ok(text) => match CONSOLE.cookie.removed(text)? {
                std::borrow::Cow::Borrowed(_) => Some(value.clone()),
                std::borrow::Cow::Owned(rest) => HeaderValue::from_str(&rest).ok(),
            },
            Err(_) => Some(value.clone()),
        })
        .collect();
    headers.remove(header::COOKIE);
    for value in kept {
        headers.append(header::COOKIE, value);
    }
}

/// Whether a console request came with a session (the console then offers
/// sign-out): set by [`admit`], `false` when it is not there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SignedIn(pub bool);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for SignedIn {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.get::<Self>().copied().unwrap_or_default())
    }
}

/// Which part of the proxy's own routes a path is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    /// Open: the sign-in and sign-out, the stylesheet and script the
    /// sign-in page is drawn with, unknown paths (404).
    Open,
    /// The console's pages: a key or a session; refused with the sign-in
    /// page.
    Console,
    /// `/_proxy/report` and `/_proxy/coverage`: a key or a session (the
    /// console links to them); refused with the envelope.
    Summary,
    /// `/metrics`, `/_proxy/exchanges` and anything else under `/_proxy`:
    /// a key only.
    Keyed,
}

const OPEN_PATHS: [&str; 4] = [
    SIGN_IN,
    "/_proxy/ui/sign-out",
    "/_proxy/ui/static/console.css",
    "/_proxy/ui/static/console.js",
];

fn area(path: &str) -> Area {
    if OPEN_PATHS.contains(&path) {
        Area::Open
    } else if path == "/_proxy/ui" || path.starts_with("/_proxy/ui/") {
        Area::Console
    } else if path == "/_proxy/report" || path == "/_proxy/coverage" {
        Area::Summary
    } else if path == "/metrics" || path.starts_with("/_proxy") {
        // `/_proxy/…` and `/_proxyanything`: every spelling the router
        // might ever serve under the prefix is behind the key.
        Area::Keyed
    } else {
        Area::Open
    }
}

/// The envelope of a request without an accepted key: 401 with
/// `WWW-Authenticate: Bearer`.
fn unauthorized() -> Response {
    bearer_challenge(
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "missing or invalid admin key: send Authorization: Bearer <key>",
        )
        .into_response(),
    )
}

/// The refusal of an open proxy's request for its own routes whose `Host`
/// is not an IP address or `localhost`: a web page elsewhere may be
/// reaching it through DNS rebinding.
fn foreign_host(headers: &HeaderMap) -> Response {
    payments_serve::admin::foreign_host(
        headers,
        "proxy",
        "its own pages answer",
        "an IP address, localhost or the name given to --host",
        "or start the proxy with --admin-key",
    )
    .into_response()
}

/// Lets a request for the proxy's own routes through, or answers it (see
/// the module's documentation).
pub(crate) async fn admit(
    State(proxy): State<ProxyState>,
    mut req: Request,
    next: Next,
) -> Response {
    let area = area(req.uri().path());
    if proxy.config.admin_keys.is_empty() {
        // Open to whoever reaches it, but only by a name DNS rebinding
        // cannot give another site's page: an address or `localhost`.
        let own = proxy
            .config
            .host_name
            .as_deref()
            .map(|name| format!("http://{name}"));
        if area != Area::Open
            && !payments_serve::admin::names_this_server(req.headers(), own.as_deref())
        {
            return foreign_host(req.headers());
        }
        return next.run(req).await;
    }
    if area == Area::Open {
        return next.run(req).await;
    }
    if let Some(value) = req.headers().get(header::AUTHORIZATION) {
        let accepted = bearer_token(value.as_bytes())
            .is_some_and(|token| any_matches(&proxy.config.admin_keys, token));
        return if accepted {
            next.run(req).await
        } else if area == Area::Console {
            sign_in::refused(&proxy, req.uri(), Refused::BEARER_NOT_ACCEPTED)
        } else {
            unauthorized()
        };
    }
    if area == Area::Keyed {
        return unauthorized();
    }
    let mut presented = false;
    let found = CONSOLE.cookie.read(req.headers()).any(|id| {
        presented = true;
        proxy.sessions.find(id).is_some()
    });
    if found {
        req.extensions_mut().insert(SignedIn(true));
        return next.run(req).await;
    }
    if area == Area::Console {
        return sign_in::required(&proxy, req.uri(), presented);
    }
    let mut response = unauthorized();
    if presented {
        response.headers_mut().insert(
            header::SET_COOKIE,
            CONSOLE.cookie.ended(proxy.secure_cookies()),
        );
    }
    response
}

/// The proxy's console behind the sign-in: admin keys only, each session
/// grants the same (`()`).
impl SignIn for ProxyState {
    type Role = ();
    const CONSOLE: Console = CONSOLE;

    fn is_open(&self) -> bool {
        self.config.admin_keys.is_empty()
    }

    fn sessions(&self) -> &Sessions<()> {
        &self.sessions
    }

    /// The listener speaks TLS.
    fn secure_cookies(&self) -> bool {
        self.config.tls.is_some()
    }

    fn role_of(&self, key: &str) -> Result<(), Refused> {
        if any_matches(&self.config.admin_keys, key.as_bytes()) {
            Ok(())
        } else {
            Err(Refused::NOT_ACCEPTED)
        }
    }

    /// Reads a sign-in or sign-out form (see [`read_form`]), any fields,
    /// at most [`FORM_LIMIT`]; a refusal is the sign-in page saying why.
    async fn read_form(
        &self,
        _: Form,
        headers: &HeaderMap,
        body: Body,
        path: &str,
    ) -> Result<Vec<(String, String)>, Response> {
        read_form(headers, body, FORM_LIMIT).await.map_err(|refusal| {
            let problem = match refusal {
                FormRefusal::CrossSite => {
                    "This form was posted from another site's page; open the console and sign in there."
                }
                FormRefusal::NotAForm => {
                    "Submit the sign-in form (application/x-www-form-urlencoded)."
                }
                FormRefusal::TooLarge => "The submitted form is larger than a sign-in form can be.",
            };
            sign_in::page(self, refusal.status(), path, CONSOLE.home, None, Some(problem))
        })
    }
}

/// `GET /_proxy/ui/sign-in`: the form (or, without an admin key, a link to
/// the open console).
pub(crate) async fn page(
    State(proxy): State<ProxyState>,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Response {
    sign_in::show(&proxy, uri.path(), query.as_deref())
}

/// `POST /_proxy/ui/sign-in` with `key` (and `next`): a session and 303 to
/// `next`, or the form again with 401. The key is never shown back.
pub(crate) async fn submit(
    State(proxy): State<ProxyState>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    sign_in::submit(&proxy, uri.path(), &headers, body).await
}

/// `POST /_proxy/ui/sign-out`: ends the browser's session, tells it to
/// forget the cookie, and 303 to the sign-in page.
pub(crate) async fn sign_out(
    State(proxy): State<ProxyState>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    sign_in::sign_out(&proxy, uri.path(), &headers, body).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_own_route_has_its_area() {
        for open in [
            "/_proxy/ui/sign-in",
            "/_proxy/ui/sign-out",
            "/_proxy/ui/static/console.css",
            "/_proxy/ui/static/console.js",
            "/",
            "/favicon.ico",
            "/_mock/health",
        ] {
            assert_eq!(area(open), Area::Open, "{open}");
        }
        for console in [
            "/_proxy/ui",
            "/_proxy/ui/",
            "/_proxy/ui/exchanges/3",
            "/_proxy/ui/exchanges/feed",
            "/_proxy/ui/sign-in/",
            "/_proxy/ui/static/other.css",
        ] {
            assert_eq!(area(console), Area::Console, "{console}");
        }
        assert_eq!(area("/_proxy/report"), Area::Summary);
        for keyed in [
            "/metrics",
            "/_proxy/exchanges",
            "/_proxy",
            "/_proxy/",
            "/_proxy/report/",
            "/_proxyx",
        ] {
            assert_eq!(area(keyed), Area::Keyed, "{keyed}");
        }
    }

    #[test]
    fn the_coverage_is_the_summarys_area_and_its_page_the_consoles() {
        assert_eq!(area("/_proxy/coverage"), Area::Summary);
        assert_eq!(area("/_proxy/ui/coverage"), Area::Console);
        assert_eq!(area("/_proxy/coverage/"), Area::Keyed);
    }
}
