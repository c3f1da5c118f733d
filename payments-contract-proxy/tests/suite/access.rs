//! `--admin-key` (CONTRACT section 18) in front of the proxy's own pages:
//! `/_proxy/ui/`, `/_proxy/report` and `/metrics` want the key (the
//! console and the summary also a session of the sign-in page); `/api/`
//! is the application's, untouched; keys and session ids never show.

use axum::http::Method;
use payments_contract_proxy::{AdminKey, ProxyConfig};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE, LOCATION, ORIGIN, SET_COOKIE};

use crate::rig::{Rig, Setup};
use crate::upstream::Canned;

const KEY: &str = "adm_proxy_0f3e9a7c51";
const OTHER_KEY: &str = "adm_proxy_second_77";

async fn guarded() -> Rig {
    Rig::with(Setup {
        admin_keys: vec![KEY, OTHER_KEY],
        ..Setup::default()
    })
    .await
}

/// Status, `WWW-Authenticate`, `Set-Cookie` and body of a GET with
/// `headers`.
async fn get(rig: &Rig, path: &str, headers: &[(&str, &str)]) -> (u16, String, String, String) {
    let mut request = rig.client.get(rig.url(path));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let reply = request.send().await.expect("the proxy answers");
    let header = |name| {
        reply
            .headers()
            .get(name)
            .map(|v| v.to_str().expect("ASCII").to_owned())
            .unwrap_or_default()
    };
    let (authenticate, cookie) = (header("www-authenticate"), header("set-cookie"));
    let status = reply.status().as_u16();
    (
        status,
        authenticate,
        cookie,
        reply.text().await.expect("a body"),
    )
}

const OWN_ROUTES: [&str; 7] = [
    "/_proxy/ui/",
    "/_proxy/ui",
    "/_proxy/ui/exchanges/1",
    "/_proxy/ui/exchanges/feed?after=0",
    "/_proxy/report",
    "/_proxy/exchanges?after=0",
    "/metrics",
];

#[tokio::test]
async fn without_an_admin_key_the_proxys_own_pages_are_open() {
    let rig = Rig::start().await;
    rig.upstream.push(Canned::raw(200, "seen"));
    let _ = rig
        .send(&Method::GET, "/api/payments/t-1/status", None)
        .await;
    for path in OWN_ROUTES {
        let (status, ..) = get(&rig, path, &[]).await;
        assert!(
            [200, 308].contains(&status),
            "{path} is open without --admin-key: {status}"
        );
    }
    // The sign-in page says there is nothing to sign in to.
    let (status, _, _, body) = get(&rig, "/_proxy/ui/sign-in", &[]).await;
    assert_eq!(status, 200);
    assert!(body.contains("has no admin key"), "{body}");
}

/// DNS rebinding: a web page elsewhere makes its own name resolve to the
/// proxy's loopback address, and the browser sends `Host` (and `Origin`)
/// of that name. An open proxy's own pages answer only an IP address or
/// `localhost` (or the name given to `--host`, below); the application's
/// `/api/` goes on whatever the name.
#[tokio::test]
async fn an_open_proxy_answers_its_own_pages_only_by_an_address_or_localhost() {
    let rig = Rig::start().await;
    rig.upstream.push(Canned::raw(200, "seen"));
    let _ = rig
        .send(&Method::GET, "/api/payments/t-1/status", None)
        .await;
    for path in OWN_ROUTES {
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
        ] {
            let (status, _, _, body) = get(&rig, path, &[("host", host)]).await;
            assert_eq!(status, 403, "{host} {path}: {body}");
            assert!(body.contains("DNS rebinding"), "{body}");
        }
        for host in ["127.0.0.1", "localhost:8080", "[::1]:80", "proxy.localhost"] {
            let (status, _, _, body) = get(&rig, path, &[("host", host)]).await;
            assert!(
                [200, 308].contains(&status),
                "{host} {path}: {status} {body}"
            );
        }
    }
    let (_, _, _, body) = get(&rig, "/_proxy/report", &[("host", "evil.example")]).await;
    assert!(body.contains("its own pages answer only a Host"), "{body}");
    rig.upstream.push(Canned::raw(200, "seen"));
    let reply = rig
        .client
        .get(rig.url("/api/payments/t-1/status"))
        .header("host", "evil.example:8080")
        .send()
        .await
        .expect("the proxy answers");
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.text().await.expect("a body"), "seen");
}

#[tokio::test]
async fn the_admin_key_guards_every_own_route_and_never_the_api() {
    let rig = guarded().await;
    // One exchange, so that /_proxy/ui/exchanges/1 is there to be shown.
    rig.upstream.push(Canned::raw(200, "seen"));
    let _ = rig
        .send(&Method::GET, "/api/payments/t-0/status", None)
        .await;
    let huge = format!("Bearer {}", "k".repeat(16 * 1024));
    let wrong_tokens = [
        "Bearer adm_proxy_0f3e9a7c5",
        "Bearer adm_proxy_0f3e9a7c51x",
        "Bearer ADM_PROXY_0F3E9A7C51",
        "Bearer ",
        "Basic YWRtaW46YWRtX3Byb3h5XzBmM2U5YTdjNTE=",
        "adm_proxy_0f3e9a7c51",
        huge.as_str(),
    ];
    for path in OWN_ROUTES {
        let (status, authenticate, _, body) = get(&rig, path, &[]).await;
        assert_eq!((status, authenticate.as_str()), (401, "Bearer"), "{path}");
        if path.starts_with("/_proxy/ui") {
            assert!(body.contains("id=\"sign-in\""), "{path}: the sign-in page");
        } else {
            assert!(body.contains("\"UNAUTHORIZED\""), "{path}: {body}");
        }
        for wrong in wrong_tokens {
            let (status, authenticate, _, body) =
                get(&rig, path, &[(AUTHORIZATION.as_str(), wrong)]).await;
            assert_eq!(
                (status, authenticate.as_str()),
                (401, "Bearer"),
                "{path} with {wrong:.40}"
            );
            assert!(
                !body.contains("adm_proxy"),
                "{path}: the key echoed: {body}"
            );
            assert!(!body.contains("kkkkkkkk"), "{path}: the key echoed");
        }
        for key in [KEY, OTHER_KEY] {
            let bearer = format!("bearer {key}");
            let (status, ..) = get(&rig, path, &[(AUTHORIZATION.as_str(), &bearer)]).await;
            assert!([200, 308].contains(&status), "{path} with a key: {status}");
        }
    }
    // Anything else under /_proxy is behind the key too, then 404.
    let (status, ..) = get(&rig, "/_proxy/elsewhere", &[]).await;
    assert_eq!(status, 401);
    let bearer = format!("Bearer {KEY}");
    let (status, ..) = get(
        &rig,
        "/_proxy/elsewhere",
        &[(AUTHORIZATION.as_str(), &bearer)],
    )
    .await;
    assert_eq!(status, 404);
    // What the sign-in page needs stays open.
    for open in [
        "/_proxy/ui/sign-in",
        "/_proxy/ui/static/console.css",
        "/_proxy/ui/static/console.js",
    ] {
        let (status, ..) = get(&rig, open, &[]).await;
        assert_eq!(status, 200, "{open}");
    }

    // The application's own exchange is the upstream's business: its
    // Authorization goes on, and no admin key is asked for.
    rig.upstream.push(Canned::raw(200, "seen"));
    let reply = rig
        .client
        .get(rig.url("/api/payments/t-1/status"))
        .header(AUTHORIZATION, "Bearer sk_service_key")
        .send()
        .await
        .expect("forwarded");
    assert_eq!(reply.status(), 200);
    assert_eq!(
        rig.upstream
            .received()
            .last()
            .expect("forwarded")
            .values("authorization"),
        vec![b"Bearer sk_service_key".to_vec()]
    );
}

/// A sign-in form post.
async fn sign_in(rig: &Rig, form: &str, cookie: Option<&str>) -> reqwest::Response {
    let mut request = rig
        .client
        .post(rig.url("/_proxy/ui/sign-in"))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form.to_owned());
    if let Some(cookie) = cookie {
        request = request.header(COOKIE, cookie);
    }
    request.send().await.expect("answered")
}

/// `name=value` of a `Set-Cookie`.
fn cookie_of(reply: &reqwest::Response) -> String {
    let set = reply.headers()[SET_COOKIE].to_str().expect("ASCII");
    set.split(';').next().expect("a pair").to_owned()
}

#[tokio::test]
async fn a_sign_in_keeps_a_session_until_sign_out_and_never_the_key() {
    let rig = guarded().await;
    // A wrong key: the form again, 401, nothing echoed, no cookie.
    let reply = sign_in(&rig, "key=adm_proxy_wrong&next=_proxy/ui/", None).await;
    assert_eq!(reply.status(), 401);
    assert!(reply.headers().get(SET_COOKIE).is_none());
    let body = reply.text().await.expect("a page");
    assert!(body.contains("not accepted"), "{body}");
    assert!(!body.contains("adm_proxy_wrong"), "the key echoed: {body}");
    let reply = sign_in(&rig, "key=&next=_proxy/ui/", None).await;
    assert_eq!(reply.status(), 401, "an empty key");
    let reply = sign_in(&rig, "next=_proxy/ui/", None).await;
    assert_eq!(reply.status(), 401, "no key at all");

    // The right key: a session, back to where the browser was going.
    let reply = sign_in(&rig, &format!("key={KEY}&next=_proxy/ui/exchanges/1"), None).await;
    assert_eq!(reply.status(), 303);
    assert_eq!(reply.headers()[LOCATION], "../../_proxy/ui/exchanges/1");
    let set = reply.headers()[SET_COOKIE]
        .to_str()
        .expect("ASCII")
        .to_owned();
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(set.contains(flag), "{set}");
    }
    assert!(!set.contains("Secure"), "plain HTTP: {set}");
    assert!(!set.contains(KEY), "the cookie carries no key: {set}");
    let cookie = cookie_of(&reply);
    assert!(cookie.starts_with("payments_proxy_session="), "{cookie}");

    // The session opens the console (with sign-out) and the summary, not
    // the metrics (a scraper sends the key).
    let (status, _, _, body) = get(&rig, "/_proxy/ui/", &[(COOKIE.as_str(), &cookie)]).await;
    assert_eq!(status, 200);
    assert!(body.contains("id=\"sign-out\""), "{body}");
    assert!(
        !body.contains(&cookie[23..]),
        "the session id is never shown"
    );
    let (status, ..) = get(&rig, "/_proxy/report", &[(COOKIE.as_str(), &cookie)]).await;
    assert_eq!(status, 200);
    let (status, ..) = get(&rig, "/metrics", &[(COOKIE.as_str(), &cookie)]).await;
    assert_eq!(status, 401);
    // Nor the listing of exchanges (`payments tail --proxy` sends the key).
    let (status, ..) = get(&rig, "/_proxy/exchanges", &[(COOKIE.as_str(), &cookie)]).await;
    assert_eq!(status, 401);
    // A console reached with the key itself offers no sign-out.
    let bearer = format!("Bearer {KEY}");
    let (_, _, _, body) = get(&rig, "/_proxy/ui/", &[(AUTHORIZATION.as_str(), &bearer)]).await;
    assert!(!body.contains("id=\"sign-out\""));

    // A second sign-in from that browser ends the first session.
    let again = sign_in(&rig, &format!("key={OTHER_KEY}"), Some(&cookie)).await;
    assert_eq!(again.status(), 303);
    let second = cookie_of(&again);
    assert_ne!(second, cookie);
    let (status, ..) = get(&rig, "/_proxy/ui/", &[(COOKIE.as_str(), &cookie)]).await;
    assert_eq!(status, 401, "the first session ended at the second sign-in");

    // Sign-out: the session ends, the browser is told to forget it.
    let reply = rig
        .client
        .post(rig.url("/_proxy/ui/sign-out"))
        .header(COOKIE, &second)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .send()
        .await
        .expect("answered");
    assert_eq!(reply.status(), 303);
    assert_eq!(
        reply.headers()[LOCATION],
        "../../_proxy/ui/sign-in?signed-out=1"
    );
    assert!(
        reply.headers()[SET_COOKIE]
            .to_str()
            .expect("ASCII")
            .contains("Max-Age=0")
    );
    let (status, _, set, body) = get(&rig, "/_proxy/ui/", &[(COOKIE.as_str(), &second)]).await;
    assert_eq!(status, 401);
    assert!(body.contains("Your sign-in has ended"), "{body}");
    assert!(
        set.contains("Max-Age=0"),
        "the ended cookie is dropped: {set}"
    );
    let (status, _, set, body) = get(&rig, "/_proxy/report", &[(COOKIE.as_str(), &second)]).await;
    assert_eq!(status, 401);
    assert!(body.contains("\"UNAUTHORIZED\""));
    assert!(set.contains("Max-Age=0"));
}

#[tokio::test]
async fn forged_sessions_and_hostile_forms_are_refused() {
    let rig = guarded().await;
    let forged = [
        "payments_proxy_session=".to_owned(),
        format!("payments_proxy_session={}", "0".repeat(64)),
        format!("payments_proxy_session={}", "a".repeat(8 * 1024)),
        format!("payments_proxy_session={KEY}"),
        "payments_mock_session=00".to_owned(),
        "payments_proxy_session=\u{7f}".to_owned(),
    ];
    for cookie in &forged {
        let Ok(value) = reqwest::header::HeaderValue::from_str(cookie) else {
            continue;
        };
        let reply = rig
            .client
            .get(rig.url("/_proxy/ui/"))
            .header(COOKIE, value)
            .send()
            .await
            .expect("answered");
        assert_eq!(reply.status(), 401, "{cookie:.60}");
        let body = reply.text().await.expect("a page");
        assert!(
            !body.contains(KEY) && !body.contains("aaaaaaaa"),
            "{cookie:.60}"
        );
    }

    // Another site's page posting the sign-in: 403, no session.
    let reply = rig
        .client
        .post(rig.url("/_proxy/ui/sign-in"))
        .header(ORIGIN, "https://evil.example")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("key={KEY}"))
        .send()
        .await
        .expect("answered");
    assert_eq!(reply.status(), 403);
    assert!(reply.headers().get(SET_COOKIE).is_none());
    // Not a form: 415; a huge form: 413; neither shows the key.
    let reply = rig
        .client
        .post(rig.url("/_proxy/ui/sign-in"))
        .header(CONTENT_TYPE, "application/json")
        .body(format!("{{\"key\":\"{KEY}\"}}"))
        .send()
        .await
        .expect("answered");
    assert_eq!(reply.status(), 415);
    let huge = format!("key={KEY}&pad={}", "x".repeat(64 * 1024));
    let reply = sign_in(&rig, &huge, None).await;
    assert_eq!(reply.status(), 413);
    assert!(reply.headers().get(SET_COOKIE).is_none());
    let body = reply.text().await.expect("a page");
    assert!(!body.contains(KEY));
    // A sign-in never sends the browser out of the console.
    for next in [
        "https://evil.example/",
        "//evil.example/",
        "_proxy/ui/../../metrics",
        "_proxy/ui/sign-in",
        "_mock/ui/",
    ] {
        let encoded: String = url::form_urlencoded::byte_serialize(next.as_bytes()).collect();
        let reply = sign_in(&rig, &format!("key={KEY}&next={encoded}"), None).await;
        assert_eq!(reply.status(), 303);
        assert_eq!(reply.headers()[LOCATION], "../../_proxy/ui/", "{next}");
    }
    // Sign-out from another site: 403, the session stays.
    let cookie = cookie_of(&sign_in(&rig, &format!("key={KEY}"), None).await);
    let reply = rig
        .client
        .post(rig.url("/_proxy/ui/sign-out"))
        .header(COOKIE, &cookie)
        .header(ORIGIN, "http://evil.example")
        .send()
        .await
        .expect("answered");
    assert_eq!(reply.status(), 403);
    let (status, ..) = get(&rig, "/_proxy/ui/", &[(COOKIE.as_str(), &cookie)]).await;
    assert_eq!(status, 200, "a cross-site sign-out changes nothing");
}

#[tokio::test]
async fn bad_admin_keys_keep_the_proxy_from_starting_without_showing_them() {
    let upstream = "http://127.0.0.1:9".parse().expect("a URL");
    let huge = "k".repeat(2000);
    let cases: [(Vec<&str>, &str); 4] = [
        (vec![""], "admin key #1"),
        (vec!["adm_ok", "has space"], "admin key #2"),
        (
            vec!["adm_same", "adm_other", "adm_same"],
            "admin keys #1 and #3",
        ),
        (vec![&huge], "admin key #1"),
    ];
    for (keys, named) in cases {
        let mut config = ProxyConfig::new(url::Url::clone(&upstream));
        // As given, unchecked: starting checks them.
        config.admin_keys = keys.iter().map(|k| AdminKey::new(*k)).collect();
        let error = payments_contract_proxy::Proxy::start(config)
            .await
            .expect_err("refused")
            .to_string();
        assert!(error.contains(named), "{error}");
        for key in keys.iter().filter(|k| !k.is_empty()) {
            assert!(!error.contains(key), "{error}");
        }
    }
    let mut config = ProxyConfig::new(upstream);
    config.session_lifetime = std::time::Duration::ZERO;
    let error = payments_contract_proxy::Proxy::start(config)
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("session lifetime"), "{error}");
    // Debug never shows a key.
    let mut config = ProxyConfig::new("http://127.0.0.1:9".parse().expect("a URL"));
    config.admin_keys = vec![AdminKey::new(KEY)];
    assert!(!format!("{config:?}").contains(KEY));
}

#[tokio::test]
async fn the_console_pages_keep_the_origin_their_forms_are_checked_by() {
    // With `Referrer-Policy: no-referrer` a browser posts `Origin: null`,
    // and the sign-in would refuse its own form as another site's (found
    // in Chromium); `form-action 'self'` keeps the forms at home.
    let rig = guarded().await;
    let bearer = format!("Bearer {KEY}");
    for (path, headers) in [
        ("/_proxy/ui/sign-in", vec![]),
        ("/_proxy/ui/", vec![]),
        (
            "/_proxy/ui/",
            vec![(AUTHORIZATION.as_str(), bearer.as_str())],
        ),
    ] {
        let mut request = rig.client.get(rig.url(path));
        for (name, value) in &headers {
            request = request.header(*name, *value);
        }
        let reply = request.send().await.expect("answered");
        assert_eq!(reply.headers()["referrer-policy"], "same-origin", "{path}");
        let csp = reply.headers()["content-security-policy"]
            .to_str()
            .expect("ASCII");
        assert!(csp.contains("form-action 'self'"), "{path}: {csp}");
    }
}

/// The name given to `--host` is the one the console is announced under:
/// an open proxy's own pages answer it too, and no other name.
#[tokio::test]
async fn an_open_proxy_answers_the_name_it_was_given() {
    let rig = Rig::configured(|config| {
        config.host_name = Some("vm.example".to_owned());
    })
    .await;
    for host in ["vm.example", "VM.example:8080", "127.0.0.1"] {
        let (status, _, _, body) = get(&rig, "/_proxy/report", &[("host", host)]).await;
        assert_eq!(status, 200, "{host}: {body}");
    }
    let (status, _, _, body) = get(&rig, "/_proxy/report", &[("host", "other.example")]).await;
    assert_eq!(status, 403, "{body}");
}
