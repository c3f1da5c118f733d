//! The consoles' sign-in (CONTRACT section 18), written once for both
//! servers: the page that asks for a key (a plain form, no script), its
//! submit (the key to a role, a fresh session, `303 See Other` to a safe
//! `next`), sign-out, and the sign-in page a refused console request gets.
//!
//! What differs between the mock's console and the proxy's is data, a
//! [`Console`] (the brand, the console's address, what the key is called,
//! the lead, what restarts, the session cookie), and what a server tells
//! through [`SignIn`]: whether it has an admin key, its sessions, the role
//! a key typed in grants (its own rules), and how it reads its forms (each
//! server its own limits and its own words for a refusal).
//!
//! The key typed in is compared by the server and then forgotten: the
//! cookie carries a random session id ([`Sessions`]), never the key, and
//! no page ever shows a key or a session id.
//!
//! # Example
//!
//! A console with one admin key, signed in to:
//!
//! ```
//! use std::time::Duration;
//! use axum::body::Body;
//! use axum::http::{HeaderMap, StatusCode, header};
//! use axum::response::Response;
//! use payments_serve::admin::sign_in::{self, Console, Form, Refused, SignIn};
//! use payments_serve::admin::{AdminKey, SessionCookie, Sessions, any_matches, read_form};
//!
//! struct Example {
//!     keys: Vec<AdminKey>,
//!     sessions: Sessions<()>,
//! }
//!
//! impl SignIn for Example {
//!     type Role = ();
//!     const CONSOLE: Console = Console {
//!         brand: "example console",
//!         home: "_example/ui/",
//!         server: "example",
//!         key_label: "Admin key",
//!         lead: "Enter the admin key.",
//!         cookie: SessionCookie::new("example_session"),
//!     };
//!     fn is_open(&self) -> bool {
//!         self.keys.is_empty()
//!     }
//!     fn sessions(&self) -> &Sessions<()> {
//!         &self.sessions
//!     }
//!     fn secure_cookies(&self) -> bool {
//!         false
//!     }
//!     fn role_of(&self, key: &str) -> Result<(), Refused> {
//!         any_matches(&self.keys, key.as_bytes()).then_some(()).ok_or(Refused::NOT_ACCEPTED)
//!     }
//!     async fn read_form(
//!         &self,
//!         _: Form,
//!         headers: &HeaderMap,
//!         body: Body,
//!         path: &str,
//!     ) -> Result<Vec<(String, String)>, Response> {
//!         read_form(headers, body, 8 * 1024).await.map_err(|refusal| {
//!             sign_in::page(self, refusal.status(), path, "", None, Some("Not a sign-in form."))
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let example = Example {
//!     keys: vec!["adm_4f9c2e".parse().expect("a key")],
//!     sessions: Sessions::new(Duration::from_secs(3600)),
//! };
//! let form = sign_in::show(&example, "/_example/ui/sign-in", Some("next=_example/ui/x"));
//! assert_eq!(form.status(), StatusCode::OK);
//!
//! let body = Body::from("key=adm_4f9c2e&next=_example/ui/x");
//! let signed_in = sign_in::submit(&example, "/_example/ui/sign-in", &HeaderMap::new(), body).await;
//! assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
//! assert_eq!(signed_in.headers()[header::LOCATION], "../../_example/ui/x");
//! assert_eq!(example.sessions.len(), 1);
//!
//! let body = Body::from("key=adm_wrong");
//! let refused = sign_in::submit(&example, "/_example/ui/sign-in", &HeaderMap::new(), body).await;
//! assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
//! # });
//! ```

use std::future::Future;

use askama::Template;
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;

use super::{
    SessionCookie, Sessions, bearer_challenge, console_target, param, query_pairs, see_other,
    shown_lifetime, target_of,
};
use crate::pages::{console_page, render, root_of};

/// What one server's console and its sign-in page are called and where
/// they are: the differences between the mock's page and the proxy's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Console {
    /// The name in the page's title and bar: `payments mock console`.
    pub brand: &'static str,
    /// The console's address relative to the server's root, with its
    /// slash: `_mock/ui/`. The sign-in page is `sign-in` there, sign-out
    /// `sign-out`, the stylesheet `static/console.css`.
    pub home: &'static str,
    /// What the server is called in a sentence (`This mock has no admin
    /// key`, `until the mock restarts`): `mock`.
    pub server: &'static str,
    /// The key field's label: `Admin key`, or `Key` where other keys sign
    /// in too.
    pub key_label: &'static str,
    /// The paragraph above the form: what is behind the key, which key to
    /// enter.
    pub lead: &'static str,
    /// The session cookie (each server its own name, so one browser may
    /// be signed in to both on one host).
    pub cookie: SessionCookie,
}

/// Which of the console's forms a server is asked to read: each may have
/// its own fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `POST …/sign-in`: `key` and `next`.
    SignIn,
    /// `POST …/sign-out`: no field.
    SignOut,
}

/// Why a key opens nothing: the status the sign-in page is answered with
/// and what it says (never the key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// `401`, or `403` for a key that is known but opens no console.
    pub status: StatusCode,
    /// The page's problem, a sentence.
    pub problem: &'static str,
}

impl Refused {
    /// A key typed in that is none of the server's (or none at all): 401.
    pub const NOT_ACCEPTED: Refused = Refused {
        status: StatusCode::UNAUTHORIZED,
        problem: "That key is not accepted here. Check it and try again.",
    };

    /// An `Authorization: Bearer` key that is none of the server's, on a
    /// console page: 401.
    pub const BEARER_NOT_ACCEPTED: Refused = Refused {
        status: StatusCode::UNAUTHORIZED,
        problem: "The key in the Authorization header is not accepted here.",
    };
}

/// A server whose console is behind this sign-in: its words and places,
/// and what only it knows.
pub trait SignIn: Sync {
    /// What a session grants: the mock's role, `()` for an admin-only
    /// console.
    type Role: Copy + Send;

    /// The console's words and places.
    const CONSOLE: Console;

    /// Whether the console is open (no admin key): the sign-in page then
    /// says so and its form leads into the console whatever it carries.
    fn is_open(&self) -> bool;

    /// The console's open sessions.
    fn sessions(&self) -> &Sessions<Self::Role>;

    /// Whether session cookies are marked `Secure` (the listener speaks
    /// TLS).
    fn secure_cookies(&self) -> bool;

    /// The role a key typed on the form grants (never empty: an empty key
    /// is refused before), compared in constant time; or why it opens
    /// nothing.
    ///
    /// # Errors
    ///
    /// The refusal the page shows ([`Refused::NOT_ACCEPTED`] for a key the
    /// server does not know).
    fn role_of(&self, key: &str) -> Result<Self::Role, Refused>;

    /// Reads a posted sign-in or sign-out form at `path` (checked as the
    /// server checks its console's forms, with
    /// [`read_form`](super::read_form) and maybe more): its pairs, or the
    /// page that answers a refused one.
    fn read_form(
        &self,
        form: Form,
        headers: &HeaderMap,
        body: Body,
        path: &str,
    ) -> impl Future<Output = Result<Vec<(String, String)>, Response>> + Send;
}

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignInPage<'a> {
    console: &'a Console,
    root: String,
    /// No admin key: the console is open, there is nothing to sign in to.
    open: bool,
    next: &'a str,
    notice: Option<&'a str>,
    problem: Option<&'a str>,
    lifetime: String,
}

/// `next` when it is an address in `S`'s console (not its sign-in page),
/// else the console's home: see [`console_target`].
pub fn target<S: SignIn>(next: &str) -> &str {
    let home = S::CONSOLE.home;
    console_target(next, home, &format!("{home}sign-in"))
}

/// The sign-in page drawn at `path` (its own, or a refused console
/// page's) with `status`: the form, which leads to `next` (when it is a
/// console address, see [`target`]), with a notice or a problem; or,
/// without an admin key, a link into the open console. A `401` names its
/// scheme (`WWW-Authenticate: Bearer`).
pub fn page<S: SignIn>(
    server: &S,
    status: StatusCode,
    path: &str,
    next: &str,
    notice: Option<&str>,
    problem: Option<&str>,
) -> Response {
    bearer_challenge(console_page(render(
        status,
        &SignInPage {
            console: &S::CONSOLE,
            root: root_of(path),
            open: server.is_open(),
            next: target::<S>(next),
            notice,
            problem,
            lifetime: shown_lifetime(server.sessions().lifetime()),
        },
    )))
}

/// `GET …/sign-in` at `path` with its `query`: the form, leading to the
/// query's `next`, saying `You are signed out.` after a sign-out.
pub fn show<S: SignIn>(server: &S, path: &str, query: Option<&str>) -> Response {
    let pairs = query_pairs(query);
    let next = param(&pairs, "next").unwrap_or(S::CONSOLE.home);
    let notice = param(&pairs, "signed-out").map(|_| "You are signed out.");
    page(server, StatusCode::OK, path, next, notice, None)
}

/// `POST …/sign-in` at `path` with `key` (and `next`): a fresh session
/// granting the key's role and `303` to `next`, or the form again with
/// the refusal's status and problem. The key is never shown back. Without
/// an admin key any form, even an empty one, leads into the console.
pub async fn submit<S: SignIn>(
    server: &S,
    path: &str,
    headers: &HeaderMap,
    body: Body,
) -> Response {
    let pairs = match server.read_form(Form::SignIn, headers, body, path).await {
        Ok(pairs) => pairs,
        Err(page) => return page,
    };
    let next = target::<S>(param(&pairs, "next").unwrap_or(S::CONSOLE.home));
    let root = root_of(path);
    if server.is_open() {
        return see_other(&root, next);
    }
    let role = match param(&pairs, "key") {
        Some(key) => server.role_of(key),
        None => Err(Refused::NOT_ACCEPTED),
    };
    let role = match role {
        Ok(role) => role,
        Err(refused) => {
            return page(
                server,
                refused.status,
                path,
                next,
                None,
                Some(refused.problem),
            );
        }
    };
    // A session the browser may already have ends: a sign-in always
    // starts a fresh id (no fixation).
    let cookie = S::CONSOLE.cookie;
    let sessions = server.sessions();
    for old in cookie.read(headers) {
        sessions.end(old);
    }
    let id = sessions.start(role);
    let mut response = see_other(&root, next);
    response.headers_mut().insert(
        header::SET_COOKIE,
        cookie.set(&id, sessions.lifetime(), server.secure_cookies()),
    );
    response
}

/// `POST …/sign-out` at `path`: ends the browser's session, tells it to
/// forget the cookie, and `303` to the sign-in page (which then says so).
pub async fn sign_out<S: SignIn>(
    server: &S,
    path: &str,
    headers: &HeaderMap,
    body: Body,
) -> Response {
    if let Err(page) = server.read_form(Form::SignOut, headers, body, path).await {
        return page;
    }
    let cookie = S::CONSOLE.cookie;
    for id in cookie.read(headers) {
        server.sessions().end(id);
    }
    let mut response = see_other(
        &root_of(path),
        &format!("{}sign-in?signed-out=1", S::CONSOLE.home),
    );
    response
        .headers_mut()
        .insert(header::SET_COOKIE, cookie.ended(server.secure_cookies()));
    response
}

/// The answer to a console request at `uri` without a key or a valid
/// session: 401 and the sign-in page, which brings the browser back to
/// `uri` after it. `ended`: the browser sent a session cookie that is no
/// longer (or never was) valid; the page says so and the browser is told
/// to forget it.
pub fn required<S: SignIn>(server: &S, uri: &Uri, ended: bool) -> Response {
    let notice = ended.then(|| {
        format!(
            "Your sign-in has ended (it expired, you signed out, or the {} restarted): sign in again.",
            S::CONSOLE.server
        )
    });
    let mut response = page(
        server,
        StatusCode::UNAUTHORIZED,
        uri.path(),
        &target_of(uri),
        notice.as_deref(),
        None,
    );
    if ended {
        response.headers_mut().insert(
            header::SET_COOKIE,
            S::CONSOLE.cookie.ended(server.secure_cookies()),
        );
    }
    response
}

/// The answer to a console request at `uri` whose key opens nothing: the
/// sign-in page with the refusal's status and problem, which brings the
/// browser back to `uri` after a sign-in.
pub fn refused<S: SignIn>(server: &S, uri: &Uri, refused: Refused) -> Response {
    page(
        server,
        refused.status,
        uri.path(),
        &target_of(uri),
        None,
        Some(refused.problem),
    )
}

#[cfg(test)]
mod tests;
