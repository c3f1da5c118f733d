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
mod tests {
    use std::time::Duration;

    use axum::http::HeaderValue;

    use super::*;
    use crate::admin::{AdminKey, any_matches, read_form};

    /// A console with one admin key and `sk_reader`, a key that opens
    /// nothing.
    struct Test {
        keys: Vec<AdminKey>,
        sessions: Sessions<u8>,
        secure: bool,
    }

    impl SignIn for Test {
        type Role = u8;
        const CONSOLE: Console = Console {
            brand: "test console",
            home: "_test/ui/",
            server: "tester",
            key_label: "Test key",
            lead: "Behind a key; enter the admin key.",
            cookie: SessionCookie::new("test_session"),
        };

        fn is_open(&self) -> bool {
            self.keys.is_empty()
        }

        fn sessions(&self) -> &Sessions<u8> {
            &self.sessions
        }

        fn secure_cookies(&self) -> bool {
            self.secure
        }

        fn role_of(&self, key: &str) -> Result<u8, Refused> {
            if key == "sk_reader" {
                return Err(Refused {
                    status: StatusCode::FORBIDDEN,
                    problem: "A reader's key opens nothing here.",
                });
            }
            any_matches(&self.keys, key.as_bytes())
                .then_some(7)
                .ok_or(Refused::NOT_ACCEPTED)
        }

        async fn read_form(
            &self,
            form: Form,
            headers: &HeaderMap,
            body: Body,
            path: &str,
        ) -> Result<Vec<(String, String)>, Response> {
            let limit = if form == Form::SignIn { 256 } else { 0 };
            read_form(headers, body, limit)
                .await
                .map_err(|refusal| page(self, refusal.status(), path, "", None, Some("refused")))
        }
    }

    fn keyed() -> Test {
        Test {
            keys: vec!["adm_test".parse().expect("a key")],
            sessions: Sessions::new(Duration::from_secs(3600)),
            secure: false,
        }
    }

    async fn body(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        String::from_utf8(bytes.to_vec()).expect("UTF-8")
    }

    async fn post(server: &Test, form: &str, cookie: Option<&str>) -> Response {
        let mut headers = HeaderMap::new();
        if let Some(c) = cookie {
            headers.insert(header::COOKIE, HeaderValue::from_str(c).expect("ascii"));
        }
        submit(
            server,
            "/_test/ui/sign-in",
            &headers,
            Body::from(form.to_owned()),
        )
        .await
    }

    #[tokio::test]
    async fn the_page_is_the_servers_words_in_one_template() {
        let server = keyed();
        let shown = show(
            &server,
            "/_test/ui/sign-in",
            Some("next=_test/ui/list%3Fa%3D1&signed-out=1"),
        );
        assert_eq!(shown.status(), StatusCode::OK);
        assert!(shown.headers().get(header::WWW_AUTHENTICATE).is_none());
        let csp = shown.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .expect("ascii");
        assert!(csp.contains("form-action 'self'"), "{csp}");
        let html = body(shown).await;
        for said in [
            "<title>Sign in · test console</title>",
            r#"<link rel="stylesheet" href="../../_test/ui/static/console.css">"#,
            r#"<p class="brand">test console</p>"#,
            r#"<p class="lead">Behind a key; enter the admin key.</p>"#,
            r#"<p class="notice" role="status">You are signed out.</p>"#,
            r#"<form method="post" action="../../_test/ui/sign-in">"#,
            r#"<input type="hidden" name="next" value="_test/ui/list?a=1">"#,
            r#"<label for="key">Test key</label>"#,
            "for up to 1 hour, until you sign out, or until the tester restarts.",
        ] {
            assert!(html.contains(said), "{said}\n{html}");
        }

        let open = Test {
            keys: Vec::new(),
            ..keyed()
        };
        let html = body(show(&open, "/_test/ui/sign-in", Some("next=//evil"))).await;
        assert!(html.contains(
            "This tester has no admin key: its console is open to everyone who can reach it."
        ));
        assert!(html.contains(r#"href="../../_test/ui/">Open the console"#));
        assert!(!html.contains("<form"));
    }

    #[tokio::test]
    async fn a_key_opens_a_fresh_session_and_leads_only_into_the_console() {
        let server = keyed();
        let first = post(&server, "key=adm_test&next=_test/ui/list", None).await;
        assert_eq!(first.status(), StatusCode::SEE_OTHER);
        assert_eq!(first.headers()[header::LOCATION], "../../_test/ui/list");
        let set = first.headers()[header::SET_COOKIE].to_str().expect("ascii");
        assert!(set.starts_with("test_session=") && !set.contains("Secure"));
        let id = set["test_session=".len()..][..64].to_owned();
        assert_eq!(server.sessions.find(&id), Some(7));

        // A second sign-in from the same browser ends the first session.
        let cookie = format!("test_session={id}");
        let second = post(
            &server,
            "key=adm_test&next=https://evil.example/",
            Some(&cookie),
        )
        .await;
        assert_eq!(second.headers()[header::LOCATION], "../../_test/ui/");
        assert_eq!(server.sessions.find(&id), None, "no fixation");
        assert_eq!(server.sessions.len(), 1);

        let secure = Test {
            secure: true,
            ..keyed()
        };
        let set = post(&secure, "key=adm_test", None).await;
        assert!(
            set.headers()[header::SET_COOKIE]
                .to_str()
                .expect("ascii")
                .ends_with("; Secure")
        );
    }

    #[tokio::test]
    async fn a_refused_key_is_the_form_again_and_never_shown() {
        let server = keyed();
        for (form, status, problem) in [
            (
                "key=adm_wrong&next=_test/ui/x",
                401,
                "That key is not accepted here.",
            ),
            (
                "key=&next=_test/ui/x",
                401,
                "That key is not accepted here.",
            ),
            ("next=_test/ui/x", 401, "That key is not accepted here."),
            (
                "key=sk_reader",
                403,
                "A reader&#39;s key opens nothing here.",
            ),
        ] {
            let answer = post(&server, form, None).await;
            assert_eq!(answer.status().as_u16(), status, "{form}");
            assert!(answer.headers().get(header::SET_COOKIE).is_none());
            assert_eq!(
                answer.headers().get(header::WWW_AUTHENTICATE).is_some(),
                status == 401
            );
            let html = body(answer).await;
            assert!(html.contains(problem), "{form}: {html}");
            assert!(!html.contains("adm_wrong") && !html.contains("sk_reader"));
        }
        assert!(server.sessions.is_empty());
        // The server's own form check answers first.
        let refused = post(&server, &"k".repeat(300), None).await;
        assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(body(refused).await.contains("refused"));

        // Without an admin key any form leads into the console.
        let open = Test {
            keys: Vec::new(),
            ..keyed()
        };
        let answer = post(&open, "", None).await;
        assert_eq!(answer.status(), StatusCode::SEE_OTHER);
        assert!(answer.headers().get(header::SET_COOKIE).is_none());
    }

    #[tokio::test]
    async fn sign_out_ends_the_session_and_the_cookie() {
        let server = keyed();
        let id = server.sessions.start(7);
        let mut headers = HeaderMap::new();
        let cookie = format!("test_session={}", id.as_str());
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&cookie).expect("ascii"),
        );
        let out = sign_out(&server, "/_test/ui/sign-out", &headers, Body::empty()).await;
        assert_eq!(out.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            out.headers()[header::LOCATION],
            "../../_test/ui/sign-in?signed-out=1"
        );
        assert_eq!(
            out.headers()[header::SET_COOKIE],
            "test_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        );
        assert_eq!(server.sessions.find(id.as_str()), None);
        // A sign-out form with a field is refused by the server's check.
        let refused = sign_out(&server, "/_test/ui/sign-out", &headers, Body::from("x")).await;
        assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test]
    async fn a_refused_console_page_is_the_sign_in_page_leading_back() {
        let server = keyed();
        let uri: Uri = "/_test/ui/list?a=%3Cb%3E".parse().expect("a URI");
        let ended = required(&server, &uri, true);
        assert_eq!(ended.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(ended.headers()[header::WWW_AUTHENTICATE], "Bearer");
        assert!(
            ended.headers()[header::SET_COOKIE]
                .to_str()
                .expect("ascii")
                .ends_with("Max-Age=0")
        );
        let html = body(ended).await;
        assert!(html.contains(
            "Your sign-in has ended (it expired, you signed out, or the tester restarted): sign in again."
        ));
        assert!(
            html.contains(r#"value="_test/ui/list?a=%3Cb%3E""#),
            "{html}"
        );
        assert!(html.contains(r#"href="../../_test/ui/static/console.css""#));

        let fresh = required(&server, &uri, false);
        assert!(fresh.headers().get(header::SET_COOKIE).is_none());
        assert!(!body(fresh).await.contains("has ended"));

        let bearer = refused(&server, &uri, Refused::BEARER_NOT_ACCEPTED);
        assert_eq!(bearer.status(), StatusCode::UNAUTHORIZED);
        assert!(
            body(bearer)
                .await
                .contains("The key in the Authorization header is not accepted here.")
        );
        let forbidden = refused(
            &server,
            &uri,
            Refused {
                status: StatusCode::FORBIDDEN,
                problem: "no",
            },
        );
        assert_eq!(forbidden.status(), StatusCode::FORBIDDEN);
        assert!(forbidden.headers().get(header::WWW_AUTHENTICATE).is_none());
    }
}
