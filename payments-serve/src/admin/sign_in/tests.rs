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
